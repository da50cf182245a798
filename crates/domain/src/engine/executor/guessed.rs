//! "Compute, don't guess", held by the runtime (docs/direct.md, "Computed numbers"): a
//! `file_write` whose whole content is one number that nothing in the run showed (the task,
//! the user's answers, a tool's output) is not written; the model is told to compute it with
//! the shell and write what the command prints. A small model otherwise writes a count or a
//! sum from its head (`100` for a 7-line file). Nor is a file written whose text is the
//! error output of a failed call (docs/direct.md, "Error text is not a result").

use serde_json::Value;

use crate::engine::context::RunContext;
use crate::model::numbers::{lone_number, numbers_in};
use crate::model::observations::{FILE_STR_REPLACE, FILE_WRITE};
use crate::model::task_files::{copies, folders_named, mentions};
use crate::model::text::{as_one_command, is_shell_command_text};

/// The refusal of a guessed number, of error text, or of a file's name written as its
/// content; `None` when the call may run.
pub(super) async fn refuse_unfounded_write(
    ctx: &RunContext,
    tool: &str,
    args: &Value,
) -> Option<String> {
    if tool == FILE_STR_REPLACE {
        return guessed_replacement(ctx, args);
    }
    if tool != FILE_WRITE {
        return None;
    }
    if args.get("append") == Some(&Value::Bool(true)) {
        // Appended text is checked like written text, but for what only a whole file can
        // be (a folder, a copy, a script): the eval's 0.5B appended a guessed 20 to
        // numbers.txt and a refusal's own text to port.txt.
        let content = args.get("content")?.as_str()?;
        if ctx.facts().is_failed_output(content) {
            return Some(FAILED_OUTPUT_REFUSAL.to_string());
        }
        if let Some(name) = names_a_file(ctx, content).await {
            return Some(file_name_refusal(&name));
        }
        return guessed(ctx, &lone_number(content)?);
    }
    let path = args
        .get("path")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .trim()
        .trim_start_matches("./")
        .trim_end_matches('/');
    if folders_named(&ctx.task).iter().any(|f| f == path) {
        return Some(format!(
            "Not written: {path} is a folder the task asks for, not a file. Make it with \
             shell_exec (mkdir -p {path}) and put files in it ({path}/NAME, or mv FILE {path}/)."
        ));
    }
    let content = args.get("content")?.as_str()?;
    if ctx.facts().is_failed_output(content) {
        return Some(FAILED_OUTPUT_REFUSAL.to_string());
    }
    if is_shell_command_text(path, content) {
        return Some(match as_one_command(content) {
            Some(command) => format!(
                "Not written: these are shell commands, not a result. Run them: shell_exec \
                 with command \"{command}\"."
            ),
            None => "Not written: this is a shell command, not its result. Run it with \
                     shell_exec and write what it prints (or redirect its output: COMMAND > \
                     FILE)."
                .to_string(),
        });
    }
    if let Some(why) = not_the_copy_asked(ctx, path, content).await {
        return Some(why);
    }
    if let Some(name) = names_a_file(ctx, content).await {
        return Some(file_name_refusal(&name));
    }
    guessed(ctx, &lone_number(content)?)
}

/// What the model reads when it writes the output of a failed call.
const FAILED_OUTPUT_REFUSAL: &str = "Not written: this text is the error output of a failed \
     call, not the result the task asks for. Fix what the error says, run the command again, \
     and write what the successful command prints.";

/// A `file_str_replace` of one number by another that nothing showed: the eval's
/// `words_double` wrote 3, then replaced it with 6.
fn guessed_replacement(ctx: &RunContext, args: &Value) -> Option<String> {
    lone_number(args.get("old")?.as_str()?)?;
    guessed(ctx, &lone_number(args.get("new")?.as_str()?)?)
}

/// The refusal of `number` when nothing in the run showed it, or when a file tool showed it
/// as the other count of a `[text: N lines, M words]` line than the one the task asks for.
fn guessed(ctx: &RunContext, number: &str) -> Option<String> {
    if let Some(why) = other_count(ctx, number) {
        return Some(why);
    }
    if numbers_in(&ctx.task).iter().any(|n| n == number) || ctx.facts().saw_number(number) {
        return None;
    }
    Some(format!(
        "Not written: {number} was not computed: no tool output, answer of the user or word \
         of the task in this run shows it. Compute it with shell_exec (e.g. wc -w < FILE for \
         words, wc -l < FILE for lines, grep -c WORD FILE, echo $((A * 2)), awk, jq, python3 \
         -c), then write the number the command prints."
    ))
}

/// `number` is the lines count of a `[text: …]` line and the task counts words, or the
/// other way round: the eval's `words_double` read `[text: 3 lines, 9 words]` and wrote 3
/// as the number of words.
fn other_count(ctx: &RunContext, number: &str) -> Option<String> {
    let task = ctx.task.to_lowercase();
    let words = task.contains("word");
    let lines = task.contains("line");
    let counts = ["count", "how many", "number of"]
        .iter()
        .any(|w| task.contains(w));
    if !counts || words == lines {
        return None;
    }
    let right = ctx.facts().count_beside(number, words)?.to_string();
    let (shown_as, asked) = if words {
        ("lines", "words")
    } else {
        ("words", "lines")
    };
    Some(format!(
        "Not written: {number} is the number of {shown_as} the file tool showed ([text: …]), \
         and the task counts {asked}: that file has {right} {asked}. Write {right}, or count \
         with shell_exec (wc -{} < FILE) and write what it prints.",
        if words { "w" } else { "l" }
    ))
}

fn file_name_refusal(name: &str) -> String {
    format!(
        "Not written: the content is the name {name}, not a file's text. To write its text, \
         read it first (file_read {name}) and write what it holds; to copy or rename the file, \
         use shell_exec (cp {name} NEW_NAME, mv {name} NEW_NAME)."
    )
}

/// A write of the file the task asks to be a copy of an input ("Copy names.txt to
/// backup.txt") whose content is not that input's text: the eval's `backup_edit` wrote
/// "dave" into backup.txt.
async fn not_the_copy_asked(ctx: &RunContext, path: &str, content: &str) -> Option<String> {
    let port = ctx.inputs.port.clone()?;
    let inputs = crate::engine::grounding::input_paths(ctx).await?;
    let known: Vec<&str> = inputs.iter().map(String::as_str).collect();
    let (source, _) = copies(&ctx.task, &known)
        .into_iter()
        .find(|(source, copy)| copy == path && inputs.contains(source))?;
    let held = port
        .head(&ctx.workspace, &source, COPY_MAX_BYTES)
        .await
        .ok()??;
    let held = String::from_utf8_lossy(&held).into_owned();
    if held.trim_end() == content.trim_end() {
        return None;
    }
    let copied = port
        .head(&ctx.workspace, path, COPY_MAX_BYTES)
        .await
        .ok()
        .flatten()
        .is_some_and(|now| String::from_utf8_lossy(&now).trim_end() == held.trim_end());
    if !copied {
        return Some(format!(
            "Not written: the task asks for {path} as a copy of {source}, and this is not its \
             text. Copy it: shell_exec with command \"cp {source} {path}\"."
        ));
    }
    // The copy is made: what is left is likely the change to the source (the eval's
    // `backup_edit` ran the cp, then wrote "dave" into backup.txt again).
    let added = mentions(&ctx.task, &known)
        .into_iter()
        .any(|m| m.name == source && m.added);
    let next = if added {
        format!(
            " The text to add goes into {source}: file_write with path \"{source}\", append \
             true and only the new text."
        )
    } else {
        String::new()
    };
    Some(format!(
        "Not written: {path} already is the copy of {source} the task asks for; leave it as \
         it is.{next}"
    ))
}

/// The most of a file compared with a copy written of it.
const COPY_MAX_BYTES: usize = 1024 * 1024;

/// The workspace file (an input) whose name is `content`, whole: the eval's `rename` run
/// wrote the text "draft.txt" into final.txt.
async fn names_a_file(ctx: &RunContext, content: &str) -> Option<String> {
    let name = content.trim().trim_start_matches("./");
    if name.is_empty() || name.contains(char::is_whitespace) || name.len() > 300 {
        return None;
    }
    let state = ctx.inputs.state.lock().await;
    state
        .as_ref()?
        .files
        .keys()
        .find(|path| path.as_str() == name)
        .cloned()
}
