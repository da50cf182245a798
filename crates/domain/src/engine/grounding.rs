//! Completion grounded in the workspace (docs/security.md, "Outputs"): a step's claimed
//! success is not accepted while its result names a file that is not there, nor — for the
//! run's last open step — while an output the task names is missing, empty, or holds a
//! tool's status message or an arithmetic expression (`4 + 5`) instead of a result. The step then goes through the adapt loop
//! (retry with that reason, fallback, re-plan) like any failure, and the run ends `failed`
//! naming the file once the budget is spent. An input the task asks to move that is still
//! where it was does not complete either, nor one it asks to edit or add to that is
//! unchanged. The optional verifier comes after.

use std::collections::HashSet;
use std::sync::Arc;

use crate::engine::context::RunContext;
use crate::engine::inputs::state::relative_path;
use crate::engine::runtime::Runtime;
use crate::engine::verify::verify;
use crate::error::Error;
use crate::model::numbers::is_unworked_expression;
use crate::model::observations::{FILE_WRITE, SHELL_EXEC};
use crate::model::plan::Plan;
use crate::model::task_files::{asks_the_user, folders_named, may_stay_empty, mentions, Intent};
use crate::model::text::{is_tool_status_message, truncate_chars};
use crate::ports::WorkspaceFiles;
use crate::tools::builtin::ASK_USER;

/// Bytes of an output read to recognise a tool's status message.
const HEAD_BYTES: usize = 512;

/// Why the result `result` claimed for step `index` is not accepted (grounding first, then
/// the optional verifier); `None` when it is. `busy`: steps running besides this one.
pub(crate) async fn check_then_verify(
    ctx: &RunContext,
    rt: &Runtime,
    plan: &Plan,
    index: usize,
    result: &str,
    busy: &HashSet<String>,
) -> Result<Option<String>, Error> {
    if let Some(why) = check_step(ctx, plan, index, result, busy).await {
        return Ok(Some(why));
    }
    verify(ctx, rt, plan, index, result).await
}

/// The grounding checks of one step's claimed result.
async fn check_step(
    ctx: &RunContext,
    plan: &Plan,
    index: usize,
    result: &str,
    busy: &HashSet<String>,
) -> Option<String> {
    ctx.inputs.port.as_ref()?;
    let step_id = &plan.steps()[index].id;
    if let Some(why) = claimed_file_missing(ctx, step_id, result).await {
        return Some(why);
    }
    // Another step running is not done, whatever its recorded status.
    if !plan.only_open_step(index) || busy.iter().any(|b| b != step_id) {
        return None;
    }
    unfinished(ctx).await.map(|u| u.why)
}

/// What the run still lacks before its last open step may complete, and the tool that
/// supplies it when one plainly does: the step's loop refuses such a `complete_step` and
/// offers that tool next (docs/direct.md, "Completion refused in the loop").
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unfinished {
    pub why: String,
    pub next_tool: Option<&'static str>,
    /// Whether `why` names the call to make (the run already printed what is missing): a
    /// new call, even of the tool that went round in circles.
    pub names_the_call: bool,
}

impl Unfinished {
    fn new(why: String, next_tool: Option<&'static str>) -> Unfinished {
        Unfinished {
            why,
            next_tool,
            names_the_call: false,
        }
    }
}

/// An output the task names that is missing or empty while the run's last command printed
/// a result it worked out and wrote nowhere (`echo $(( $(cat a.txt) + $(cat b.txt) ))`
/// printed 9, sum.txt missing): the model is handed the call that writes it. A short,
/// one-line result is written with `file_write` (a small model told to run a command sent
/// into the file ran its own command again, unchanged); a longer one by the same command
/// sent into the file, so that it is not copied by hand. Only for a task with one output.
fn printed_not_written(ctx: &RunContext, rel: &str, state: &str) -> Option<Unfinished> {
    let printed = ctx.facts().printed()?.clone();
    let redirect = format!("{} > {}", printed.command, shell_word(rel));
    let short = !printed.stdout.contains('\n') && printed.stdout.chars().count() <= SHORT_RESULT;
    let (how, next_tool) = if short {
        (
            format!(
                "write it with file_write (path {rel:?}, content {:?}), or run `{redirect}`",
                printed.stdout
            ),
            FILE_WRITE,
        )
    } else {
        (
            format!("send it into {rel} by running `{redirect}`"),
            SHELL_EXEC,
        )
    };
    Some(Unfinished {
        why: format!(
            "the task asks for {rel}, which {state}; your command `{}` printed {:?}: if that \
             is the result, {how}",
            printed.command,
            truncate_chars(&printed.stdout, 80)
        ),
        next_tool: Some(next_tool),
        names_the_call: true,
    })
}

/// An output to write (it is missing or empty, as `state` says): with the call that writes
/// what the run printed when the task has one output and a command printed a result,
/// else `why`, `file_write` next.
fn to_write(ctx: &RunContext, rel: &str, single: bool, state: &str, why: String) -> Unfinished {
    single
        .then(|| printed_not_written(ctx, rel, state))
        .flatten()
        .unwrap_or_else(|| Unfinished::new(why, Some(FILE_WRITE)))
}

/// The longest printed result handed to `file_write` as it is.
const SHORT_RESULT: usize = 80;

/// `path` as one shell word.
fn shell_word(path: &str) -> String {
    if path
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "._-/".contains(c))
    {
        path.to_string()
    } else {
        format!("'{}'", path.replace('\'', "'\\''"))
    }
}

/// Why the run is not done yet, for its last open step: the task says to ask the user and
/// nobody was asked, or an output is missing, empty or wrong ([`missing_output`]).
pub(crate) async fn unfinished(ctx: &RunContext) -> Option<Unfinished> {
    ctx.inputs.port.as_ref()?;
    if asks_the_user(&ctx.task) {
        if ctx.facts().answered().is_empty() {
            return Some(Unfinished::new(
                "the task says to ask the user, and no question was asked: call \
                 message_ask_user first and use the answer"
                    .to_string(),
                Some(ASK_USER),
            ));
        }
        if let Some(u) = written_before_the_answer(ctx).await {
            return Some(u);
        }
        if let Some(u) = answer_not_written(ctx).await {
            return Some(u);
        }
    }
    unfinished_output(ctx).await
}

/// Words of a task that asks for the user's answer itself to be written down ("write my
/// answer into city.txt").
const WRITE_THE_ANSWER: [&str; 4] = ["my answer", "the answer", "their answer", "user's answer"];

/// An output of a task that says to write the user's answer, which exists but does not hold
/// that answer: the eval's 0.5B `ask_user` was told "Lisbon" and wrote "I live in New York
/// City." into city.txt.
async fn answer_not_written(ctx: &RunContext) -> Option<Unfinished> {
    let task = ctx.task.to_lowercase();
    if !WRITE_THE_ANSWER.iter().any(|w| task.contains(w)) {
        return None;
    }
    let answer = ctx.facts().answered().last()?.answer.trim().to_string();
    if answer.is_empty() {
        return None;
    }
    let (port, outputs) = task_outputs(ctx).await?;
    for rel in outputs {
        let Ok(Some(head)) = port.head(&ctx.workspace, &rel, HEAD_BYTES).await else {
            continue;
        };
        let text = String::from_utf8_lossy(&head).to_lowercase();
        if !text.contains(&answer.to_lowercase()) {
            return Some(Unfinished::new(
                format!(
                    "{rel} does not hold the user's answer ({:?}): write the answer as the \
                     user gave it",
                    truncate_chars(&answer, 80)
                ),
                Some(FILE_WRITE),
            ));
        }
    }
    None
}

/// An output of a task that says to ask the user, last written before the user answered:
/// the eval's `ask_days` wrote days.txt, was made to ask (4 days), and completed with what
/// it had written before.
async fn written_before_the_answer(ctx: &RunContext) -> Option<Unfinished> {
    let answer = ctx.facts().answered().last()?.answer.clone();
    let (_, outputs) = task_outputs(ctx).await?;
    let stale = outputs
        .into_iter()
        .find(|rel| ctx.facts().written_before_the_answer(rel))?;
    Some(Unfinished::new(
        format!(
            "{stale} was written before the user answered ({:?}): write it again from the \
             answer",
            truncate_chars(&answer, 80)
        ),
        Some(FILE_WRITE),
    ))
}

/// A file the result names that is not in the workspace (and was not an input, nor named
/// by the task itself or by one of the step's tool calls: the model may mention those as
/// they are, e.g. a file an MCP server wrote outside the workspace).
async fn claimed_file_missing(ctx: &RunContext, step_id: &str, result: &str) -> Option<String> {
    let port = ctx.inputs.port.clone()?;
    let facts = ctx.facts().step(step_id);
    let workspace = ctx.workspace.display().to_string();
    let named_by_task: Vec<String> = mentions(&ctx.task, &[])
        .into_iter()
        .map(|m| m.name)
        .collect();
    let inputs = input_paths(ctx).await.unwrap_or_default();
    for m in mentions(result, &[]) {
        let rel = relative_path(&workspace, &m.name);
        if rel.starts_with('/') || rel.split('/').any(|p| p == "..") {
            continue;
        }
        if named_by_task.contains(&m.name) || inputs.contains(&rel) || facts.named(&m.name) {
            continue;
        }
        if let Ok(None) = port.stat(&ctx.workspace, &rel).await {
            return Some(format!(
                "the result names {rel}, which is not in the workspace: create it first (with \
                 the tools), or do not claim it"
            ));
        }
    }
    None
}

/// The paths of the run's recorded inputs; `None` when they were not recorded.
pub(crate) async fn input_paths(ctx: &RunContext) -> Option<Vec<String>> {
    let state = ctx.inputs.state.lock().await;
    Some(state.as_ref()?.files.keys().cloned().collect())
}

/// The workspace port and the outputs the task asks for, workspace-relative; `None` when
/// nobody can look at the workspace or the inputs were not recorded.
async fn task_outputs(ctx: &RunContext) -> Option<(Arc<dyn WorkspaceFiles>, Vec<String>)> {
    let port = ctx.inputs.port.clone()?;
    let outputs = {
        let state = ctx.inputs.state.lock().await;
        state.as_ref()?.outputs.clone()
    };
    let workspace = ctx.workspace.display().to_string();
    let outputs = outputs
        .iter()
        .map(|o| relative_path(&workspace, o))
        .collect();
    Some((port, outputs))
}

/// Why the run's outputs are not done: an output the task names is missing, empty, or holds
/// a tool's status message. `None` when they are all there (or nobody can look).
pub(crate) async fn missing_output(ctx: &RunContext) -> Option<String> {
    unfinished_output(ctx).await.map(|u| u.why)
}

/// [`missing_output`], with the tool that supplies what is missing.
async fn unfinished_output(ctx: &RunContext) -> Option<Unfinished> {
    let (port, outputs) = task_outputs(ctx).await?;
    if let Some(why) = unmoved_input(ctx, port.as_ref(), &outputs).await {
        return Some(Unfinished::new(why, Some(SHELL_EXEC)));
    }
    if let Some(why) = unchanged_input(ctx, port.as_ref()).await {
        return Some(Unfinished::new(why, None));
    }
    let single = outputs.len() == 1;
    for mut rel in outputs {
        let mut found = port.stat(&ctx.workspace, &rel).await;
        if matches!(found, Ok(None)) && !rel.contains('/') {
            // "a folder notes and in it a file todo.md": the run wrote notes/todo.md.
            if let Some(written) = ctx.facts().written_named(&rel) {
                found = port.stat(&ctx.workspace, &written).await;
                rel = written;
            }
        }
        let facts = match found {
            Ok(f) => f,
            Err(e) => {
                tracing::warn!(output = %rel, error = %e, "cannot look at an output");
                continue;
            }
        };
        let Some(facts) = facts else {
            if ctx.facts().sourced(&rel) {
                // "The MCP server holds a note code.txt": read from there, not an output.
                continue;
            }
            return Some(to_write(
                ctx,
                &rel,
                single,
                "does not exist",
                format!(
                    "the task asks for {rel}, which does not exist: write it (with the tools) \
                     before completing"
                ),
            ));
        };
        if facts.size == 0 {
            if may_stay_empty(&ctx.task, &rel) {
                continue;
            }
            return Some(to_write(
                ctx,
                &rel,
                single,
                "is empty",
                format!("the task asks for {rel}, which is empty: write the result into it"),
            ));
        }
        if let Ok(Some(head)) = port.head(&ctx.workspace, &rel, HEAD_BYTES).await {
            let text = String::from_utf8_lossy(&head);
            if is_tool_status_message(&text) {
                return Some(Unfinished::new(
                    format!(
                        "{rel} holds a tool's status message ({:?}), not the result the task \
                         asks for: write the actual content",
                        text.trim()
                    ),
                    Some(FILE_WRITE),
                ));
            }
            if ctx.facts().is_failed_output(&text) {
                return Some(Unfinished::new(
                    format!(
                        "{rel} holds the error output of a failed call, not the result the \
                         task asks for: fix the cause, run it again and write what the \
                         successful run prints"
                    ),
                    None,
                ));
            }
            if let Some(input) = copied_input(ctx, &rel, &text).await {
                return Some(Unfinished::new(
                    format!(
                        "{rel} holds the same text as the input {input}: the task asks for a \
                         result made from it, not a copy; compute it with shell_exec (sort, \
                         tr, awk, ...) and write what the command prints"
                    ),
                    Some(SHELL_EXEC),
                ));
            }
            if is_unworked_expression(&text) {
                return Some(Unfinished::new(
                    format!(
                        "{rel} holds the expression {:?}, not its value: compute it with \
                         shell_exec (e.g. echo $((4 + 5))) and write the number it prints",
                        text.trim()
                    ),
                    Some(SHELL_EXEC),
                ));
            }
        }
    }
    None
}

/// An input the task asks to move or rename that is still where it was: "move report1.txt
/// into archive" completed with report1.txt untouched.
async fn unmoved_input(
    ctx: &RunContext,
    port: &dyn WorkspaceFiles,
    outputs: &[String],
) -> Option<String> {
    let inputs = input_paths(ctx).await?;
    let known: Vec<&str> = inputs.iter().map(String::as_str).collect();
    for m in mentions(&ctx.task, &known) {
        if m.intent != Intent::Move || !inputs.contains(&m.name) {
            continue;
        }
        if let Ok(Some(_)) = port.stat(&ctx.workspace, &m.name).await {
            let to = destination(ctx, port, outputs).await;
            return Some(format!(
                "the task asks to move {0}, and it is still where it was: move it (e.g. \
                 shell_exec with mv {0} {1}), then complete",
                m.name,
                to.as_deref().unwrap_or("DESTINATION")
            ));
        }
    }
    None
}

/// Where the task moves its inputs, when it says so plainly: the one folder it names
/// (`archive/`), or else the one output it names that does not exist yet ("rename
/// draft.txt to final.txt").
async fn destination(
    ctx: &RunContext,
    port: &dyn WorkspaceFiles,
    outputs: &[String],
) -> Option<String> {
    let folders = folders_named(&ctx.task);
    if let [folder] = folders.as_slice() {
        return Some(format!("{folder}/"));
    }
    let mut missing = Vec::new();
    for rel in outputs {
        if let Ok(None) = port.stat(&ctx.workspace, rel).await {
            missing.push(rel);
        }
    }
    match missing.as_slice() {
        [one] => Some(one.to_string()),
        _ => None,
    }
}

/// An input the task asks to edit or add to that is as it was when the run started (same
/// size and modification time): the eval's `append_item` completed with shopping.txt
/// untouched, having copied extra.txt to a file named NEW_NAME.
async fn unchanged_input(ctx: &RunContext, port: &dyn WorkspaceFiles) -> Option<String> {
    let recorded: Vec<(String, u64, u64)> = {
        let state = ctx.inputs.state.lock().await;
        state
            .as_ref()?
            .files
            .iter()
            .filter(|(_, input)| input.moved_to.is_none())
            .map(|(path, input)| {
                (
                    path.clone(),
                    input.recorded.size,
                    input.recorded.modified_ns,
                )
            })
            .collect()
    };
    let known: Vec<&str> = recorded.iter().map(|(p, _, _)| p.as_str()).collect();
    for m in mentions(&ctx.task, &known) {
        let asked = m.intent == Intent::Edit || m.intent == Intent::Write && m.added;
        let Some((_, size, modified_ns)) = recorded.iter().find(|(p, _, _)| *p == m.name) else {
            continue;
        };
        if !asked {
            continue;
        }
        if let Ok(Some(now)) = port.stat(&ctx.workspace, &m.name).await {
            if now.size == *size && now.modified_ns == *modified_ns {
                let how = if m.added {
                    "add to it (file_write with append=true and only the new text)"
                } else {
                    "make the change (file_str_replace, or shell_exec)"
                };
                return Some(format!(
                    "the task asks to change {0}, and it is as it was: {how}, then complete",
                    m.name
                ));
            }
        }
    }
    None
}

/// The outputs the task asks for that `text` (a failed call's output) names and that do not
/// exist yet: the model ran what it had still to write ("python3: can't open file
/// 'squares.py'"), and is told so (docs/direct.md, "Outputs not written yet").
pub(crate) async fn unwritten_outputs_named(ctx: &RunContext, text: &str) -> Vec<String> {
    let Some((port, outputs)) = task_outputs(ctx).await else {
        return Vec::new();
    };
    // Only files the task says to write: "a note called code.txt" on an MCP server is an
    // output only until something reads it, and the note sent the model writing it.
    let workspace = ctx.workspace.display().to_string();
    let written: Vec<String> = mentions(&ctx.task, &[])
        .into_iter()
        .filter(|m| m.written)
        .map(|m| relative_path(&workspace, &m.name))
        .collect();
    let mut unwritten = Vec::new();
    for rel in outputs {
        let name = rel.rsplit('/').next().unwrap_or(&rel);
        if !written.contains(&rel) || !text.contains(name) {
            continue;
        }
        if let Ok(None) = port.stat(&ctx.workspace, &rel).await {
            unwritten.push(rel);
        }
    }
    unwritten
}

/// The files the task names to be read or used (not outputs) that `text` (a failed call's
/// output) names and that are not in the workspace: "the script reads the number 21 from
/// input.txt" and `cat: input.txt: No such file or directory` (docs/direct.md, "Outputs
/// not written yet").
pub(crate) async fn missing_sources_named(ctx: &RunContext, text: &str) -> Vec<String> {
    let Some((port, outputs)) = task_outputs(ctx).await else {
        return Vec::new();
    };
    let workspace = ctx.workspace.display().to_string();
    let mut missing = Vec::new();
    for m in mentions(&ctx.task, &[]) {
        let rel = relative_path(&workspace, &m.name);
        let name = rel.rsplit('/').next().unwrap_or(&rel);
        if outputs.contains(&rel) || !text.contains(name) || missing.contains(&rel) {
            continue;
        }
        if let Ok(None) = port.stat(&ctx.workspace, &rel).await {
            missing.push(rel);
        }
    }
    missing
}

/// Most inputs compared with an output, and the largest compared.
const COMPARED_INPUTS: usize = 50;
const COMPARED_BYTES: u64 = 4 * 1024;
/// Words of a task that asks for a copy.
const COPY_WORDS: [&str; 5] = ["copy", "backup", "back up", "duplicate", "cp "];

/// The input whose text output `rel` (`head`: its first bytes) repeats, when the task does
/// not ask for a copy: "sort names.txt into out.txt" answered with names.txt as it was
/// (docs/security.md, "Outputs").
async fn copied_input(ctx: &RunContext, rel: &str, head: &str) -> Option<String> {
    let lower = ctx.task.to_lowercase();
    if COPY_WORDS.iter().any(|w| lower.contains(w)) || head.len() as u64 >= COMPARED_BYTES {
        return None;
    }
    let port = ctx.inputs.port.clone()?;
    let inputs: Vec<(String, u64)> = {
        let state = ctx.inputs.state.lock().await;
        state
            .as_ref()?
            .files
            .iter()
            .map(|(path, input)| (path.clone(), input.recorded.size))
            .filter(|(path, size)| path != rel && *size < COMPARED_BYTES)
            .take(COMPARED_INPUTS)
            .collect()
    };
    let wanted = normalized(head);
    if wanted.is_empty() {
        return None;
    }
    for (path, _) in inputs {
        if let Ok(Some(bytes)) = port
            .head(&ctx.workspace, &path, COMPARED_BYTES as usize)
            .await
        {
            if normalized(&String::from_utf8_lossy(&bytes)) == wanted {
                return Some(path);
            }
        }
    }
    None
}

/// Text without trailing spaces on its lines or blank lines around it.
fn normalized(text: &str) -> String {
    text.lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string()
}
