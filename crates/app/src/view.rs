//! The live view on stderr: the plan with its markers, redrawn as steps move, and one line
//! per tool call; on a terminal the current plan stays at the bottom, redrawn in place
//! (`panel.rs`). This module, `panel` and `report` are the CLI's output layer.

use std::io::Write;
use std::sync::Mutex;

use domain::model::event::{Event, EventKind, PlanSource};
use domain::model::plan::{Plan, StepStatus};
use domain::model::plan_text::render_plan_digest;
use domain::model::verification::CheckVerdict;
use domain::ports::EventSink;
use domain::prompts::truncate_chars;

use crate::panel::PlanPanel;
use crate::safe_text::terminal_safe;

/// Writes a human-readable account of a run to stderr.
#[derive(Debug, Default)]
pub struct ConsoleView {
    plan: Mutex<Option<Plan>>,
    /// Where shell commands run, said when the run starts or resumes.
    sandbox: Option<&'static str>,
    /// The plan kept at the bottom of a terminal; `None` when stderr is not one.
    panel: Option<Mutex<PlanPanel>>,
}

impl ConsoleView {
    pub fn new() -> ConsoleView {
        ConsoleView::default().on_terminal()
    }

    /// Redraws the plan in place when stderr is a terminal.
    fn on_terminal(mut self) -> ConsoleView {
        self.panel = crate::panel::live_terminal().map(|w| Mutex::new(PlanPanel::new(w)));
        self
    }

    /// The view of a resumed run, which starts from the stored `plan` (a resumed run
    /// announces no plan of its own until it changes one).
    pub fn resuming(plan: Plan) -> ConsoleView {
        ConsoleView {
            plan: Mutex::new(Some(plan)),
            sandbox: None,
            panel: None,
        }
        .on_terminal()
    }

    /// Says at the start that shell commands run in `sandbox` (`none`, `bwrap`).
    pub fn with_sandbox(mut self, sandbox: &'static str) -> ConsoleView {
        self.sandbox = Some(sandbox);
        self
    }

    /// The settings line under the run's first line, if any.
    fn settings(&self) -> String {
        self.sandbox
            .map(|s| {
                format!(
                    "  sandbox: {s}
"
                )
            })
            .unwrap_or_default()
    }

    fn with_plan(&self, f: impl FnOnce(&mut Plan)) -> Option<Plan> {
        let mut guard = self.plan.lock().ok()?;
        let plan = guard.as_mut()?;
        f(plan);
        Some(plan.clone())
    }

    fn set_status(&self, step_id: &str, status: StepStatus) -> Option<(usize, String)> {
        // The view follows the event log through the same state machine as the run. Not every
        // move has an event of its own (a retry's reset, a step started by a process whose
        // events this view did not see), so it takes the shortest legal path to `status`.
        let plan = self.with_plan(|p| {
            let Some(from) = p.step(step_id).map(|s| s.status()) else {
                return;
            };
            for next in legal_path(from, status) {
                if p.transition(step_id, next).is_err() {
                    break;
                }
            }
        })?;
        let i = plan.index_of(step_id)?;
        Some((i, plan.steps()[i].display_text()))
    }

    fn render(&self, event: &Event) -> String {
        match &event.kind {
            EventKind::RunStarted {
                task,
                workspace,
                mode,
                ..
            } => format!(
                "▶ run {} ({mode}): {task}\n  workspace: {workspace}\n{}",
                event.run_id,
                self.settings()
            ),
            EventKind::PlanCreated {
                plan,
                source,
                reason,
            } => {
                if let Ok(mut g) = self.plan.lock() {
                    *g = Some(plan.clone());
                }
                let origin = match (source, reason) {
                    (PlanSource::Default, Some(r)) => format!(" (default plan: {r})"),
                    (PlanSource::Default, None) => " (default plan)".to_string(),
                    (PlanSource::Llm, _) => String::new(),
                    (PlanSource::Task, _) => " (direct: the task is the one step)".to_string(),
                };
                format!(
                    "\nPlan: {}{origin}\n{}\n",
                    plan.title,
                    indent(&render_plan_digest(plan))
                )
            }
            EventKind::PlanUpdated { plan, reason } => {
                if let Ok(mut g) = self.plan.lock() {
                    *g = Some(plan.clone());
                }
                format!(
                    "\nPlan updated ({reason}):\n{}\n",
                    indent(&render_plan_digest(plan))
                )
            }
            EventKind::StepStarted {
                step_id,
                index,
                description,
                executor,
                attempt,
            } => {
                self.set_status(step_id, StepStatus::InProgress);
                let retry = if *attempt > 1 {
                    format!(", attempt {attempt}")
                } else {
                    String::new()
                };
                format!(
                    "{} {index}. {description}  ({executor}{retry})\n",
                    StepStatus::InProgress.marker()
                )
            }
            EventKind::ToolCalling {
                tool, arguments, ..
            } => format!("      ↳ {tool} {}\n", one_line(arguments, 120)),
            EventKind::ToolCalled { ok, output, .. } => {
                let mark = if *ok { "✓" } else { "✗" };
                format!("        {mark} {}\n", one_line(output, 120))
            }
            EventKind::StepCompleted { step_id, result } => {
                let (i, text) = self
                    .set_status(step_id, StepStatus::Completed)
                    .unwrap_or((0, step_id.clone()));
                format!(
                    "{} {i}. {text}\n        result: {}\n",
                    StepStatus::Completed.marker(),
                    one_line(result, 200)
                )
            }
            EventKind::StepFailed {
                step_id,
                status,
                error,
                will_retry,
            } => {
                let (i, text) = self
                    .set_status(step_id, *status)
                    .unwrap_or((0, step_id.clone()));
                let retry = if *will_retry { " (will retry)" } else { "" };
                format!(
                    "{} {i}. {text}{retry}\n        {}: {}\n",
                    status.marker(),
                    status,
                    one_line(error, 200)
                )
            }
            EventKind::StepSkipped { step_id, .. } => {
                self.set_status(step_id, StepStatus::Skipped);
                String::new()
            }
            EventKind::ModeChosen {
                mode,
                class,
                by,
                reason,
            } => format!(
                "  auto: {class} task → {mode} ({by}: {})\n",
                one_line(reason, 160)
            ),
            EventKind::StepAdapted {
                step_id,
                action,
                detail,
            } => format!(
                "  ↻ {step_id}: {} — {}\n",
                match action {
                    domain::model::event::AdaptAction::Retry => "retry",
                    domain::model::event::AdaptAction::Fallback => "fallback",
                    domain::model::event::AdaptAction::Replan => "re-plan",
                    domain::model::event::AdaptAction::GiveUp => "give up",
                },
                one_line(detail, 160)
            ),
            EventKind::StepVerified {
                step_id,
                ok,
                reason,
            } => format!(
                "        verifier {} {step_id}: {}\n",
                if *ok { "accepted" } else { "rejected" },
                one_line(reason, 160)
            ),
            EventKind::RunResumed {
                after_seq,
                interrupted_calls,
            } => {
                let calls = if interrupted_calls.is_empty() {
                    String::new()
                } else {
                    format!("; interrupted calls: {}", interrupted_calls.join(", "))
                };
                let plan = self
                    .plan
                    .lock()
                    .ok()
                    .and_then(|g| g.as_ref().map(render_plan_digest))
                    .map(|p| format!("{}\n", indent(&p)))
                    .unwrap_or_default();
                format!(
                    "↻ run {} resumed after event {after_seq}{calls}\n{}{plan}",
                    event.run_id,
                    self.settings()
                )
            }
            EventKind::UserNotified { text, .. } => format!("  ✉ {text}\n"),
            // The terminal channel prints the question itself, as the prompt.
            EventKind::WaitingForUser { .. } => String::new(),
            EventKind::UserReplied { answer, error, .. } => match (answer, error) {
                (Some(a), _) => format!("      user: {}\n", one_line(a, 160)),
                (None, Some(e)) => format!("  ! could not ask the user: {}\n", one_line(e, 160)),
                (None, None) => String::new(),
            },
            // The terminal channel prints the request itself, as the prompt.
            EventKind::ApprovalRequested { .. } => String::new(),
            EventKind::ApprovalDecided {
                tool,
                decision,
                reason,
                ..
            } => match (decision, reason) {
                (_, Some(r)) => format!("      ✗ {tool} refused: {}\n", one_line(r, 160)),
                (domain::model::approval::ApprovalDecision::Deny, None) => {
                    format!("      ✗ {tool} refused by the user\n")
                }
                (domain::model::approval::ApprovalDecision::Always, None) => {
                    format!("      ✓ {tool} approved for the rest of the run\n")
                }
                (domain::model::approval::ApprovalDecision::Approve, None) => {
                    format!("      ✓ {tool} approved\n")
                }
            },
            EventKind::Nudge { reason, .. } => format!("      ⚑ {}\n", one_line(reason, 160)),
            EventKind::Message { text, .. } => format!("      “{}”\n", one_line(text, 160)),
            EventKind::Error { message, .. } => format!("  ! {}\n", one_line(message, 200)),
            EventKind::LlmCalled { .. } => String::new(),
            EventKind::InputsRecorded {
                inputs, truncated, ..
            } => {
                let more = if *truncated {
                    " (and more, unprotected)"
                } else {
                    ""
                };
                if inputs.is_empty() {
                    String::new()
                } else {
                    format!("  ⛨ {} input file(s) protected{more}\n", inputs.len())
                }
            }
            // Not shown live; `runs diff` reads them (docs/checkpoints.md).
            EventKind::CheckpointTaken { .. } => String::new(),
            // The step's prompt shows it; the live view does not repeat it.
            EventKind::WorkspaceShown { .. } => String::new(),
            EventKind::InputProtected { path, action, .. } => {
                format!("      ⛨ {path} is an input: change {}\n", action.as_str())
            }
            EventKind::AnswerChecked {
                verdict, detail, ..
            } => {
                let mark = if *verdict == CheckVerdict::Agree {
                    "✓"
                } else {
                    "?"
                };
                format!("  {mark} check: {detail}\n")
            }
            EventKind::RunCompleted { usage, .. } | EventKind::RunFailed { usage, .. } => {
                let plan = self
                    .plan
                    .lock()
                    .ok()
                    .and_then(|g| g.as_ref().map(render_plan_digest))
                    .unwrap_or_default();
                let verdict = match &event.kind {
                    EventKind::RunFailed { reason, .. } => format!("✗ run failed: {reason}"),
                    _ => "✓ run completed".to_string(),
                };
                format!(
                    "\nFinal plan:\n{}\n{verdict}\n  {}\n",
                    indent(&plan),
                    crate::report::usage_text(usage)
                )
            }
        }
    }
}

impl ConsoleView {
    /// What to write for `event`: its lines, and on a terminal the panel erased before them
    /// and drawn again after them (not while the user is asked something, whose prompt must
    /// stay below, nor after the run's last event).
    fn frame(&self, event: &Event) -> String {
        // What tools and models wrote may hold escape sequences: only the panel's own
        // (added below) reach the terminal.
        let text = terminal_safe(&self.render(event)).into_owned();
        let Some(panel) = &self.panel else {
            return text;
        };
        let Ok(mut panel) = panel.lock() else {
            return text;
        };
        let mut out = panel.erase();
        out.push_str(&text);
        let prompt_follows = matches!(
            event.kind,
            EventKind::WaitingForUser { .. } | EventKind::ApprovalRequested { .. }
        );
        if !prompt_follows && !event.kind.is_final() {
            if let Some(plan) = self.plan.lock().ok().and_then(|g| g.clone()) {
                out.push_str(&panel.draw(&plan));
            }
        }
        out
    }
}

impl EventSink for ConsoleView {
    fn publish(&self, event: &Event) {
        let text = self.frame(event);
        if crate::terminal::get().quiet {
            return;
        }
        if !text.is_empty() {
            let mut err = std::io::stderr().lock();
            let _ = err.write_all(text.as_bytes());
            let _ = err.flush();
        }
    }
}

fn indent(s: &str) -> String {
    s.lines()
        .map(|l| format!("  {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The text on one line, cut to `max` characters.
fn one_line(s: &str, max: usize) -> String {
    let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
    truncate_chars(&flat, max)
}

/// The statuses after `from` on a shortest way to `to` through the step state machine
/// (empty when `to` is `from` or cannot be reached).
fn legal_path(from: StepStatus, to: StepStatus) -> Vec<StepStatus> {
    let mut came_from: Vec<(StepStatus, StepStatus)> = Vec::new();
    let mut frontier = vec![from];
    let mut seen = vec![from];
    while !frontier.is_empty() && !seen.contains(&to) {
        let mut next_frontier = Vec::new();
        for at in frontier {
            for next in StepStatus::ALL {
                if at.can_transition_to(next) && !seen.contains(&next) {
                    seen.push(next);
                    came_from.push((next, at));
                    next_frontier.push(next);
                }
            }
        }
        frontier = next_frontier;
    }
    let mut path = Vec::new();
    let mut at = to;
    while at != from {
        let Some(&(_, prev)) = came_from.iter().find(|(s, _)| *s == at) else {
            return Vec::new();
        };
        path.push(at);
        at = prev;
    }
    path.reverse();
    path
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;

    fn ev(kind: EventKind) -> Event {
        Event {
            run_id: "run_1".into(),
            seq: 1,
            at: Utc::now(),
            kind,
        }
    }

    #[test]
    fn tool_output_reaches_the_terminal_without_its_escape_sequences() {
        let view = ConsoleView::new();
        let out = view.frame(&ev(EventKind::ToolCalling {
            step_id: None,
            call_id: "c1".into(),
            tool: "shell_exec".into(),
            arguments: "{\"command\":\"printf '\\e]0;title\\a'\"}\u{1b}[2J".into(),
            journal_key: None,
        }));
        assert!(!out.contains('\u{1b}'), "{out:?}");
        let out = view.frame(&ev(EventKind::ToolCalled {
            step_id: None,
            call_id: "c1".into(),
            tool: "shell_exec".into(),
            ok: true,
            output: "before\u{1b}]52;c;cm0gLXJmIH4=\u{7}after\u{1b}[2J\u{9b}31m".into(),
            duration_ms: 1,
            journal_key: None,
        }));
        assert_eq!(out, "        ✓ beforeafter\n");
    }

    #[test]
    fn markers_follow_the_steps() {
        let view = ConsoleView::new();
        let plan = Plan::from_texts("p", "Title", "g", &["one".to_string(), "two".to_string()])
            .expect("plan");
        let created = view.render(&ev(EventKind::PlanCreated {
            plan,
            source: PlanSource::Llm,
            reason: None,
        }));
        assert!(created.contains("0. [ ] one"), "{created}");
        let done = view.render(&ev(EventKind::StepCompleted {
            step_id: "s1".into(),
            result: "did\nit".into(),
        }));
        assert!(done.starts_with("[✓] 0. one"), "{done}");
        assert!(done.contains("result: did it"));
        let end = view.render(&ev(EventKind::RunCompleted {
            summary: "s".into(),
            usage: Default::default(),
            verified: false,
        }));
        assert!(end.contains("0. [✓] one"), "{end}");
        assert!(end.contains("1. [ ] two"), "{end}");
    }

    /// A resumed run's view starts from the stored plan: its steps keep their texts, and the
    /// final plan is not empty.
    #[test]
    fn a_resumed_run_shows_its_stored_plan() {
        let plan = Plan::from_texts("p", "Title", "g", &["one".to_string(), "two".to_string()])
            .expect("plan");
        let view = ConsoleView::resuming(plan);
        let resumed = view.render(&ev(EventKind::RunResumed {
            after_seq: 7,
            interrupted_calls: vec![],
        }));
        assert!(resumed.contains("0. [ ] one"), "{resumed}");
        let done = view.render(&ev(EventKind::StepCompleted {
            step_id: "s2".into(),
            result: "did".into(),
        }));
        assert!(done.starts_with("[✓] 1. two"), "{done}");
        let end = view.render(&ev(EventKind::RunCompleted {
            summary: "s".into(),
            usage: Default::default(),
            verified: false,
        }));
        assert!(end.contains("1. [✓] two"), "{end}");
    }

    #[test]
    fn on_a_terminal_the_plan_is_redrawn_in_place_below_the_log() {
        let view = ConsoleView {
            panel: Some(Mutex::new(PlanPanel::new(80))),
            ..ConsoleView::default()
        };
        let plan = Plan::from_texts("p", "Title", "g", &["one".to_string(), "two".to_string()])
            .expect("plan");
        let created = view.frame(&ev(EventKind::PlanCreated {
            plan,
            source: PlanSource::Llm,
            reason: None,
        }));
        assert!(
            created.ends_with("  0. [ ] one\n  1. [ ] two\n"),
            "{created:?}"
        );
        let started = view.frame(&ev(EventKind::StepStarted {
            step_id: "s1".into(),
            index: 0,
            description: "one".into(),
            executor: "general".into(),
            attempt: 1,
        }));
        assert!(
            started.starts_with("\x1b[3A\r\x1b[J[→] 0. one"),
            "{started:?}"
        );
        assert!(
            started.ends_with("  0. [→] one\n  1. [ ] two\n"),
            "{started:?}"
        );
        let asked = view.frame(&ev(EventKind::WaitingForUser {
            step_id: "s1".into(),
            question: "?".into(),
        }));
        assert_eq!(asked, "\x1b[3A\r\x1b[J", "erased, the prompt comes below");
    }
}
