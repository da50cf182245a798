//! One tool call of a step, journaled: `tool_calling` before, `tool_called` after; a resumed
//! run reuses a finished call's output and never runs an effect twice (docs/durability.md).
//! A call the run's approval settings refuse never runs (docs/approvals.md); a call that
//! would change an input file the task does not ask to change is refused, and a change one
//! made anyway is undone (docs/security.md, "Input files").

use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use tracing::Instrument;

use crate::engine::context::{Gate, RunContext};
use crate::engine::executor::agent::StepLimits;
use crate::engine::executor::guessed::refuse_unfounded_write;
use crate::engine::grounding;
use crate::engine::inputs;
use crate::engine::journal::ToolEntry;
use crate::engine::trace;
use crate::error::{StoreError, ToolError};
use crate::model::event::EventKind;
use crate::model::observations::FILE_STR_REPLACE;
use crate::model::text::truncate_bytes;
use crate::ports::llm::ToolCall;
use crate::ports::{ToolContext, ToolOutput, Toolbox};

/// What the model reads for a call that started before the run was stopped and whose
/// outcome nobody recorded.
const INTERRUPTED_CALL: &str = "Interrupted, outcome unknown: the run was stopped while \
this call was running, before it reported back. It may or may not have taken effect: check \
(e.g. look at the files) before deciding whether to do it again.";

/// One tool call's outcome as the executor uses it.
pub(super) struct ToolRun {
    pub(super) ok: bool,
    /// The call started before the run stopped and nobody recorded how it ended: it may
    /// have taken effect.
    pub(super) interrupted: bool,
    /// What the model reads.
    pub(super) text: String,
    /// Files the call produced (workspace-relative).
    pub(super) attachments: Vec<String>,
}

/// What the model reads when it repeats a `file_str_replace` that already succeeded in
/// this run (docs/direct.md, "Fewer calls"): said as a success, with what to do next (a
/// 1.5B model read "do not repeat it" as a failure and gave the step up).
fn already_replaced(arguments: &str) -> String {
    let args: Value = serde_json::from_str(arguments).unwrap_or_default();
    let text = |k: &str| {
        args.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    format!(
        "Done already: {} has this change ({:?} is now {:?}; an earlier call of this run made \
         it). Do not make it again. If the step needs no other change, call `complete_step` \
         with success=true.",
        text("path"),
        text("old"),
        text("new")
    )
}

/// The line the executor appends to a tool's output to name the files it produced.
const FILES_MARKER: &str = "\n[files: ";

/// The files named by [`FILES_MARKER`] at the end of a recorded output (a resumed run).
fn files_named_in(output: &str) -> Vec<String> {
    output
        .rsplit_once(FILES_MARKER)
        .and_then(|(_, rest)| rest.strip_suffix(']'))
        .map(|list| list.split(", ").map(str::to_string).collect())
        .unwrap_or_default()
}

/// Runs one tool call in its `execute_tool` span (`engine::trace`). Errors become text.
/// Journaled: `tool_calling` before, `tool_called` after; a resumed run reuses a finished
/// call's output and never runs it again.
pub(super) async fn run_tool(
    ctx: &RunContext,
    limits: &StepLimits,
    toolbox: &Arc<dyn Toolbox>,
    tool_ctx: &ToolContext,
    call: &ToolCall,
    journal_key: &str,
) -> Result<ToolRun, StoreError> {
    let labels = ctx.trace_labels();
    let span = trace::tool_span(&call.name, &call.id, labels, &call.arguments);
    let run = run_tool_traced(ctx, limits, toolbox, tool_ctx, call, journal_key)
        .instrument(span.clone())
        .await;
    if let Ok(run) = &run {
        let outcome = match (run.ok, run.interrupted) {
            (true, _) => "ok",
            (false, true) => "interrupted",
            (false, false) => "error",
        };
        trace::tool_ended(&span, labels, outcome, &run.text);
    }
    run
}

async fn run_tool_traced(
    ctx: &RunContext,
    limits: &StepLimits,
    toolbox: &Arc<dyn Toolbox>,
    tool_ctx: &ToolContext,
    call: &ToolCall,
    journal_key: &str,
) -> Result<ToolRun, StoreError> {
    let started_before = match ctx.journal().tool(journal_key) {
        Some(ToolEntry::Finished { ok, output }) => {
            return Ok(ToolRun {
                ok: *ok,
                interrupted: output == INTERRUPTED_CALL,
                text: output.clone(),
                attachments: files_named_in(output),
            })
        }
        Some(ToolEntry::Started) => true,
        None => false,
    };
    let reads_only = toolbox.idempotent(&call.name);
    if started_before && !reads_only {
        return not_run(
            ctx,
            tool_ctx,
            call,
            journal_key,
            INTERRUPTED_CALL.to_string(),
        )
        .await;
    }
    let parsed = parse_arguments(&call.arguments);
    let mut approved = false;
    if !started_before {
        if let Ok(args) = &parsed {
            let step = tool_ctx.step_id.as_deref();
            if let Some(refusal) = inputs::refuse_up_front(ctx, step, &call.name, args).await? {
                return not_run(ctx, tool_ctx, call, journal_key, refusal).await;
            }
            if let Some(refusal) = refuse_unfounded_write(ctx, &call.name, args).await {
                return not_run(ctx, tool_ctx, call, journal_key, refusal).await;
            }
            let gate = ctx
                .approve(
                    step.unwrap_or_default(),
                    call,
                    args,
                    (toolbox.family(&call.name), toolbox.effect(&call.name)),
                    journal_key,
                )
                .await?;
            if let Gate::Closed(reason) = gate {
                return not_run(
                    ctx,
                    tool_ctx,
                    call,
                    journal_key,
                    format!("Refused: {reason}"),
                )
                .await;
            }
            approved = gate == Gate::Approved;
        }
        ctx.emit(EventKind::ToolCalling {
            step_id: tool_ctx.step_id.clone(),
            call_id: call.id.clone(),
            tool: call.name.clone(),
            arguments: call.arguments.clone(),
            journal_key: Some(journal_key.to_string()),
        })
        .await?;
    }
    let started = Instant::now();
    let outcome = match parsed {
        Ok(args) => call_isolated(toolbox, &call.name, args, tool_ctx).await,
        Err(e) => Err(e),
    };
    let (mut ok, mut text, attachments) = match outcome {
        Ok(out) => {
            let mut text = out.content;
            if !out.attachments.is_empty() {
                text.push_str(&format!("{FILES_MARKER}{}]", out.attachments.join(", ")));
            }
            (!out.is_error, text, out.attachments)
        }
        Err(e) => (false, format!("Error: {e}"), Vec::new()),
    };
    if !ok && call.name == FILE_STR_REPLACE && ctx.facts().replaced_before(&call.arguments) {
        // A small model repeats an edit that worked; "not found" would send it looking.
        ok = true;
        text = already_replaced(&call.arguments);
    }
    // Only the workspace's own tools: an MCP server's "no such file code.txt" is about
    // its files, and the note sent the model writing the note it was to read.
    if !ok && toolbox.family(&call.name).works_in_workspace() {
        for output in grounding::unwritten_outputs_named(ctx, &text).await {
            text.push_str(&format!(
                "\nNote: {output} does not exist yet; the task asks you to create it, so \
                 write it first (file_write), then use it."
            ));
        }
        for source in grounding::missing_sources_named(ctx, &text).await {
            text.push_str(&format!(
                "\nNote: {source} is not in the workspace. If the task says what it should \
                 hold, create it with file_write, then run again."
            ));
        }
    }
    if !reads_only {
        let step = tool_ctx.step_id.as_deref();
        if let Some(note) = inputs::after_call(ctx, step, &call.name, approved).await? {
            ok = false;
            text = format!("{note}\n{text}");
        }
    }
    let text = truncate_bytes(&text, limits.max_observation_bytes);
    ctx.emit(EventKind::ToolCalled {
        step_id: tool_ctx.step_id.clone(),
        call_id: call.id.clone(),
        tool: call.name.clone(),
        ok,
        output: text.clone(),
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        journal_key: Some(journal_key.to_string()),
    })
    .await?;
    if let Some(step) = &tool_ctx.step_id {
        ctx.count_tool_call(step);
    }
    Ok(ToolRun {
        ok,
        interrupted: false,
        text,
        attachments,
    })
}

/// Records a call that did not run (interrupted before, or refused) as finished with
/// `text`, what the model reads.
async fn not_run(
    ctx: &RunContext,
    tool_ctx: &ToolContext,
    call: &ToolCall,
    journal_key: &str,
    text: String,
) -> Result<ToolRun, StoreError> {
    ctx.emit(EventKind::ToolCalled {
        step_id: tool_ctx.step_id.clone(),
        call_id: call.id.clone(),
        tool: call.name.clone(),
        ok: false,
        output: text.clone(),
        duration_ms: 0,
        journal_key: Some(journal_key.to_string()),
    })
    .await?;
    if let Some(step) = &tool_ctx.step_id {
        ctx.count_tool_call(step);
    }
    Ok(ToolRun {
        ok: false,
        interrupted: text == INTERRUPTED_CALL,
        text,
        attachments: Vec::new(),
    })
}

/// Runs a tool call in its own task, so a tool that panics fails the call (the model is told)
/// instead of the run. The task is aborted if the step is dropped midway.
async fn call_isolated(
    toolbox: &Arc<dyn Toolbox>,
    name: &str,
    args: Value,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    // The tool's own spans go under the call's `execute_tool` span.
    let span = tracing::Span::current();
    let (toolbox, name_owned, ctx) = (toolbox.clone(), name.to_string(), ctx.clone());
    let handle =
        tokio::spawn(async move { toolbox.call(&name_owned, args, &ctx).await }.instrument(span));
    let guard = AbortOnDrop(handle.abort_handle());
    let joined = handle.await;
    drop(guard);
    match joined {
        Ok(result) => result,
        Err(e) if e.is_panic() => {
            tracing::error!(tool = %name, "tool panicked");
            Err(ToolError::Failed(format!(
                "the tool '{name}' crashed; try another way"
            )))
        }
        Err(_) => Err(ToolError::Failed(format!("the tool '{name}' was stopped"))),
    }
}

/// Aborts a spawned task when dropped.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

pub(super) fn parse_arguments(raw: &str) -> Result<Value, ToolError> {
    if raw.trim().is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(other) => Err(ToolError::InvalidArguments(format!(
            "arguments must be a JSON object, got {other}"
        ))),
        Err(e) => Err(ToolError::InvalidArguments(format!(
            "arguments are not valid JSON ({e})"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_outputs_name_their_files() {
        assert_eq!(
            files_named_in("Wrote 5 bytes\n[files: a.txt, out/b.md]"),
            vec!["a.txt".to_string(), "out/b.md".to_string()]
        );
        assert!(files_named_in("no files here").is_empty());
    }

    #[test]
    fn arguments_must_be_a_json_object() {
        assert!(parse_arguments("").is_ok());
        assert!(parse_arguments("{\"a\":1}").is_ok());
        assert!(matches!(
            parse_arguments("[1]"),
            Err(ToolError::InvalidArguments(_))
        ));
        assert!(matches!(
            parse_arguments("{oops"),
            Err(ToolError::InvalidArguments(_))
        ));
    }
}
