//! The planners of the plan-act, todo and dag styles, and the `auto` classification.

use super::ExecutorCard;
use std::fmt::Write;

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
         Respond with JSON:\n{{\"todos\": [{{\"description\": \"...\", \
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
         - simple: one clear goal one agent reaches with a few tool calls\n\
         - sequential: several parts done one after another\n\
         - complex: several parts, some of which can be done in parallel\n\
         - emergent: exploratory or open-ended; the work is discovered while doing it\n\n\
         Answer with JSON: {{\"class\": \"simple|sequential|complex|emergent\", \"reason\": \"...\"}}"
    )
}
