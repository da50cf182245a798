//! "Compute, don't guess", held by the runtime (docs/direct.md, "Computed numbers"): a
//! `file_write` whose whole content is one number that nothing in the run showed (the task,
//! the user's answers, a tool's output) is not written; the model is told to compute it with
//! the shell and write what the command prints. A small model otherwise writes a count or a
//! sum from its head (`100` for a 7-line file). Nor is a file written whose text is the
//! error output of a failed call (docs/direct.md, "Error text is not a result").

use serde_json::Value;

use crate::engine::context::RunContext;
use crate::model::numbers::{lone_number, numbers_in};
use crate::model::observations::FILE_WRITE;

/// The refusal of a guessed number, or `None` when the call may run.
pub(super) fn refuse_unfounded_write(ctx: &RunContext, tool: &str, args: &Value) -> Option<String> {
    if tool != FILE_WRITE || args.get("append") == Some(&Value::Bool(true)) {
        return None;
    }
    let content = args.get("content")?.as_str()?;
    if ctx.facts().is_failed_output(content) {
        return Some(
            "Not written: this text is the error output of a failed call, not the result the \
             task asks for. Fix what the error says, run the command again, and write what \
             the successful command prints."
                .to_string(),
        );
    }
    let number = lone_number(content)?;
    if numbers_in(&ctx.task).contains(&number) || ctx.facts().saw_number(&number) {
        return None;
    }
    Some(format!(
        "Not written: {number} was not computed: no tool output, answer of the user or word \
         of the task in this run shows it. Compute it with shell_exec (e.g. wc -l < FILE, \
         grep -c WORD FILE, awk, jq, python3 -c), then write the number the command prints."
    ))
}
