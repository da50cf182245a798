//! What an executor agent reads: its system prompt, the per-step prompt, the nudges and
//! answers inside its loop, and the verifier's prompts.

use crate::model::observations::Answered;
use crate::model::step_input::StepInput;
use std::fmt::Write;

/// System prompt of an executor agent. The same for every step and attempt of a run (the
/// step is in the user message), so a KV cache can reuse it across steps. Short: a small
/// model reads it on every call.
pub fn executor_system(agent_name: &str, agent_description: &str) -> String {
    format!(
        "You are {agent_name}, an agent of Planwright. {agent_description}\n\
         You do one step of a task with the tools you are given, in the workspace folder \
         (relative paths only).\n\
         Rules:\n\
         - Act with tools; do not just describe what you would do.\n\
         - Compute numbers, counts, sums, sorting and extraction with shell_exec (wc, awk, \
         sort, python3, jq) and write files from the command's output, never from your head.\n\
         - File content comes from tool output or the user's answer, never a placeholder.\n\
         - When done, call `complete_step` with success=true and a `result` (file names, \
         values); it may come in the same answer as your last tool call.\n\
         - If the step cannot be done, call `complete_step` with success=false and why.\n\
         - Do only the current step."
    )
}

/// The per-step prompt (docs/design.md, "The per-step prompt"; docs/direct.md): the task,
/// the plan digest, what the earlier steps did (their results and the recorded facts), and
/// the step itself. A step that is the whole task (direct mode) gets the task alone.
/// Why the step's last attempt was not accepted (a grounding check, the verifier, a failure),
/// for the attempt that retries it (docs/security.md, "Outputs").
fn last_attempt(s: &mut String, input: &StepInput) {
    if let Some(why) = input
        .step
        .error
        .as_deref()
        .filter(|_| input.step.attempts() > 1)
    {
        let _ = writeln!(
            s,
            "YOUR LAST ATTEMPT AT THIS STEP WAS NOT ACCEPTED: {why}\n"
        );
        if !input.own.is_empty() {
            s.push_str("What your earlier attempts' tools really did:\n");
            for fact in &input.own {
                let _ = writeln!(s, "  {fact}");
            }
            s.push('\n');
        }
    }
}

pub fn step_prompt(task: &str, input: &StepInput) -> String {
    if input.whole_task {
        let mut s = format!("TASK: {task}\n\n");
        earlier_steps(&mut s, input);
        last_attempt(&mut s, input);
        s.push_str("Do the task with the tools, then call `complete_step`.");
        return s;
    }
    let mut s = format!("TASK: {task}\n\nPLAN:\n{}\n", input.digest);
    earlier_steps(&mut s, input);
    last_attempt(&mut s, input);
    let _ = write!(
        s,
        "You are now working on step {}: \"{}\"\nDo it with the tools, then call `complete_step`.",
        input.index,
        input.step.display_text()
    );
    s
}

/// What earlier steps did, facts under each result.
fn earlier_steps(s: &mut String, input: &StepInput) {
    if input.earlier.is_empty() {
        return;
    }
    s.push_str("EARLIER STEPS (result, then what their tools really did):\n");
    for e in &input.earlier {
        let _ = writeln!(s, "- {}: {}", e.label, e.result);
        for fact in &e.facts {
            let _ = writeln!(s, "  {fact}");
        }
    }
    s.push('\n');
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

/// The stuck nudge when the run is not done and one tool plainly supplies what is missing
/// (the next call is that tool: docs/direct.md, "Completion refused in the loop").
pub fn stuck_nudge_unfinished(reason: &str, why: &str, tool: &str) -> String {
    format!(
        "You seem stuck: {reason}; repeating it gives the same result. You have what you \
         need: {why}. Call `{tool}` now."
    )
}

/// The answer to `complete_step {success: true}` from the run's last open step while the
/// run is not done; `tool`, when given, is the call the model must make next.
pub fn completion_unfinished(why: &str, tool: Option<&str>) -> String {
    match tool {
        Some(tool) => format!(
            "Not accepted yet: {why}. Use what you have already read above; call `{tool}` \
             now, then `complete_step`."
        ),
        None => format!("Not accepted yet: {why}."),
    }
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

/// The answer to `complete_step {success: true}` when every tool call of the step failed.
pub fn claim_after_failures() -> String {
    "Not accepted: every tool call of this step failed, so nothing has been done yet. Read \
     the errors, do the step another way, then call `complete_step`."
        .to_string()
}

/// The answer to `complete_step {success: true}` sent in the same answer as tool calls
/// that failed: the step goes on.
pub fn completion_held(failed: &[String]) -> String {
    format!(
        "Not accepted yet: {} failed in this same answer (see its result). Fix that, then \
         call `complete_step` again.",
        failed.join(", ")
    )
}

/// What the model reads when the user answered `message_ask_user` with nothing.
pub fn empty_user_answer() -> String {
    "The user gave an empty answer. Ask once more if the task needs the answer; do not \
     make one up."
        .to_string()
}

/// The answer to `message_ask_user` when the user cannot be asked now but answered before
/// in this run: the step goes on with those answers.
pub fn user_not_asked_again(why: &str, answered: &[Answered]) -> String {
    let mut s = format!(
        "Error: {why}. The user cannot be asked again now; these are their answers in this \
         run, use them:\n"
    );
    for a in answered.iter().filter(|a| !a.answer.trim().is_empty()) {
        let _ = writeln!(s, "- {:?} -> {:?}", a.question, a.answer);
    }
    s.push_str("Do not ask again.");
    s
}

/// The answer to `message_ask_user` when nobody can answer and the task never said to ask.
pub fn nobody_to_ask(why: &str) -> String {
    format!(
        "Error: {why}. Nobody can answer questions in this run: do the task with what you \
         have (the task's words, the files, the tools' output). Do not ask again."
    )
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
