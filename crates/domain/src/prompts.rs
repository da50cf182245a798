//! Every prompt Planwright sends, in one place. Each is snapshot-tested: a change to a prompt
//! shows up as a snapshot diff in review.

use std::fmt::Write;

use crate::plan::{Plan, Step};
use crate::plan_text::render_plan_text;

/// An executor as the planner sees it: the tag it serves and what it is good at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecutorCard {
    pub kind: String,
    pub description: String,
}

/// System prompt of the flow planner (seed 000), listing executors when there are several.
pub fn planner_system(executors: &[ExecutorCard]) -> String {
    let mut s = String::from(
        "You are a planning assistant. Create a concise, actionable plan with clear steps.\n\
         Focus on key milestones rather than detailed sub-steps.\n\
         Optimize for clarity and efficiency.\n\n\
         Call the `planning` tool once with command `create`, a short `title` and the list of \
         `steps`. Each step must be something an agent can do with tools (shell commands, \
         reading and writing files) and check on its own. Do not add steps that only restate \
         the task.",
    );
    if executors.len() > 1 {
        s.push_str("\n\nThese agents carry out steps; start each step with the tag of the agent best suited to it:\n");
        for e in executors {
            let _ = writeln!(s, "- [{}] {}", e.kind, e.description);
        }
        s.push_str("Example step: `[");
        s.push_str(&executors[0].kind);
        s.push_str("] ...`.");
    }
    s
}

pub fn planner_user(task: &str) -> String {
    format!("Create a reasonable plan with clear steps to accomplish the task: {task}")
}

/// Sent back to the planner when its `planning` call did not produce a plan.
pub fn planner_retry(error: &str) -> String {
    format!(
        "The plan was not created: {error}\nCall the `planning` tool again with command `create`, \
         a `title` and a non-empty list of `steps`."
    )
}

/// Title of the default plan used when the planner fails (seed 000, section 2.3).
pub fn default_plan_title(task: &str) -> String {
    let head: String = task.chars().take(50).collect();
    let ellipsis = if task.chars().count() > 50 { "..." } else { "" };
    format!("Plan for: {head}{ellipsis}")
}

pub fn default_plan_steps() -> Vec<String> {
    vec![
        "Analyze request".to_string(),
        "Execute task".to_string(),
        "Verify results".to_string(),
    ]
}

/// System prompt of an executor agent.
pub fn executor_system(agent_name: &str, agent_description: &str) -> String {
    format!(
        "You are {agent_name}, an execution agent of Planwright. {agent_description}\n\n\
         You carry out ONE step of a larger plan at a time, using the tools you are given.\n\
         Your working directory is the run's workspace folder. Use paths relative to it; \
         files outside it cannot be reached.\n\n\
         Rules:\n\
         - Act with tools; do not just describe what you would do.\n\
         - Check the outcome of what you did before you finish (read the file, look at the output).\n\
         - When the step is done, call `complete_step` with success=true and a `result` that \
         states what you did and what later steps need to know (file names, values, findings).\n\
         - If the step cannot be done, call `complete_step` with success=false and say why in `result`.\n\
         - Only call `complete_step` for the current step; later steps are handled separately."
    )
}

/// The per-step prompt (seed 002's `_execute_step`), with the results the step builds on.
pub fn step_prompt(
    task: &str,
    plan: &Plan,
    index: usize,
    step: &Step,
    prior_results: &[(usize, &Step)],
) -> String {
    let mut s = format!(
        "THE TASK:\n{task}\n\nCURRENT PLAN STATUS:\n{}\n",
        render_plan_text(plan)
    );
    if !prior_results.is_empty() {
        s.push_str("RESULTS OF EARLIER STEPS:\n");
        for (i, st) in prior_results {
            let result = st.result.as_deref().or(st.error.as_deref()).unwrap_or("");
            let _ = writeln!(
                s,
                "Step {i} ({}): {}",
                st.status,
                truncate_chars(result, 600)
            );
        }
        s.push('\n');
    }
    let _ = write!(
        s,
        "YOUR CURRENT TASK:\nYou are now working on step {index}: \"{}\"\n\n\
         Please execute this step using the appropriate tools. When you're done, call \
         `complete_step` with success and a summary of what you accomplished.",
        step.display_text()
    );
    s
}

/// Sent when the model answered without any tool call.
pub fn nudge_use_tools() -> String {
    "You did not call any tool. Continue the current step with the tools, or call \
     `complete_step` (success=true with the result, or success=false with the reason) if it \
     is finished."
        .to_string()
}

pub fn summary_system() -> String {
    "You are a planning assistant. Your task is to summarize the completed plan.".to_string()
}

/// Asks for the final summary; sees the plan and every step's result.
pub fn summary_user(task: &str, plan: &Plan) -> String {
    let mut s = format!(
        "The task was: {task}\n\nThe plan has finished. Here is the final plan status:\n\n{}\n",
        render_plan_text(plan)
    );
    s.push_str("Step results:\n");
    for (i, st) in plan.steps.iter().enumerate() {
        let text = st
            .result
            .as_deref()
            .or(st.error.as_deref())
            .unwrap_or("(no result)");
        let _ = writeln!(
            s,
            "{i}. [{}] {}: {}",
            st.status,
            st.description,
            truncate_chars(text, 1200)
        );
    }
    s.push_str(
        "\nPlease provide a summary of what was accomplished and the final answer to the task. \
         If some steps failed, say what is missing and why. Mention any files produced.",
    );
    s
}

/// The last-resort summary when no LLM could write one: the plan and the step results.
pub fn plain_report(task: &str, plan: &Plan, why: &str) -> String {
    let mut s = format!(
        "Task: {task}\n(No LLM summary: {why})\n\n{}",
        render_plan_text(plan)
    );
    s.push_str("\nResults:\n");
    for (i, st) in plan.steps.iter().enumerate() {
        let text = st
            .result
            .as_deref()
            .or(st.error.as_deref())
            .unwrap_or("(no result)");
        let _ = writeln!(s, "{i}. {}: {}", st.description, truncate_chars(text, 600));
    }
    s
}

/// Cuts `s` to at most `max` characters, marking the cut.
pub fn truncate_chars(s: &str, max: usize) -> String {
    let count = s.chars().count();
    if count <= max {
        return s.to_string();
    }
    let head: String = s.chars().take(max).collect();
    format!("{head}… [{} more characters cut]", count - max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::StepStatus;

    fn plan() -> Plan {
        let texts: Vec<String> = ["Create notes.txt", "[CODE] Count its lines", "Report"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let mut p = Plan::from_texts("plan_1", "Notes", "make notes", &texts).expect("valid plan");
        p.transition("s1", StepStatus::InProgress).expect("legal");
        p.transition("s1", StepStatus::Completed).expect("legal");
        p.steps[0].result = Some("Wrote notes.txt with 3 lines.".into());
        p.transition("s2", StepStatus::InProgress).expect("legal");
        p
    }

    #[test]
    fn planner_system_single_executor() {
        insta::assert_snapshot!(planner_system(&[]));
    }

    #[test]
    fn planner_system_lists_executors() {
        insta::assert_snapshot!(planner_system(&[
            ExecutorCard {
                kind: "CODE".into(),
                description: "writes and runs code".into()
            },
            ExecutorCard {
                kind: "SEARCH".into(),
                description: "finds information".into()
            },
        ]));
    }

    #[test]
    fn planner_user_and_retry() {
        insta::assert_snapshot!(format!(
            "{}\n---\n{}",
            planner_user("count lines"),
            planner_retry("no steps")
        ));
    }

    #[test]
    fn default_plan() {
        let long = "x".repeat(60);
        insta::assert_snapshot!(format!(
            "{}\n{}\n{:?}",
            default_plan_title("short task"),
            default_plan_title(&long),
            default_plan_steps()
        ));
    }

    #[test]
    fn executor_system_prompt() {
        insta::assert_snapshot!(executor_system("general", "A general-purpose agent."));
    }

    #[test]
    fn step_prompt_with_prior_results() {
        let p = plan();
        insta::assert_snapshot!(step_prompt(
            "make notes",
            &p,
            1,
            &p.steps[1],
            &[(0, &p.steps[0])]
        ));
    }

    #[test]
    fn nudge() {
        insta::assert_snapshot!(nudge_use_tools());
    }

    #[test]
    fn summary_prompts() {
        insta::assert_snapshot!(format!(
            "{}\n---\n{}",
            summary_system(),
            summary_user("make notes", &plan())
        ));
    }

    #[test]
    fn plain_report_snapshot() {
        insta::assert_snapshot!(plain_report("make notes", &plan(), "summary call failed"));
    }

    #[test]
    fn truncation_marks_the_cut() {
        assert_eq!(truncate_chars("héllo", 10), "héllo");
        assert_eq!(truncate_chars("héllo", 2), "hé… [3 more characters cut]");
    }
}
