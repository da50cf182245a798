//! The flow planner's prompts, its re-asks and the default plan (docs/design.md, "The flow
//! style").

use crate::model::text::truncate_chars;
use std::fmt::Write;

/// An executor as the planner sees it: the tag it serves and what it is good at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecutorCard {
    pub kind: String,
    pub description: String,
}

/// System prompt of the flow planner (docs/design.md, "The flow style"), listing executors when there are several.
pub fn planner_system(executors: &[ExecutorCard]) -> String {
    let mut s = String::from(
        "You are a planning assistant. Turn the task into a short plan.\n\n\
         Call the `planning` tool with command `create`, a short `title` and the `steps`. Use \
         as few steps as the task needs (often 1-3). Each step is one concrete action of THIS \
         task, naming its files and values, that an agent can do with tools (shell commands, \
         reading and writing files) and check on its own. No numbers alone, no steps that only \
         open or close a file, no duplicates.",
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

pub fn planner_user(task: &str, max_steps: usize) -> String {
    format!("Create a plan of 1 to {max_steps} steps to accomplish the task: {task}")
}

/// The shape of a correct `planning` call, shown in a re-ask: placeholders, no sentence a
/// model could copy into its plan.
const PLANNING_EXAMPLE: &str = "{\"command\": \"create\", \"title\": \"<short title>\", \
\"steps\": [\"<first action of the task>\", \"<next action>\"]}";

/// Sent back to the planner when its `planning` call did not produce a plan: exactly what
/// was wrong (`problems`, quoting the values), what it sent, and one correct example call.
pub fn planner_retry(
    command: &str,
    problems: &[String],
    sent: Option<&str>,
    max_steps: usize,
) -> String {
    let mut s = format!(
        "The plan was not {}.",
        if command == "update" {
            "updated"
        } else {
            "created"
        }
    );
    match sent {
        Some(args) => {
            let _ = write!(s, " You sent: {}", truncate_chars(args.trim(), 300));
        }
        None => s.push_str(" You answered without calling the `planning` tool."),
    }
    if !problems.is_empty() {
        s.push_str("\nWhat was wrong:\n");
        for p in problems {
            let _ = writeln!(s, "- {p}");
        }
    } else {
        s.push('\n');
    }
    let _ = write!(
        s,
        "Call `planning` again with command `{command}`, a `title` and 1 to {max_steps} \
         `steps`, each a different concrete action for THIS task, in your own words. The \
         shape of a correct call:\n{PLANNING_EXAMPLE}"
    );
    s
}

/// Title of the default plan used when the planner fails (docs/design.md, "The flow style").
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

/// The one repair re-ask after an answer without valid JSON.
pub fn json_repair(problem: &str) -> String {
    format!(
        "Your answer could not be used: {problem}. Answer again with only one valid JSON \
         object in the requested shape, no other text."
    )
}

/// Asks for JSON in the system prompt, for a server that is not sent the answer's schema as
/// the response format (or no response format at all).
pub fn json_instruction(schema: Option<&serde_json::Value>) -> String {
    let mut text = String::from(
        "Answer with exactly one JSON value and nothing else: no prose, no code fences.",
    );
    if let Some(schema) = schema {
        text.push_str(&format!(" It must match this JSON schema:\n{schema}"));
    }
    text
}

/// Flow re-plan: ask the planner to `update` the plan after a step failed.
pub fn flow_replan(plan_text: &str, index: usize, step: &str, reason: &str) -> String {
    format!(
        "Step {index} (\"{step}\") failed: {reason}\n\nThe plan so far:\n{plan_text}\n\
         Call the `planning` tool with command `update` and the full new list of `steps`. Keep \
         the completed steps exactly as they are; change, replace or drop the steps that are \
         not done so that the task can still be accomplished despite this failure."
    )
}
