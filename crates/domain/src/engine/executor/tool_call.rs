//! One tool call of a step, journaled: `tool_calling` before, `tool_called` after; a resumed
//! run reuses a finished call's output and never runs an effect twice (docs/durability.md).
//! A call the run's approval settings refuse never runs (docs/approvals.md); the input files
//! a call names in `changes` (or as a file tool's `path`) may change from then on, a call
//! naming a `--protect`ed one is refused, and a change to an input nobody named is undone
//! (docs/security.md, "Input files"). The check of a run's answer runs its program through
//! here too, in a scratch folder, without the input checks ([`CallSite::Check`]).

use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use tracing::Instrument;

use crate::engine::context::{Gate, RunContext};
use crate::engine::executor::agent::StepLimits;
use crate::engine::inputs;
use crate::engine::journal::ToolEntry;
use crate::engine::trace;
use crate::error::{StoreError, ToolError};
use crate::model::event::EventKind;
use crate::model::text::truncate_bytes;
use crate::ports::llm::ToolCall;
use crate::ports::{ProgramCall, ToolContext, ToolOutput, Toolbox};
use crate::tools::code::CODE_RUN;

/// What the model reads for a call that started before the run was stopped and whose
/// outcome nobody recorded.
const INTERRUPTED_CALL: &str = "Interrupted, outcome unknown: the run was stopped while \
this call was running, before it reported back. It may or may not have taken effect: check \
(e.g. look at the files) before deciding whether to do it again.";

/// Where a call runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CallSite {
    /// In the run's workspace, for a step: journaled for resume, its input changes checked.
    Workspace,
    /// In a scratch folder, for the check of the run's answer (docs/verification.md): its
    /// events are written, but it is made again on resume (the folder is made again too),
    /// and the workspace's inputs are not its business.
    Check,
}

/// One tool call's outcome as the executor uses it.
pub(crate) struct ToolRun {
    pub(crate) ok: bool,
    /// The call started before the run stopped and nobody recorded how it ended: it may
    /// have taken effect.
    pub(crate) interrupted: bool,
    /// What the model reads.
    pub(crate) text: String,
    /// Files the call produced (workspace-relative).
    pub(crate) attachments: Vec<String>,
    /// What the program it ran printed on stdout (`ToolOutput::stdout`); not kept across a
    /// resume.
    pub(crate) stdout: Option<String>,
    /// The step's result, when the program ended with `final_answer` (kept across a resume:
    /// the output the model read names it).
    pub(crate) final_answer: Option<String>,
    /// The program stopped at a call of the runtime before changing any file (kept across
    /// a resume: the recorded output names it).
    pub(crate) program_call: Option<ProgramCall>,
}

/// The line the executor appends to a tool's output when its program gave the step's
/// result with `final_answer`.
const FINAL_MARKER: &str = "\n[final answer: ";

/// The final answer named by [`FINAL_MARKER`] in a recorded output (a resumed run).
fn final_answer_in(output: &str) -> Option<String> {
    let (_, rest) = output.rsplit_once(FINAL_MARKER)?;
    let rest = rest.rsplit_once(FILES_MARKER).map_or(rest, |(a, _)| a);
    rest.strip_suffix(']').map(str::to_string)
}

/// The line the executor appends to a tool's output when its program stopped at a call of
/// the runtime (the call as JSON).
const CALL_MARKER: &str = "\n[the program calls: ";

/// The call named by [`CALL_MARKER`] in a recorded output (a resumed run).
fn call_in(output: &str) -> Option<ProgramCall> {
    let (_, rest) = output.rsplit_once(CALL_MARKER)?;
    let rest = rest.rsplit_once(FILES_MARKER).map_or(rest, |(a, _)| a);
    serde_json::from_str(rest.strip_suffix(']')?).ok()
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

/// How a step's tool calls run: in its run, under its limits, with its toolbox and the
/// context its tools get, at its site (the workspace, or a check's scratch copy).
#[derive(Clone, Copy)]
pub(crate) struct StepTools<'a> {
    pub(crate) ctx: &'a RunContext,
    pub(crate) limits: &'a StepLimits,
    pub(crate) toolbox: &'a Arc<dyn Toolbox>,
    pub(crate) tool_ctx: &'a ToolContext,
    pub(crate) site: CallSite,
}

impl StepTools<'_> {
    /// Runs one tool call in its `execute_tool` span (`engine::trace`). Errors become text.
    /// Journaled: `tool_calling` before, `tool_called` after; a resumed run reuses a
    /// finished call's output and never runs it again.
    pub(crate) async fn run(
        &self,
        call: &ToolCall,
        journal_key: &str,
    ) -> Result<ToolRun, StoreError> {
        let labels = self.ctx.trace_labels();
        let span = trace::tool_span(&call.name, &call.id, labels, &call.arguments);
        let run = self
            .run_traced(call, journal_key)
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

    async fn run_traced(&self, call: &ToolCall, journal_key: &str) -> Result<ToolRun, StoreError> {
        let StepTools {
            ctx,
            limits,
            toolbox,
            tool_ctx,
            site,
        } = *self;
        let workspace = site == CallSite::Workspace;
        let journaled = if workspace {
            ctx.journal().tool(journal_key)
        } else {
            None
        };
        let started_before = match journaled {
            Some(ToolEntry::Finished { ok, output }) => {
                return Ok(ToolRun {
                    ok: *ok,
                    interrupted: output == INTERRUPTED_CALL,
                    text: output.clone(),
                    attachments: files_named_in(output),
                    stdout: None,
                    final_answer: final_answer_in(output).filter(|_| *ok),
                    program_call: call_in(output).filter(|_| !*ok),
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
                Some(journal_key.to_string()),
                INTERRUPTED_CALL.to_string(),
            )
            .await;
        }
        let parsed = parse_arguments(&call.arguments);
        let key = workspace.then(|| journal_key.to_string());
        let mut changes_stand = false;
        if !started_before {
            if let Ok(args) = &parsed {
                let step = tool_ctx.step_id.as_deref();
                let kind = (toolbox.family(&call.name), toolbox.effect(&call.name));
                let changes = if workspace {
                    inputs::named_changes(kind.0, kind.1, args)
                } else {
                    Vec::new()
                };
                if let Some(refusal) =
                    inputs::refuse_up_front(ctx, step, &call.name, &changes).await?
                {
                    return not_run(ctx, tool_ctx, call, key, refusal).await;
                }
                let gate = ctx
                    .approve(step.unwrap_or_default(), call, args, kind, journal_key)
                    .await?;
                if let Gate::Closed(reason) = gate {
                    return not_run(ctx, tool_ctx, call, key, format!("Refused: {reason}")).await;
                }
                // A program's changes to existing files stand: what it may change is not asked
                // before it runs (a small model that had to name them first wrote its results
                // into its inputs); the check of the answer arbitrates, and every change is
                // listed and undoable (docs/security.md, "Input files"). `--protect` still holds.
                changes_stand = gate == Gate::Approved || call.name == CODE_RUN;
                inputs::declare(ctx, step, &call.name, &changes).await?;
            }
            ctx.emit(EventKind::ToolCalling {
                step_id: tool_ctx.step_id.clone(),
                call_id: call.id.clone(),
                tool: call.name.clone(),
                arguments: call.arguments.clone(),
                journal_key: key.clone(),
            })
            .await?;
        }
        let started = Instant::now();
        let outcome = match parsed {
            Ok(args) => call_isolated(toolbox, &call.name, args, tool_ctx).await,
            Err(e) => Err(e),
        };
        let (mut ok, mut text, attachments, stdout, final_answer, program_call) = match outcome {
            Ok(out) => {
                let mut text = out.content;
                if let Some(answer) = &out.final_answer {
                    text.push_str(&format!("{FINAL_MARKER}{answer}]"));
                }
                if let Some(called) = &out.program_call {
                    if let Ok(json) = serde_json::to_string(called) {
                        text.push_str(&format!("{CALL_MARKER}{json}]"));
                    }
                }
                if !out.attachments.is_empty() {
                    text.push_str(&format!("{FILES_MARKER}{}]", out.attachments.join(", ")));
                }
                (
                    !out.is_error,
                    text,
                    out.attachments,
                    out.stdout,
                    out.final_answer,
                    out.program_call,
                )
            }
            Err(e) => (false, format!("Error: {e}"), Vec::new(), None, None, None),
        };
        if !reads_only && workspace {
            let step = tool_ctx.step_id.as_deref();
            if let Some(note) = inputs::after_call(ctx, step, &call.name, changes_stand).await? {
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
            journal_key: key,
        })
        .await?;
        if let Some(step) = &tool_ctx.step_id {
            ctx.count_tool_call(step);
        }
        Ok(ToolRun {
            final_answer: final_answer.filter(|_| ok),
            program_call: program_call.filter(|_| !ok),
            ok,
            interrupted: false,
            text,
            attachments,
            stdout,
        })
    }
}

/// Records a call that did not run (interrupted before, or refused) as finished with
/// `text`, what the model reads.
async fn not_run(
    ctx: &RunContext,
    tool_ctx: &ToolContext,
    call: &ToolCall,
    journal_key: Option<String>,
    text: String,
) -> Result<ToolRun, StoreError> {
    ctx.emit(EventKind::ToolCalled {
        step_id: tool_ctx.step_id.clone(),
        call_id: call.id.clone(),
        tool: call.name.clone(),
        ok: false,
        output: text.clone(),
        duration_ms: 0,
        journal_key,
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
        stdout: None,
        final_answer: None,
        program_call: None,
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

pub(crate) fn parse_arguments(raw: &str) -> Result<Value, ToolError> {
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
    fn recorded_outputs_name_their_final_answer() {
        assert_eq!(
            final_answer_in("exit code: 0\n[final answer: sum.txt holds 9]\n[files: sum.txt]"),
            Some("sum.txt holds 9".to_string())
        );
        assert_eq!(
            final_answer_in("exit code: 0\n[final answer: 9]"),
            Some("9".to_string())
        );
        assert_eq!(final_answer_in("exit code: 0"), None);
    }

    #[test]
    fn recorded_outputs_name_their_programs_call() {
        let asked = ProgramCall {
            tool: "message_ask_user".into(),
            arguments: serde_json::json!({"question": "Which one? ]"}),
        };
        assert_eq!(
            call_in(
                r#"exit code: 0
[the program calls: {"tool":"message_ask_user","arguments":{"question":"Which one? ]"}}]"#
            ),
            Some(asked)
        );
        assert_eq!(
            call_in("x\n[the program calls: {\"tool\":\"t\",\"arguments\":{}}]\n[files: a.txt]")
                .map(|c| c.tool),
            Some("t".to_string())
        );
        assert_eq!(call_in("exit code: 1"), None);
    }

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
