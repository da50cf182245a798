//! Every prompt Planwright sends, in one place. Each is snapshot-tested: a change to a prompt
//! shows up as a snapshot diff in review.

use std::fmt::Write;

use crate::model::plan::Plan;
use crate::model::plan_text::render_plan_text;
use crate::model::step_input::StepInput;
pub use crate::model::text::truncate_chars;

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
         as few steps as the task needs (typically 2-4). Each step is one concrete action an \
         agent can do with tools (shell commands, reading and writing files) and check on its \
         own, e.g. \"Write the script count.py\". No numbers alone, no steps that only \
         restate the task, no duplicates.",
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

/// One correct `planning` call, shown in a re-ask.
const PLANNING_EXAMPLE: &str = "{\"command\": \"create\", \"title\": \"Write and check \
hello.txt\", \"steps\": [\"Write the text hello into hello.txt\", \"Read hello.txt back and \
check its content\"]}";

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
         `steps`, each a different concrete action for THIS task. Example of a correct call \
         (for another task):\n{PLANNING_EXAMPLE}"
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

/// System prompt of an executor agent. The same for every step and attempt of a run (the
/// step is in the user message), so a KV cache can reuse it across steps.
pub fn executor_system(agent_name: &str, agent_description: &str) -> String {
    format!(
        "You are {agent_name}, an agent of Planwright. {agent_description}\n\
         You do ONE step of a plan with the tools you are given, in the workspace folder \
         (relative paths only).\n\
         Rules:\n\
         - Act with tools; do not just describe what you would do.\n\
         - Check the outcome (read the file back, look at the output).\n\
         - Then call `complete_step` with success=true and a `result`: what you did and what \
         later steps need (file names, values).\n\
         - If the step cannot be done, call `complete_step` with success=false and why.\n\
         - Do only the current step."
    )
}

/// The per-step prompt (docs/design.md, "The per-step prompt"): the task, the plan digest, the results
/// the step depends on, and the step itself.
pub fn step_prompt(task: &str, input: &StepInput) -> String {
    let mut s = format!("TASK: {task}\n\nPLAN:\n{}\n", input.digest);
    if !input.dependencies.is_empty() {
        s.push_str("RESULTS THIS STEP BUILDS ON:\n");
        for (label, result) in &input.dependencies {
            let _ = writeln!(s, "- {label}: {result}");
        }
        s.push('\n');
    }
    let _ = write!(
        s,
        "You are now working on step {}: \"{}\"\nDo it with the tools, then call `complete_step`.",
        input.index,
        input.step.display_text()
    );
    s
}

/// Added when a tool failed twice in a row (docs/design.md, "The tool router").
pub fn tool_failed_twice_hint(tool: &str) -> String {
    format!(
        "IMPORTANT: `{tool}` failed twice in a row. Do not call it the same way again: try a \
         different tool or a different approach."
    )
}

/// Sent once when the executor repeats itself; the next repeat fails the step.
pub fn stuck_nudge(reason: &str) -> String {
    format!(
        "You seem stuck: {reason}; repeating it gives the same result. If you already have \
         what the step asks for, call `complete_step` now with success=true and the result. \
         Otherwise change your approach; if the step cannot be done, call `complete_step` \
         with success=false and explain why."
    )
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

/// System prompt of the plan-act planner (docs/design.md, "The plan-act style").
pub fn plan_act_system(executors: &[ExecutorCard]) -> String {
    let mut s = String::from(
        "You are the planner of an autonomous agent. You turn a user's request into a short \
         plan of concrete steps that an execution agent carries out with tools (a shell and \
         file tools in a workspace folder), and you revise the remaining steps as results \
         come in.\n\nAlways answer with ONE JSON object and nothing else.",
    );
    if executors.len() > 1 {
        s.push_str(
            "\n\nStart each step description with the tag of the agent best suited to it:\n",
        );
        for e in executors {
            let _ = writeln!(s, "- [{}] {}", e.kind, e.description);
        }
    }
    s
}

pub fn plan_act_create(task: &str, max_steps: usize) -> String {
    format!(
        "Create an execution plan for this request.\n\nUser request: {task}\n\n\
         Answer with a JSON object:\n\
         {{\"title\": \"brief plan title\", \"goal\": \"what success looks like\", \
         \"language\": \"the user's language, e.g. en or zh\", \
         \"steps\": [{{\"id\": \"1\", \"description\": \"a concrete, checkable step\", \
         \"fallback\": \"optional: another way to do it if it fails\"}}]}}\n\
         Use as few steps as the task needs (typically 2-4, at most {max_steps}), each one \
         concrete action."
    )
}

/// Asks the planner to revise the unfinished steps (plan-act and DAG re-plans).
pub fn revise_plan(task: &str, plan_json: &str, trigger: &str) -> String {
    format!(
        "Revise the remaining steps of the plan.\n\nUser request: {task}\n\n\
         Current plan (JSON; completed steps are final and must not change):\n{plan_json}\n\n\
         What just happened: {trigger}\n\n\
         Answer with a JSON object {{\"steps\": [...]}} listing ONLY the steps that are still \
         to be done, in order. Keep the `id` of a remaining step you keep (you may reword it); \
         omit `id` for a new step. Each step: {{\"id\"?: \"...\", \"description\": \"...\", \
         \"depends_on\"?: [ids], \"fallback\"?: \"...\"}}. An empty list means the task is done."
    )
}

/// Re-ask after a revision named a step id that does not exist.
pub fn revise_invalid(error: &str, valid_ids: &[String]) -> String {
    format!(
        "That revision cannot be applied: {error}. Remaining step ids you may keep: [{}]. \
         Omit `id` for new steps. Answer again with the JSON object.",
        valid_ids.join(", ")
    )
}

pub fn todo_system() -> String {
    "You manage the TODO list of an autonomous agent that works like a careful engineer: it \
     starts with a few TODOs, does them one at a time with tools, and adds, changes or blocks \
     TODOs as the work reveals what is needed. Always answer with ONE JSON object and nothing else."
        .to_string()
}

/// The todo style's initialisation (docs/design.md, "The todo style").
pub fn todo_init(task: &str) -> String {
    format!(
        "Initialize a TODO list for this task.\nCreate 1-3 high-level TODO items to get \
         started. We will add more during execution if needed.\n\nTask: {task}\n\n\
         Respond with JSON:\n{{\"todos\": [{{\"description\": \"First TODO item\", \
         \"dependencies\": []}}]}}\n\
         `dependencies` lists the 1-based positions of earlier TODOs in this list that must be \
         done first."
    )
}

/// The todo style's update (docs/design.md, "The todo style"), with modify/block/close and the compression request near the cap.
pub fn todo_update(task: &str, last: &str, todo_list: &str, count: usize, max: usize) -> String {
    let mut s = format!(
        "Review the execution progress and determine if the TODO list needs updates.\n\n\
         Current task: {task}\nLast execution result: {last}\nCurrent TODO list ({count} of at \
         most {max} items):\n{todo_list}\n\
         Do you need to:\n- Add new TODOs (discovered additional work)?\n\
         - Modify existing TODO descriptions?\n- Mark any TODOs as blocked?\n\n\
         Respond with JSON:\n{{\"needs_update\": true/false, \"reason\": \"why\", \
         \"new_todos\": [{{\"description\": \"...\", \"dependencies\": [\"s1\"]}}], \
         \"modify_todos\": [{{\"id\": \"s2\", \"description\": \"...\", \"dependencies\"?: [...]}}], \
         \"blocked_todos\": [{{\"id\": \"s3\", \"reason\": \"...\"}}], \
         \"close_todos\": [{{\"id\": \"s4\", \"reason\": \"...\"}}]}}\n\
         Only TODOs that have not started can be modified, blocked or closed. Dependencies name \
         TODO ids. Do not add a TODO for work that is already done."
    );
    if count * 5 >= max * 4 {
        let _ = write!(
            s,
            "\n\nThe list is nearly full ({count}/{max}). Merge related TODOs (modify one, \
             close the others) or close TODOs that are no longer needed before adding any."
        );
    }
    s
}

pub fn dag_system() -> String {
    "You are the planner of an autonomous agent. You decompose a goal into sub-goals and \
     concrete actions connected by edges, so that independent actions can run in parallel. \
     Always answer with ONE JSON object and nothing else."
        .to_string()
}

/// The dag style's planning (docs/design.md, "The dag style"): goal → sub-goals → actions with dependency, conditional and
/// rollback edges.
pub fn dag_create(task: &str, max_steps: usize) -> String {
    format!(
        "Plan this task as a graph.\n\nTask: {task}\n\n\
         Answer with JSON:\n{{\"goal\": \"...\", \"subgoals\": [{{\"id\": \"g1\", \
         \"description\": \"...\", \"actions\": [{{\"id\": \"a1\", \"description\": \"...\", \
         \"depends_on\": [], \"condition\"?: {{\"step\": \"a0\", \"contains\": \"text the \
         upstream result must contain\"}}, \"rollback_of\"?: \"a2\", \"fallback\"?: \"...\"}}]}}]}}\n\
         Edges: `depends_on` (dependency: runs after those actions complete), `condition` \
         (conditional: runs only if that action's result contains the text), `rollback_of` \
         (rollback: runs only if that action fails, to undo or repair). Action ids are unique \
         across the whole plan. Actions without dependencies run in parallel; keep the graph \
         acyclic. Use as few actions as the task needs (at most {max_steps} sub-goals of at \
         most {max_steps} actions each), each one concrete action."
    )
}

/// Re-ask after an invalid DAG (cycle, dangling reference, duplicate id).
pub fn plan_invalid(error: &str) -> String {
    format!(
        "That plan cannot be used: {error}. Fix it and answer again with the whole JSON object."
    )
}

/// `auto`: the LLM classification, asked only when the rules are unsure.
pub fn classify_task(task: &str) -> String {
    format!(
        "Classify this task for an autonomous agent.\n\nTask: {task}\n\n\
         - simple: one clear goal reached in a few sequential steps\n\
         - complex: a clear goal with several parts, some of which can be done in parallel\n\
         - emergent: exploratory or open-ended; the work is discovered while doing it\n\n\
         Answer with JSON: {{\"class\": \"simple|complex|emergent\", \"reason\": \"...\"}}"
    )
}

pub fn verify_system() -> String {
    "You are a strict reviewer. You check whether an agent's claimed result really \
     accomplishes the step it was given. Answer with ONE JSON object and nothing else."
        .to_string()
}

pub fn verify_step(task: &str, step: &str, result: &str) -> String {
    format!(
        "Task: {task}\nStep: {step}\nThe agent reports: {result}\n\n\
         Does the report show the step was accomplished? Answer with JSON: \
         {{\"ok\": true/false, \"reason\": \"...\"}}"
    )
}

/// The answer to `complete_step {success: true}` from an executor that has not called any
/// tool, for a step that asks for an action.
pub fn claim_not_accepted() -> String {
    "Not accepted: you have not called any tool in this step, so nothing has been done yet. \
     Do the step with the tools first (e.g. write the file, run the command), check the \
     outcome, then call `complete_step`."
        .to_string()
}

/// The answer to a second such claim: the step fails.
pub fn claim_refused_again() -> String {
    "Not accepted again: still no tool was called. The step fails.".to_string()
}

/// The result of a tool call beyond the per-answer cap (`StepLimits::max_calls_per_reply`).
pub fn too_many_calls(max: usize) -> String {
    format!(
        "Not executed: at most {max} tool calls are run from one answer. Call it again in \
         your next answer if it is still needed."
    )
}

/// Sent when the model answered without any tool call.
pub fn nudge_use_tools() -> String {
    "You did not call any tool. Continue the current step with the tools, or call \
     `complete_step` (success=true with the result, or success=false with the reason) if it \
     is finished."
        .to_string()
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::plan::StepStatus;

    fn plan() -> Plan {
        let texts: Vec<String> = ["Create notes.txt", "[CODE] Count its lines", "Report"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let mut p = Plan::from_texts("plan_1", "Notes", "make notes", &texts).expect("valid plan");
        p.transition("s1", StepStatus::InProgress).expect("legal");
        p.transition("s1", StepStatus::Completed).expect("legal");
        p.steps_mut()[0].result = Some("Wrote notes.txt with 3 lines.".into());
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
            "{}\n---\n{}\n---\n{}",
            planner_user("count lines", 6),
            planner_retry(
                "create",
                &[
                    "the plan has 16 steps, at most 6 are allowed".to_string(),
                    "steps 0 (\"1\"), 1 (\"2\") are only a number or punctuation".to_string()
                ],
                Some(r#"{"command": "create", "steps": ["1", "2"]}"#),
                6
            ),
            planner_retry("create", &[], None, 6)
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
    fn step_prompt_with_dependency_results() {
        let p = plan();
        let input = StepInput::new(&p, 1, 1200);
        insta::assert_snapshot!(step_prompt("make notes", &input));
    }

    #[test]
    fn adapt_and_loop_prompts() {
        insta::assert_snapshot!(format!(
            "{}\n---\n{}\n---\n{}\n---\n{}",
            tool_failed_twice_hint("file_read"),
            stuck_nudge("`shell_exec` was called 3 times with the same arguments"),
            json_repair("the answer contained no valid JSON object"),
            flow_replan("<plan text>", 1, "Count its lines", "wc is missing")
        ));
    }

    #[test]
    fn plan_act_prompts() {
        insta::assert_snapshot!(format!(
            "{}\n---\n{}\n---\n{}\n---\n{}",
            plan_act_system(&[]),
            plan_act_create("count lines", 6),
            revise_plan("count lines", "{\"steps\": []}", "step s1 failed: no file"),
            revise_invalid(
                "unknown step id 's9'",
                &["s2".to_string(), "s3".to_string()]
            )
        ));
    }

    #[test]
    fn todo_prompts() {
        insta::assert_snapshot!(format!(
            "{}\n---\n{}\n---\n{}\n---\n{}",
            todo_system(),
            todo_init("research rust web frameworks"),
            todo_update("t", "found 3 frameworks", "s1 [✓] list frameworks", 3, 20),
            todo_update("t", "r", "...", 16, 20)
        ));
    }

    #[test]
    fn dag_auto_and_verify_prompts() {
        insta::assert_snapshot!(format!(
            "{}\n---\n{}\n---\n{}\n---\n{}\n---\n{}\n---\n{}",
            dag_system(),
            dag_create("compare two repos", 6),
            plan_invalid("the steps a1, a2 form a dependency cycle"),
            classify_task("compare two repos"),
            verify_system(),
            verify_step("t", "write x", "wrote x")
        ));
    }

    #[test]
    fn nudge() {
        insta::assert_snapshot!(nudge_use_tools());
    }

    #[test]
    fn too_many_calls_in_one_answer() {
        insta::assert_snapshot!(too_many_calls(16));
    }

    #[test]
    fn summary_prompts() {
        let mut p = plan();
        p.steps_mut()[0].attachments = vec!["notes.txt".into()];
        p.transition("s2", StepStatus::Failed).expect("legal");
        p.steps_mut()[1].error = Some("claimed success without calling any tool".into());
        let calls = std::collections::HashMap::from([("s1".to_string(), 2)]);
        let failure =
            "step 1 (\"Count its lines\") failed: claimed success without calling any tool";
        let mut done = plan();
        done.transition("s2", StepStatus::Completed).expect("legal");
        done.transition("s3", StepStatus::InProgress)
            .expect("legal");
        done.transition("s3", StepStatus::Completed).expect("legal");
        insta::assert_snapshot!(format!(
            "{}\n---\n{}\n---\n{}\n---\n{}\n---\n{}",
            summary_system(),
            summary_user("make notes", &p, Some(failure), &calls),
            outcome_line(&p, Some(failure)),
            summary_user("make notes", &done, None, &calls),
            outcome_line(&done, None)
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

    #[test]
    fn json_instruction_prompts() {
        insta::assert_snapshot!(format!(
            "{}\n---\n{}",
            json_instruction(None),
            json_instruction(Some(&serde_json::json!({"type": "object"})))
        ));
    }
}
