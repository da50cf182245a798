//! What the CLI prints on stdout: the run outcome and the `runs list` / `runs show` views as
//! text (their JSON shapes are the runner's, `runner::json`).

use std::fmt::Write as _;

use domain::model::event::{Event, RunUsage};
use domain::model::plan::Plan;
use domain::model::plan_text::render_plan_text;
use runner::json::tool_calls;
use runner::liveness::Liveness;

use crate::safe_text::terminal_safe;
use domain::ports::{RunRecord, RunStatus};
use domain::RunOutcome;
use serde_json::{json, Value};

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
            Liveness::of(r).shown(),
            r.created_at.format("%Y-%m-%d %H:%M:%S"),
            domain::prompts::truncate_chars(&r.task.replace('\n', " "), 80)
        );
    }
    terminal_safe(&s).into_owned()
}

pub fn run_show_text(run: &RunRecord, plan: Option<&Plan>, events: &[Event]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "Run:       {}", run.run_id);
    let _ = writeln!(s, "Task:      {}", run.task);
    let _ = writeln!(s, "Status:    {}", Liveness::of(run).shown());
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
}
