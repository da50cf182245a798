//! What an executor agent reads: its system prompt, the per-step prompt, the nudges and
//! answers inside its loop, and the verifier's prompts.

use std::fmt::Write;

use crate::engine::config::Actions;
use crate::model::observations::Answered;
use crate::model::step_input::StepInput;
use crate::model::workspace_view::{ViewedText, WorkspaceView};
use crate::tools::code::ProgramFunction;

/// System prompt of an executor agent. The same for every step and attempt of a run (the
/// step is in the user message), so a KV cache can reuse it across steps; the check that
/// reproduces a run's answer reads it too (docs/verification.md). Short: a small model
/// reads it on every call.
pub fn executor_system(agent_name: &str, agent_description: &str, actions: Actions) -> String {
    if actions == Actions::Code {
        return code_system(agent_name, agent_description);
    }
    let act = match actions {
        Actions::Tools => "- Act with the tools; do not just describe what you would do.\n",
        Actions::Both | Actions::Code => {
            "- Act by running programs (python or bash), or with the other tools; do not \
             just describe what you would do. A program that finishes the step ends with \
             final_answer(result).\n"
        }
    };
    format!(
        "You are {agent_name}, an agent of Planwright. {agent_description}\n\
         You do one step of a task in the workspace folder (relative paths only).\n\
         Rules:\n\
         {act}\
         - Compute every number, list and text from the files; never type a result you did \
         not read or compute.\n\
         - Name the files that already exist and that a shell or file action changes, \
         moves or deletes in its `changes`; any other existing file it changes is put \
         back.\n\
         - Read what each action printed. If it failed, fix it and try again.\n\
         - If only the user can tell you something you need, ask the user.\n\
         - When the step is done, finish it with the result (the answer, the files \
         written); if it cannot be done, finish it as failed and say why.\n\
         - Do only the current step."
    )
}

/// The system prompt when the actions are programs (docs/code-actions.md): short, and
/// about the one program that does the step, not a list of rules (the measurement that
/// replaced the rule list is in docs/eval.md). Programs name nothing first
/// (docs/code-actions.md, "Which existing files a call may change").
fn code_system(agent_name: &str, agent_description: &str) -> String {
    format!(
        "You are {agent_name}, an expert programmer working for Planwright. \
         {agent_description}\n\
         Do the current step with one complete program (Python 3, or bash) that does the \
         whole step. It runs in the workspace folder, which holds the files shown (use \
         relative paths): it reads what it needs from those files, computes the results and \
         writes them where the task says. End it with final_answer(result), the result it computed.\n\
         - A program has no network: for a web page or a server's data, call the tool made \
         for it.\n\
         - If a program fails, read the error and write the corrected program.\n\
         - If only the user can tell you something you need, ask the user.\n\
         - If the step cannot be done, finish it as failed and say why. Do only the current \
         step."
    )
}

/// For a retry: why the step's last answer was not accepted (the check of its answer, the
/// verifier), and what the earlier attempts' tools really did. How an attempt that gave up
/// or could not be read ended is not said: a small model told so gave up again at once,
/// every retry (docs/direct.md, "Retries").
fn last_attempt(s: &mut String, input: &StepInput) {
    if input.step.attempts() <= 1 {
        return;
    }
    if let Some(why) = input.rejection.as_deref() {
        let _ = writeln!(
            s,
            "YOUR LAST ATTEMPT AT THIS STEP WAS NOT ACCEPTED: {why}\n"
        );
    }
    if !input.own.is_empty() {
        s.push_str("What your earlier attempts' tools really did:\n");
        for fact in &input.own {
            let _ = writeln!(s, "  {fact}");
        }
        s.push('\n');
    }
}

/// The workspace as a step is shown it before it acts (docs/code-actions.md, "The work up
/// front"): each file with its size, and the text of the small ones.
pub fn workspace_section(view: &WorkspaceView) -> String {
    if view.files.is_empty() {
        return "The workspace has no files yet.\n".to_string();
    }
    let mut s = String::from("FILES IN THE WORKSPACE:\n");
    for f in &view.files {
        let size = human_size(f.size);
        match &f.text {
            ViewedText::Text {
                shown,
                lines,
                total,
            } => {
                let what = match total {
                    Some(t) if t == lines => format!("{size}, {t} lines"),
                    Some(t) => format!("{size}, {t} lines; the first {lines}"),
                    None => format!("{size}; the first {lines} lines"),
                };
                let _ = writeln!(s, "{} ({what}):\n```\n{}```", f.path, with_newline(shown));
            }
            ViewedText::Binary => {
                let _ = writeln!(s, "{} ({size}, binary)", f.path);
            }
            ViewedText::NotShown => {
                let _ = writeln!(s, "{} ({size})", f.path);
            }
        }
    }
    if view.more > 0 {
        let _ = writeln!(s, "... and {} more files", view.more);
    }
    s
}

fn with_newline(text: &str) -> String {
    if text.is_empty() || text.ends_with('\n') {
        text.to_string()
    } else {
        format!("{text}\n")
    }
}

/// `812 bytes`, `3.4 KB`, `2.1 MB`.
fn human_size(n: u64) -> String {
    match n {
        0..=1023 => format!("{n} bytes"),
        1024..=1_048_575 => format!("{:.1} KB", n as f64 / 1024.0),
        _ => format!("{:.1} MB", n as f64 / 1_048_576.0),
    }
}

/// The per-step prompt (docs/design.md, "The per-step prompt"; docs/direct.md): the task,
/// the workspace as it is now, the plan digest, what the earlier steps did (their results
/// and the recorded facts), and the step itself. A step that is the whole task (direct
/// mode) gets the task alone. The task and the workspace come first, so that the check of
/// the run's answer, which starts the same way, reads them from the model's cache.
pub fn step_prompt(task: &str, input: &StepInput, view: Option<&WorkspaceView>) -> String {
    let mut s = format!("TASK: {task}\n\n");
    if let Some(view) = view {
        s.push_str(&workspace_section(view));
        s.push('\n');
    }
    if input.whole_task {
        earlier_steps(&mut s, input);
        last_attempt(&mut s, input);
        s.push_str("Do the task, then finish the step with its result.");
        return s;
    }
    let _ = write!(s, "PLAN:\n{}\n", input.digest);
    earlier_steps(&mut s, input);
    last_attempt(&mut s, input);
    let _ = write!(
        s,
        "You are now working on step {}: \"{}\"\nDo it, then finish the step with its result.",
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

/// The check of a run's answer (docs/verification.md): the task and the workspace as the
/// run found it, the user's answers, then what to do: the task again, in one program, in a
/// copy of the workspace. `round` > 1 asks for a fresh look (a second check).
pub fn check_prompt(task: &str, view: &WorkspaceView, answers: &[Answered], round: u32) -> String {
    let mut s = format!("TASK: {task}\n\n{}\n", workspace_section(view));
    for a in answers.iter().filter(|a| !a.answer.trim().is_empty()) {
        let _ = writeln!(
            s,
            "The user was asked {:?} and answered {:?}.",
            a.question, a.answer
        );
    }
    s.push_str(
        "Do this task yourself in one program with `code_run`. It runs in a copy of the \
         workspace. Write the files the task asks for, and end with final_answer(the answer).",
    );
    if round > 1 {
        s.push_str(" Work it out afresh, step by step.");
    }
    s
}

/// What the model reads when the check's program failed.
pub fn check_program_failed() -> String {
    "The program failed. Fix it and run it again with `code_run`.".to_string()
}

/// Why the run's last step is tried again: an independent check disagreed with its result
/// (docs/verification.md).
/// `put_back`: the existing files the run changed and both programs left as they were,
/// put back before the retry.
pub fn check_disagreed(why: &str, put_back: &[String]) -> String {
    let mut s = format!(
        "two independent programs did the task from the original files and both disagree \
         with your result ({why}). Read the task and the files again and fix the result if \
         it is wrong"
    );
    if !put_back.is_empty() {
        let names = put_back.join(", ");
        let _ = write!(
            s,
            ". Neither program changed {names}, which existed before the run: it was put back \
             as it was"
        );
    }
    s
}

/// The refusal of a call that would change a file `--protect` names.
pub fn protected_file(path: &str) -> String {
    format!(
        "Refused: {path} is protected (--protect): no call may change, move or delete it. \
         Leave it as it is."
    )
}

/// What the model reads when a call changed existing files it did not name in `changes`.
pub fn undeclared_change_undone(paths: &[&str]) -> String {
    let names = paths.join(", ");
    format!(
        "Undone: this call changed {names}, which existed before the run, without naming it \
         in `changes`; the change was put back. If the task asks to change {names}, make the \
         call again with it in `changes`."
    )
}

/// What the model reads when a change to an existing file could not be put back.
pub fn change_not_undone(paths: &[&str]) -> String {
    format!(
        "Warning: {} existed before the run and this call changed it without naming it in \
         `changes`; the change could not be undone.",
        paths.join(", ")
    )
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
         what the step asks for, finish the step now with the result. Otherwise change your \
         approach; if the step cannot be done, finish it as failed and say why."
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

/// The answer to `complete_step {success: true}` from an executor that has not acted yet.
pub fn claim_not_accepted() -> String {
    "Not accepted yet: no call of this step has run, so nothing has been done. Do the \
     step first (run a program, write the file), read what it printed, then finish the \
     step. If the step really needs no action, finish it again."
        .to_string()
}

/// The answer to `complete_step {success: true}` when every tool call of the step failed.
pub fn claim_after_failures() -> String {
    "Not accepted yet: every call of this step failed, so nothing has been done. Read the \
     errors, do the step another way, then finish it."
        .to_string()
}

/// The answer to a failure claimed on a retry before anything was tried in it.
pub fn try_before_giving_up() -> String {
    "Not accepted yet: this is a new attempt and nothing has been tried in it. Try the \
     step another way: write and run a program, use one of the other tools, or ask the \
     user."
        .to_string()
}

/// The answer to a failure claimed right after a call failed: fix it first.
pub fn fix_before_giving_up() -> String {
    "Not accepted yet: the last call failed, and its error says why. Fix that (read the \
     error, change the program or the call) and run it again; finish the step as failed \
     only if the task cannot be done."
        .to_string()
}

/// The answer to `complete_step {success: true}` sent in the same answer as tool calls
/// that failed: the step goes on.
pub fn completion_held(failed: &[String]) -> String {
    format!(
        "Not accepted yet: {} failed in this same answer (see its result). Fix that, then \
         finish the step again.",
        failed.join(", ")
    )
}

/// Why a program's `final_answer` did not finish the step: it handed over nothing, and the
/// step wrote no file.
pub fn nothing_handed_over() -> String {
    "Not finished: the program's final_answer handed over nothing, and no file was written. \
     Write the program that does the step and hands over its result."
        .to_string()
}

/// Why a finish is sent back: files the step wrote are empty.
pub fn empty_outputs(paths: &[String]) -> String {
    let (names, verb) = match paths {
        [one] => (one.clone(), "is"),
        _ => (paths.join(", "), "are"),
    };
    format!(
        "Not finished yet: {names} {verb} empty (0 bytes). If the task asks for content \
         there, the program is wrong (a filter that matched nothing, or data read from the \
         wrong place): look at the files it reads again, fix it and run it. If an empty file \
         is what the task asks for, finish the step again."
    )
}

/// Why a finish is sent back: files the step wrote hold what they held when the run
/// started.
pub fn unchanged_outputs(paths: &[String]) -> String {
    let (names, verb) = match paths {
        [one] => (one.clone(), "holds"),
        _ => (paths.join(", "), "hold"),
    };
    format!(
        "Not finished yet: {names} {verb} exactly what {} held before the task started: it \
         was written, but nothing in it changed. If the task asks for a change there, the \
         program is wrong (a text replaced by itself, or a line that did not match): look at \
         the file again, fix it and run it. If leaving it as it was is what the task asks, \
         finish the step again.",
        if paths.len() == 1 { "it" } else { "they" }
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

/// The question asked for a program's `input()` that gives no prompt.
pub fn program_question_unworded() -> String {
    "A program asks for a value (its input() gives no question).".to_string()
}

/// The step's other tools as functions a program may call (docs/code-actions.md, "Tools in
/// a program"), for the end of a step's first prompt; `None` when there are none.
pub fn program_functions(functions: &[ProgramFunction]) -> Option<String> {
    if functions.is_empty() {
        return None;
    }
    let list: Vec<String> = functions.iter().map(ProgramFunction::signature).collect();
    Some(format!(
        "In a program, these tools are Python functions that return their output as text: \
         {}. Call them before the program writes any file.",
        list.join(", ")
    ))
}

/// One line of what a program's call of the runtime gave: `input()`'s question and answer.
pub fn program_asked(question: &str, answer: &str) -> String {
    format!("The program asked the user {question:?} and the user answered {answer:?}.")
}

/// One line of what a program's call of the runtime gave: a tool called as a function
/// (`text`: the start of its output).
pub fn program_called(tool: &str, ok: bool, text: &str) -> String {
    if ok {
        format!("The program called {tool}(), which returned: {text}")
    } else {
        format!(
            "The program called {tool}(), which failed (an error raised in the program): {text}"
        )
    }
}

/// What the model reads when a program's calls returned more than it can be given back.
pub fn program_calls_too_big(limit: usize) -> String {
    format!(
        "The program's calls returned more than a program can be given back with its code \
         ({limit} bytes in all), so it was not run again: make fewer calls in one program, or \
         call the tool directly and work from its output."
    )
}

/// What the model reads before the output of a program run again with the results of its
/// calls of the runtime (docs/code-actions.md, "Tools in a program").
pub fn program_calls_made(lines: &[String]) -> String {
    let mut s = lines.join("\n");
    s.push_str("\nIt ran again from the start with those results:");
    s
}

/// The answer to `message_ask_user` when nobody can answer.
pub fn nobody_to_ask(why: &str) -> String {
    format!(
        "Error: {why}. Nobody can answer questions in this run: do the task with what you \
         have (the task's words, the files, the tools' output). Do not ask again."
    )
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
    "You did not act. Continue the current step, or finish it (with the result, or as \
     failed with the reason) if it is done."
        .to_string()
}
