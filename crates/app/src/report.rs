//! What the CLI prints on stdout: the run outcome (text or one JSON object) and the
//! `runs list` / `runs show` views.

use std::fmt::Write as _;

use domain::model::event::{Event, EventKind, RunUsage};
use domain::model::plan::Plan;
use domain::model::plan_text::render_plan_text;

use crate::safe_text::terminal_safe;
use domain::ports::{RunRecord, RunStatus};
use domain::RunOutcome;
use serde_json::{json, Value};

fn usage_json(u: &RunUsage) -> Value {
    json!({
        "llm_calls": u.llm_calls,
        "prompt_tokens": u.prompt_tokens,
        "completion_tokens": u.completion_tokens,
        "cached_prompt_tokens": u.cached_prompt_tokens,
    })
}

/// `n` with a comma between groups of three digits (`12,345`).
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The usage line of `runs show` and of the live view's end: `7 LLM calls, 12,345 prompt
/// (9,876 cached) + 678 completion tokens`; the cached part only when there is one.
pub fn usage_text(u: &RunUsage) -> String {
    let calls = if u.llm_calls == 1 { "call" } else { "calls" };
    let cached = if u.cached_prompt_tokens > 0 {
        format!(" ({} cached)", grouped(u.cached_prompt_tokens))
    } else {
        String::new()
    };
    format!(
        "{} LLM {calls}, {} prompt{cached} + {} completion tokens",
        grouped(u.llm_calls),
        grouped(u.prompt_tokens),
        grouped(u.completion_tokens)
    )
}

fn plan_json(plan: &Plan) -> Value {
    json!({
        "id": plan.id,
        "title": plan.title,
        "steps": plan.steps().iter().map(|s| json!({
            "id": s.id,
            "description": s.description,
            "kind": s.kind,
            "status": s.status(),
            "result": s.result,
            "error": s.error,
        })).collect::<Vec<_>>(),
    })
}

/// The one JSON object `run --json` prints.
pub fn outcome_json(outcome: &RunOutcome, workspace: &str) -> Value {
    json!({
        "run_id": outcome.run_id,
        "status": outcome.status,
        "summary": outcome.summary,
        "error": outcome.error,
        "workspace": workspace,
        "plan": plan_json(&outcome.plan),
        "usage": usage_json(&outcome.usage),
        // Seen in the workspace: created, changed, deleted, moved, restored (docs/security.md).
        "files": outcome.files,
    })
}

/// `run` without `--json`: the summary, and the reason when the run failed.
pub fn outcome_text(outcome: &RunOutcome) -> String {
    let mut s = outcome.summary.trim_end().to_string();
    s.push('\n');
    if outcome.status == RunStatus::Failed {
        if let Some(e) = &outcome.error {
            let _ = writeln!(s, "\nRun failed: {e}");
        }
    }
    terminal_safe(&s).into_owned()
}

pub fn runs_list_json(runs: &[RunRecord]) -> Value {
    Value::Array(
        runs.iter()
            .map(|r| {
                json!({
                    "run_id": r.run_id,
                    "status": shown_status(r),
                    "task": r.task,
                    "created_at": r.created_at.to_rfc3339(),
                })
            })
            .collect(),
    )
}

pub fn runs_list_text(runs: &[RunRecord]) -> String {
    if runs.is_empty() {
        return "No runs yet.\n".to_string();
    }
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<34} {:<10} {:<20} TASK",
        "RUN ID", "STATUS", "CREATED"
    );
    for r in runs {
        let _ = writeln!(
            s,
            "{:<34} {:<10} {:<20} {}",
            r.run_id,
            shown_status(r),
            r.created_at.format("%Y-%m-%d %H:%M:%S"),
            domain::prompts::truncate_chars(&r.task.replace('\n', " "), 80)
        );
    }
    terminal_safe(&s).into_owned()
}

/// Tool calls of a run, paired by call id, in order.
fn tool_calls(events: &[Event]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for e in events {
        match &e.kind {
            EventKind::ToolCalling {
                step_id,
                call_id,
                tool,
                arguments,
                ..
            } => out.push(json!({
                "step_id": step_id,
                "call_id": call_id,
                "tool": tool,
                "arguments": arguments,
                "ok": null,
                "output": null,
            })),
            EventKind::ToolCalled {
                call_id,
                ok,
                output,
                ..
            } => {
                if let Some(v) = out
                    .iter_mut()
                    .rev()
                    .find(|v| v["call_id"] == json!(call_id))
                {
                    v["ok"] = json!(ok);
                    v["output"] = json!(output);
                }
            }
            _ => {}
        }
    }
    out
}

pub fn run_show_json(run: &RunRecord, plan: Option<&Plan>, events: &[Event]) -> Value {
    json!({
        "run_id": run.run_id,
        "status": shown_status(run),
        "task": run.task,
        "mode": run.mode,
        "workspace": run.workspace,
        "created_at": run.created_at.to_rfc3339(),
        "finished_at": run.finished_at.map(|t| t.to_rfc3339()),
        "summary": run.summary,
        "error": run.error,
        "usage": usage_json(&run.usage),
        "plan": plan.map(plan_json),
        "tool_calls": tool_calls(events),
        "events": events.len(),
    })
}

pub fn run_show_text(run: &RunRecord, plan: Option<&Plan>, events: &[Event]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "Run:       {}", run.run_id);
    let _ = writeln!(s, "Task:      {}", run.task);
    let _ = writeln!(s, "Status:    {}", shown_status(run));
    let _ = writeln!(s, "Mode:      {}", run.mode);
    let _ = writeln!(s, "Workspace: {}", run.workspace);
    let _ = writeln!(s, "Created:   {}", run.created_at.to_rfc3339());
    if let Some(f) = run.finished_at {
        let _ = writeln!(s, "Finished:  {}", f.to_rfc3339());
    }
    let _ = writeln!(s, "Usage:     {}", usage_text(&run.usage));
    if let Some(e) = &run.error {
        let _ = writeln!(s, "Error:     {e}");
    }
    s.push('\n');
    let calls = tool_calls(events);
    match plan {
        Some(plan) => {
            s.push_str(&render_plan_text(plan));
            s.push('\n');
            for (i, step) in plan.steps().iter().enumerate() {
                let _ = writeln!(
                    s,
                    "Step {i} {} {}",
                    step.status().marker(),
                    step.display_text()
                );
                if let Some(r) = &step.result {
                    let _ = writeln!(s, "  result: {r}");
                }
                if let Some(e) = &step.error {
                    let _ = writeln!(s, "  error:  {e}");
                }
                for c in calls.iter().filter(|c| c["step_id"] == json!(step.id)) {
                    let ok = match c["ok"].as_bool() {
                        Some(true) => "✓",
                        Some(false) => "✗",
                        None => "?",
                    };
                    let _ = writeln!(
                        s,
                        "  {ok} {} {}",
                        c["tool"].as_str().unwrap_or(""),
                        domain::prompts::truncate_chars(c["arguments"].as_str().unwrap_or(""), 160)
                    );
                }
            }
        }
        None => s.push_str("(no plan was stored)\n"),
    }
    if let Some(summary) = &run.summary {
        let _ = writeln!(s, "\nSummary:\n{summary}");
    }
    terminal_safe(&s).into_owned()
}

/// One line per event for `runs events`: sequence, time, type and the rest on one line.
pub fn event_line(e: &Event) -> String {
    let mut v = serde_json::to_value(e).unwrap_or(Value::Null);
    if let Some(o) = v.as_object_mut() {
        for k in ["run_id", "seq", "at", "type"] {
            o.remove(k);
        }
        // Full LLM responses are for resuming, not for reading.
        o.remove("response");
    }
    format!(
        "{:>5} {} {:<16} {}\n",
        e.seq,
        e.at.format("%H:%M:%S%.3f"),
        e.kind.name(),
        domain::prompts::truncate_chars(&v.to_string(), 200)
    )
}

/// A run's status as users see it: a `running`/`waiting` run nobody holds (its lease expired,
/// or its owner is provably gone) was interrupted, and can be resumed.
pub fn shown_status(run: &RunRecord) -> &'static str {
    let live = matches!(run.status, RunStatus::Running | RunStatus::Waiting);
    if live && holder(run).is_none() {
        "interrupted"
    } else {
        run.status.as_str()
    }
}

/// The owner of the run's lease, when the lease still holds and its owner may be alive.
pub fn holder(run: &RunRecord) -> Option<&str> {
    run.lease
        .as_ref()
        .filter(|l| l.is_live(chrono::Utc::now()) && !crate::owner::is_gone(&l.owner))
        .map(|l| l.owner.as_str())
}

/// The owner of the run's lease when it is provably gone (this host, process ended): its
/// lease may be taken over before it expires.
pub fn stale_owner(run: &RunRecord) -> Option<String> {
    run.lease
        .as_ref()
        .filter(|l| crate::owner::is_gone(&l.owner))
        .map(|l| l.owner.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_text_groups_digits_and_shows_cached_tokens_only_when_there_are_some() {
        let mut u = RunUsage {
            llm_calls: 7,
            prompt_tokens: 12_345,
            completion_tokens: 678,
            cached_prompt_tokens: 9_876,
        };
        assert_eq!(
            usage_text(&u),
            "7 LLM calls, 12,345 prompt (9,876 cached) + 678 completion tokens"
        );
        u.cached_prompt_tokens = 0;
        u.llm_calls = 1;
        u.prompt_tokens = 1_000_000;
        assert_eq!(
            usage_text(&u),
            "1 LLM call, 1,000,000 prompt + 678 completion tokens"
        );
        assert_eq!(
            usage_text(&RunUsage::default()),
            "0 LLM calls, 0 prompt + 0 completion tokens"
        );
        assert_eq!(grouped(100), "100");
        assert_eq!(grouped(1_000), "1,000");
        assert_eq!(grouped(u64::MAX), "18,446,744,073,709,551,615");
    }

    #[test]
    fn the_json_usage_object_carries_cached_tokens() {
        let u = RunUsage {
            llm_calls: 2,
            prompt_tokens: 30,
            completion_tokens: 4,
            cached_prompt_tokens: 16,
        };
        assert_eq!(
            usage_json(&u),
            json!({"llm_calls": 2, "prompt_tokens": 30, "completion_tokens": 4, "cached_prompt_tokens": 16})
        );
    }
}
