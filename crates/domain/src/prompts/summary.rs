//! The final report: the outcome line, the summary request, and the plain report used when
//! no LLM could write one.

use crate::model::observations::RunFacts;
use crate::model::plan::Plan;
use crate::model::plan_text::render_plan_text;
use crate::model::text::truncate_chars;
use std::fmt::Write;

pub fn summary_system() -> String {
    "You write the final report of an agent's run for the user, strictly from the recorded \
     facts you are given. Never contradict the recorded outcome."
        .to_string()
}

/// The factual first line of every summary, built from the recorded statuses:
/// `Completed: 3 of 3 steps done.` or `Failed: <reason>. 1 of 3 steps done.`
pub fn outcome_line(plan: &Plan, failure: Option<&str>) -> String {
    let c = plan.counts();
    let n = plan.steps().len();
    let done = format!(
        "{} of {n} step{} done",
        c.completed,
        if n == 1 { "" } else { "s" }
    );
    match failure {
        None if c.skipped > 0 => format!("Completed: {done} ({} skipped).", c.skipped),
        None => format!("Completed: {done}."),
        Some(reason) => format!("Failed: {}. {done}.", reason.trim().trim_end_matches('.')),
    }
}

/// Asks for the final summary: the recorded outcome first, then per step its status, the
/// tool calls it made, the files it produced and its result.
pub fn summary_user(
    task: &str,
    plan: &Plan,
    failure: Option<&str>,
    tool_calls: &std::collections::HashMap<String, u32>,
    facts: &RunFacts,
) -> String {
    let mut s = format!("The task was: {task}\n\n");
    match failure {
        Some(reason) => {
            let _ = write!(
                s,
                "OUTCOME: The run FAILED: {reason}. Say so first; do not claim success."
            );
        }
        None => {
            let _ = write!(
                s,
                "OUTCOME: The run COMPLETED: {} of {} steps done.",
                plan.counts().completed,
                plan.steps().len()
            );
        }
    }
    s.push_str("\n\nSteps (status, tool calls made, files produced, result):\n");
    let mut files: Vec<&str> = Vec::new();
    for (i, st) in plan.steps().iter().enumerate() {
        let calls = tool_calls.get(&st.id).copied().unwrap_or(0);
        let _ = write!(
            s,
            "{i}. [{}] {} ({calls} tool call{})",
            st.status(),
            st.display_text(),
            if calls == 1 { "" } else { "s" }
        );
        if !st.attachments.is_empty() {
            let _ = write!(s, "; files: {}", st.attachments.join(", "));
        }
        for f in &st.attachments {
            if !files.contains(&f.as_str()) {
                files.push(f);
            }
        }
        let text = st
            .result
            .as_deref()
            .or(st.error.as_deref())
            .unwrap_or("(no result)");
        let _ = writeln!(s, "\n   {}", truncate_chars(text, 1200));
        for fact in facts.step(&st.id).lines() {
            let _ = writeln!(s, "   {fact}");
        }
    }
    let _ = writeln!(
        s,
        "\nFiles produced: {}",
        if files.is_empty() {
            "none".to_string()
        } else {
            files.join(", ")
        }
    );
    s.push_str(
        "\nWrite a short summary for the user: the outcome first, then what was done and the \
         answer to the task. Credit a step only with what its tool calls and result show (a \
         step with 0 tool calls changed nothing). If the run failed, say what is missing and \
         why. Name the files produced.",
    );
    s
}

/// The summary written from the recorded facts, with no LLM call (docs/direct.md, "The
/// summary"): per step its result and what its tools did.
pub fn facts_report(plan: &Plan, facts: &RunFacts) -> String {
    let mut s = String::new();
    let one = plan.steps().len() == 1;
    for (i, st) in plan.steps().iter().enumerate() {
        let text = st
            .result
            .as_deref()
            .or(st.error.as_deref())
            .unwrap_or("(no result)");
        if one {
            let _ = writeln!(s, "{}", truncate_chars(text.trim(), 1200));
        } else {
            let _ = writeln!(
                s,
                "{i}. [{}] {}: {}",
                st.status(),
                st.display_text(),
                truncate_chars(text.trim(), 600)
            );
        }
        let indent = if one { "- " } else { "   - " };
        for fact in facts.step(&st.id).lines() {
            let _ = writeln!(s, "{indent}{fact}");
        }
    }
    s.trim_end().to_string()
}

/// The last-resort summary when no LLM could write one: the plan and the step results.
pub fn plain_report(task: &str, plan: &Plan, why: &str) -> String {
    let mut s = format!(
        "Task: {task}\n(No LLM summary: {why})\n\n{}",
        render_plan_text(plan)
    );
    s.push_str("\nResults:\n");
    for (i, st) in plan.steps().iter().enumerate() {
        let text = st
            .result
            .as_deref()
            .or(st.error.as_deref())
            .unwrap_or("(no result)");
        let _ = writeln!(s, "{i}. {}: {}", st.description, truncate_chars(text, 600));
    }
    s
}

/// The summary's last line: whether the answer was checked, said plainly
/// (docs/verification.md).
pub fn verification_line(v: &crate::model::verification::Verification) -> String {
    if v.verified {
        format!("Verified: {}.", v.detail.trim_end_matches('.'))
    } else {
        format!(
            "Not verified: {}. Check the result yourself.",
            v.detail.trim_end_matches('.')
        )
    }
}
