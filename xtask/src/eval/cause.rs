//! Why a task failed, named from what the run left behind (docs/eval.md lists the causes).

use super::judge::Judgement;
use super::outcome::Observed;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cause {
    /// A seeded file the task did not ask to change was changed or deleted (whatever the
    /// checker says of the output).
    ChangedInput,
    /// Killed at the time limit.
    Time,
    /// No outcome at all: planwright could not start or stopped with a usage error.
    Setup,
    /// The run completed but the checker found the work wrong or missing.
    WrongAnswer,
    /// The planner made no usable plan (the default plan was used).
    Planner,
    /// An LLM call failed (server error, invalid response).
    ModelError,
    /// The executor went round in circles: stuck-loop detection or the turn limit.
    Loop,
    /// Tool calls failed (bad arguments, failing commands) and the step never recovered.
    ToolArguments,
    /// The executor reported the step failed without a failing tool call.
    GaveUp,
}

impl Cause {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Cause::ChangedInput => "changed an input",
            Cause::Time => "time",
            Cause::Setup => "setup",
            Cause::WrongAnswer => "wrong answer",
            Cause::Planner => "planner",
            Cause::ModelError => "model error",
            Cause::Loop => "loop",
            Cause::ToolArguments => "tool arguments",
            Cause::GaveUp => "gave up",
        }
    }
}

/// Cuts `text` to one line of at most `max` characters.
pub(crate) fn clip(text: &str, max: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() > max {
        format!("{}…", line.chars().take(max).collect::<String>())
    } else {
        line
    }
}

/// The cause of a failed task and its evidence; `None` when the task passed. A changed
/// input comes first: it fails the task however the run ended.
pub(crate) fn of(obs: &Observed, judgement: &Judgement) -> Option<(Cause, String)> {
    let why = judgement.verdict.as_ref().err()?;
    if judgement.changed_inputs.is_empty() {
        Some(diagnose(obs, why))
    } else {
        Some((Cause::ChangedInput, why.clone()))
    }
}

/// The cause of a failed task and the evidence for it. `checker` is the checker's reason.
pub(crate) fn diagnose(obs: &Observed, checker: &str) -> (Cause, String) {
    if obs.killed {
        let last = obs
            .events
            .iter()
            .rev()
            .find_map(|e| e["type"].as_str())
            .unwrap_or("no event");
        let steps = obs.events_of("step_completed").count();
        let calls = obs.events_of("llm_called").count();
        let per_call = if calls > 0 {
            format!(", {:.0} s each on average", obs.llm_secs() / calls as f64)
        } else {
            String::new()
        };
        return (
            Cause::Time,
            format!(
                "killed at the time limit; {steps} step(s) completed, {calls} LLM call(s)\
                 {per_call}, last event {last}"
            ),
        );
    }
    let Some(outcome) = obs.outcome.as_ref() else {
        return (
            Cause::Setup,
            format!(
                "exit code {}, no JSON outcome: {}",
                obs.exit_code.map_or("none".to_string(), |c| c.to_string()),
                clip(&obs.stderr_tail, 160)
            ),
        );
    };
    if outcome["status"] == "completed" {
        return (Cause::WrongAnswer, checker.to_string());
    }
    if let Some(e) = obs
        .events_of("plan_created")
        .find(|e| e["source"] == "default")
    {
        return (
            Cause::Planner,
            format!(
                "default plan used: {}",
                clip(e["reason"].as_str().unwrap_or("no reason given"), 140)
            ),
        );
    }
    if obs.events_of("llm_called").any(|e| e["ok"] == false) {
        let message = obs
            .events_of("error")
            .filter_map(|e| e["message"].as_str())
            .last()
            .unwrap_or("an LLM call failed");
        return (Cause::ModelError, clip(message, 160));
    }
    // The first step that ended failed or blocked, and its reason.
    let failed = obs
        .events_of("step_failed")
        .find(|e| e["status"] == "failed")
        .or_else(|| obs.events_of("step_failed").next());
    let step_id = failed.and_then(|e| e["step_id"].as_str()).unwrap_or("");
    let error = failed
        .and_then(|e| e["error"].as_str())
        .or_else(|| outcome["error"].as_str())
        .unwrap_or("the run failed")
        .to_string();
    let lower = error.to_lowercase();
    if lower.contains("turn limit") || lower.contains("stuck") || lower.contains("loop") {
        return (Cause::Loop, format!("{step_id}: {}", clip(&error, 150)));
    }
    let tool_failure = obs
        .events_of("tool_called")
        .filter(|e| e["ok"] == false)
        .filter(|e| step_id.is_empty() || e["step_id"].as_str() == Some(step_id))
        .last();
    if let Some(t) = tool_failure {
        return (
            Cause::ToolArguments,
            format!(
                "{step_id}: {} failed: {} (step: {})",
                t["tool"].as_str().unwrap_or("a tool"),
                clip(t["output"].as_str().unwrap_or(""), 90),
                clip(&error, 70)
            ),
        );
    }
    (Cause::GaveUp, format!("{step_id}: {}", clip(&error, 150)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn failed_run(events: Vec<Value>) -> Observed {
        Observed {
            exit_code: Some(1),
            outcome: Some(json!({"status": "failed", "error": "step s2 failed"})),
            events,
            ..Observed::default()
        }
    }

    #[test]
    fn a_changed_input_is_the_cause_whatever_the_run_did() {
        let judgement = |verdict: Result<(), String>, changed: &[&str]| Judgement {
            verdict,
            changed_inputs: changed.iter().map(|s| s.to_string()).collect(),
            missing_outputs: Vec::new(),
        };
        let killed = Observed {
            killed: true,
            ..Observed::default()
        };
        let why = "names.txt (deleted) (the checker alone passed)";
        assert_eq!(
            of(
                &killed,
                &judgement(Err(why.into()), &["names.txt (deleted)"])
            ),
            Some((Cause::ChangedInput, why.to_string()))
        );
        assert_eq!(
            of(&killed, &judgement(Err("out.txt is missing".into()), &[])).map(|c| c.0),
            Some(Cause::Time)
        );
        assert_eq!(of(&killed, &judgement(Ok(()), &[])), None);
    }

    #[test]
    fn a_killed_run_is_time() {
        let obs = Observed {
            killed: true,
            events: vec![
                json!({"type": "step_completed"}),
                json!({"type": "llm_called"}),
            ],
            ..Observed::default()
        };
        let (cause, why) = diagnose(&obs, "x");
        assert_eq!(cause, Cause::Time);
        assert!(
            why.contains("1 step(s)") && why.contains("llm_called"),
            "{why}"
        );
    }

    #[test]
    fn no_outcome_is_setup_with_stderr() {
        let obs = Observed {
            exit_code: Some(2),
            stderr_tail: "error: no LLM endpoint configured".into(),
            ..Observed::default()
        };
        let (cause, why) = diagnose(&obs, "x");
        assert_eq!(cause, Cause::Setup);
        assert!(
            why.contains("exit code 2") && why.contains("no LLM endpoint"),
            "{why}"
        );
    }

    #[test]
    fn a_completed_run_with_wrong_files_is_a_wrong_answer() {
        let obs = Observed {
            exit_code: Some(0),
            outcome: Some(json!({"status": "completed"})),
            ..Observed::default()
        };
        assert_eq!(
            diagnose(&obs, "sum.txt holds \"10\""),
            (Cause::WrongAnswer, "sum.txt holds \"10\"".to_string())
        );
    }

    #[test]
    fn the_default_plan_is_the_planner() {
        let obs = failed_run(vec![
            json!({"type": "plan_created", "source": "default", "reason": "no planning call"}),
            json!({"type": "tool_called", "ok": false, "tool": "shell_exec", "output": "x"}),
        ]);
        let (cause, why) = diagnose(&obs, "");
        assert_eq!(cause, Cause::Planner);
        assert!(why.contains("no planning call"), "{why}");
    }

    #[test]
    fn a_failed_llm_call_is_a_model_error() {
        let obs = failed_run(vec![
            json!({"type": "plan_created", "source": "llm"}),
            json!({"type": "llm_called", "ok": false}),
            json!({"type": "error", "message": "server answered 500"}),
        ]);
        assert_eq!(
            diagnose(&obs, ""),
            (Cause::ModelError, "server answered 500".to_string())
        );
    }

    #[test]
    fn turn_limits_and_stuck_steps_are_loops() {
        for error in [
            "turn limit of 20 reached without complete_step",
            "stuck in a loop: the same call 3 times",
        ] {
            let obs = failed_run(vec![
                json!({"type": "tool_called", "ok": false, "step_id": "s1", "tool": "shell_exec", "output": "x"}),
                json!({"type": "step_failed", "step_id": "s1", "status": "failed", "error": error}),
            ]);
            let (cause, why) = diagnose(&obs, "");
            assert_eq!(cause, Cause::Loop, "{error}");
            assert!(why.starts_with("s1: "), "{why}");
        }
    }

    #[test]
    fn a_failing_tool_in_the_failed_step_is_tool_arguments() {
        let obs = failed_run(vec![
            json!({"type": "tool_called", "ok": false, "step_id": "s1", "tool": "file_read", "output": "other step"}),
            json!({"type": "tool_called", "ok": false, "step_id": "s2", "tool": "shell_exec",
                   "output": "Error: missing field `command`"}),
            json!({"type": "step_failed", "step_id": "s2", "status": "failed", "error": "could not run it"}),
        ]);
        let (cause, why) = diagnose(&obs, "");
        assert_eq!(cause, Cause::ToolArguments);
        assert!(
            why.contains("shell_exec failed: Error: missing field"),
            "{why}"
        );
    }

    #[test]
    fn a_step_failed_with_no_failing_tool_is_giving_up() {
        let obs = failed_run(vec![
            json!({"type": "step_failed", "step_id": "s1", "status": "failed", "error": "cannot do this"}),
        ]);
        assert_eq!(
            diagnose(&obs, ""),
            (Cause::GaveUp, "s1: cannot do this".to_string())
        );
    }
}
