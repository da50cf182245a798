//! The step executor: one agent's ReAct tool loop for one plan step.
//!
//! The loop ends only through `complete_step {success, result}` (or the turn limit, which
//! fails the step). Every tool call gets exactly one tool message back, also when it is
//! unknown, malformed or refused, so each request sent to the LLM is a valid transcript.

pub mod agent;
pub mod router;
pub mod step_kind;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use tracing::Instrument;

use crate::engine::context::RunContext;
use crate::engine::executor::agent::{ExecutorAgent, StepLimits};
use crate::engine::executor::router::{self as tool_router, RouteQuery};
use crate::engine::executor::step_kind::asks_for_action;
use crate::engine::failure::CallProblem;
use crate::engine::journal::ToolEntry;
use crate::error::{LlmError, StoreError, ToolError};
use crate::model::event::EventKind;
use crate::model::plan::Step;
use crate::model::step_input::StepInput;
use crate::model::text::truncate_bytes;
use crate::ports::llm::{CallPurpose, ChatMessage, ChatRequest, Role, ToolCall, ToolChoice};
use crate::ports::Toolbox;
use crate::prompts;
use crate::tools::builtin::{
    complete_step_schema, user_message_schemas, AskUserArgs, CompleteStepArgs, NotifyUserArgs,
    ASK_USER, COMPLETE_STEP, NOTIFY_USER,
};

/// How a step attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StepEnd {
    /// `complete_step` with success=true.
    Completed {
        result: String,
        revise_plan: bool,
        /// Files the attempt's tool calls produced (workspace-relative).
        attachments: Vec<String>,
    },
    /// `complete_step` with success=false, the turn limit, or a stuck loop.
    Failed(String),
    /// The LLM could not be reached or answered an error: worth another attempt.
    Errored(String),
    Cancelled,
}

/// Why a step fails when its executor keeps claiming success without acting.
pub const CLAIMED_WITHOUT_ACTING: &str = "claimed success without calling any tool";

/// Runs one attempt of a step. `route_tools`: offer the tools the step needs (see
/// `tool_router`) instead of the whole toolbox.
pub(crate) async fn run_step(
    ctx: &RunContext,
    limits: &StepLimits,
    agent: &ExecutorAgent,
    input: &StepInput,
    route_tools: bool,
) -> Result<StepEnd, StoreError> {
    let span = tracing::info_span!("step", step_id = %input.step.id, index = input.index, agent = %agent.name);
    run_step_inner(ctx, limits, agent, input, route_tools)
        .instrument(span)
        .await
}

/// The tools offered to one attempt of a step: the toolbox, the user functions and
/// `complete_step`, routed when `route_tools`. Fixed for the whole attempt, so a model's
/// KV cache can reuse the prefix from call to call. Returns (offered, everything).
pub fn offered_tools(
    task: &str,
    step: &Step,
    toolbox: &[crate::ports::llm::ToolSchema],
    route_tools: bool,
) -> (
    Vec<crate::ports::llm::ToolSchema>,
    Vec<crate::ports::llm::ToolSchema>,
) {
    let mut all = toolbox.to_vec();
    all.extend(user_message_schemas());
    all.push(complete_step_schema());
    if !route_tools {
        return (all.clone(), all);
    }
    let offered = tool_router::route_tools(
        &RouteQuery {
            kind: step.kind.as_deref(),
            step: &step.description,
            task,
            retry: step.attempts() > 1,
        },
        &all,
    );
    (offered, all)
}

/// Watches a step's loop for repetition and failing tools (docs/design.md, "The tool router").
#[derive(Debug, Default)]
struct LoopWatch {
    /// (tool, arguments) → times called in this attempt.
    calls: HashMap<(String, String), u32>,
    texts: HashSet<String>,
    /// tool → failures in a row.
    failures_in_a_row: HashMap<String, u32>,
    nudged: bool,
}

impl LoopWatch {
    /// Records a call; returns a description when the same call was made 3 times.
    fn call(&mut self, name: &str, arguments: &str) -> Option<String> {
        let normalized = serde_json::from_str::<Value>(arguments)
            .map(|v| v.to_string())
            .unwrap_or_else(|_| arguments.trim().to_string());
        let n = self
            .calls
            .entry((name.to_string(), normalized))
            .or_insert(0);
        *n += 1;
        (*n >= 3).then(|| format!("`{name}` was called {n} times with the same arguments"))
    }

    /// Records assistant text; returns a description when the same text came twice.
    fn text(&mut self, text: &str) -> Option<String> {
        let t = text.trim();
        if t.is_empty() {
            return None;
        }
        (!self.texts.insert(t.to_string())).then(|| "the same answer was given twice".to_string())
    }

    /// Records a tool outcome; returns the tool's name when it just failed twice in a row.
    fn outcome(&mut self, name: &str, ok: bool) -> Option<String> {
        let n = self.failures_in_a_row.entry(name.to_string()).or_insert(0);
        if ok {
            *n = 0;
            return None;
        }
        *n += 1;
        (*n == 2).then(|| name.to_string())
    }
}

async fn run_step_inner(
    ctx: &RunContext,
    limits: &StepLimits,
    agent: &ExecutorAgent,
    input: &StepInput,
    route_tools: bool,
) -> Result<StepEnd, StoreError> {
    let step_id = input.step.id.as_str();
    let mut messages = vec![
        ChatMessage::system(prompts::executor_system(&agent.name, &agent.description)),
        ChatMessage::user(prompts::step_prompt(&ctx.task, input)),
    ];
    let (tools, all_tools) = offered_tools(
        &ctx.task,
        &input.step,
        &agent.toolbox.schemas(),
        route_tools,
    );
    // Tool calls that act (anything but `complete_step` and `message_notify_user`), and
    // whether a success claimed without any has been refused once already.
    let needs_action = asks_for_action(&input.step.display_text());
    let mut real_calls: u32 = 0;
    let mut claim_refused = false;
    let mut attachments: Vec<String> = Vec::new();
    let tool_ctx = ctx.tool_context(Some(step_id));
    let mut trimmed = false;
    let mut watch = LoopWatch::default();
    // The attempt's call-site scope: a resumed run finds this attempt's calls under it.
    let scope = format!("exec:{}:{}", input.step.id, input.step.attempts());

    let mut turn = 0;
    // After the stuck nudge the next answer must be `complete_step`: a small model that
    // repeats a call would otherwise repeat it again (the model still chooses success or
    // failure and writes the result).
    let mut choice = ToolChoice::Auto;
    let started = tokio::time::Instant::now();
    while turn < limits.max_turns {
        if let Some(limit) = limits.max_step_time {
            if started.elapsed() >= limit {
                return Ok(StepEnd::Failed(format!(
                    "the step's time limit of {} s was reached",
                    limit.as_secs()
                )));
            }
        }
        turn += 1;
        let request = ChatRequest::new(CallPurpose::Execute, messages.clone())
            .with_tools(tools.clone(), std::mem::take(&mut choice));
        let (reply, replayed, llm_key) = match ctx
            .chat_replayable(&scope, agent.llm.as_ref(), request, Some(step_id))
            .await
        {
            Ok(r) => (r.response, r.replayed, r.key),
            Err(e) => match e.recoverable()? {
                CallProblem::Cancelled => return Ok(StepEnd::Cancelled),
                CallProblem::Llm(LlmError::ContextTooLong(msg)) if !trimmed => {
                    trimmed = true;
                    turn -= 1;
                    trim_observations(&mut messages);
                    ctx.emit(EventKind::Error {
                        step_id: Some(step_id.to_string()),
                        message: format!(
                            "context too long ({msg}); trimmed old tool output and retrying"
                        ),
                    })
                    .await?;
                    continue;
                }
                CallProblem::Llm(e) => return Ok(StepEnd::Errored(e.to_string())),
            },
        };
        messages.push(ChatMessage::from_reply(&reply));
        let mut stuck: Option<String> = None;
        if let Some(text) = reply.text() {
            if !replayed {
                ctx.emit(EventKind::Message {
                    step_id: Some(step_id.to_string()),
                    text: text.to_string(),
                })
                .await?;
            }
            stuck = watch.text(text);
        }
        let mut finished: Option<StepEnd> = None;
        let mut hints: Vec<String> = Vec::new();
        for (i, call) in reply.tool_calls.iter().enumerate() {
            if i >= limits.max_calls_per_reply {
                messages.push(ChatMessage::tool_result(
                    &call.id,
                    prompts::too_many_calls(limits.max_calls_per_reply),
                ));
                continue;
            }
            if finished.is_some() {
                messages.push(ChatMessage::tool_result(
                    &call.id,
                    "Not executed: the step was already completed by an earlier call in this turn.",
                ));
                continue;
            }
            if call.name == COMPLETE_STEP {
                match parse_complete_step(&call.arguments) {
                    Ok(args) if args.success && real_calls == 0 && needs_action => {
                        if claim_refused {
                            messages.push(ChatMessage::tool_result(
                                &call.id,
                                prompts::claim_refused_again(),
                            ));
                            finished = Some(StepEnd::Failed(CLAIMED_WITHOUT_ACTING.to_string()));
                        } else {
                            claim_refused = true;
                            if !replayed {
                                ctx.emit(EventKind::Nudge {
                                    step_id: step_id.to_string(),
                                    reason: CLAIMED_WITHOUT_ACTING.to_string(),
                                })
                                .await?;
                            }
                            messages.push(ChatMessage::tool_result(
                                &call.id,
                                prompts::claim_not_accepted(),
                            ));
                        }
                    }
                    Ok(args) => {
                        messages.push(ChatMessage::tool_result(&call.id, "Step finished."));
                        finished = Some(if args.success {
                            StepEnd::Completed {
                                result: args.result,
                                revise_plan: args.revise_plan,
                                attachments: std::mem::take(&mut attachments),
                            }
                        } else {
                            StepEnd::Failed(non_empty(args.result, "the executor reported failure"))
                        });
                    }
                    Err(e) => messages.push(ChatMessage::tool_result(&call.id, e)),
                }
                continue;
            }
            if call.name == NOTIFY_USER || call.name == ASK_USER {
                if call.name == ASK_USER {
                    real_calls += 1;
                }
                match talk_to_user(ctx, &scope, step_id, call, replayed).await? {
                    Ok(reply) => messages.push(ChatMessage::tool_result(&call.id, reply)),
                    Err(why) => {
                        messages.push(ChatMessage::tool_result(&call.id, format!("Error: {why}")));
                        finished = Some(StepEnd::Failed(why));
                    }
                }
                continue;
            }
            if let Some(s) = watch.call(&call.name, &call.arguments) {
                stuck = Some(s);
            }
            // Every call goes to the toolbox, which knows what exists: a tool the router did
            // not offer still runs. A failed call to a tool with no schema (unknown) is told
            // which tools this step was offered.
            let known = all_tools.iter().any(|t| t.name == call.name);
            let journal_key = format!("{llm_key}/{}", call.id);
            let run = run_tool(ctx, limits, &agent.toolbox, &tool_ctx, call, &journal_key).await?;
            let ok = run.ok;
            if known || ok {
                real_calls += 1;
            }
            for file in run.attachments {
                if !attachments.contains(&file) {
                    attachments.push(file);
                }
            }
            let text = if known || ok {
                run.text
            } else {
                format!(
                    "{}\nTools offered for this step: {}",
                    run.text,
                    tool_router::names(&tools).join(", ")
                )
            };
            messages.push(ChatMessage::tool_result(&call.id, text));
            if let Some(tool) = watch.outcome(&call.name, ok) {
                let hint = prompts::tool_failed_twice_hint(&tool);
                if !replayed {
                    ctx.emit(EventKind::Nudge {
                        step_id: step_id.to_string(),
                        reason: format!("`{tool}` failed twice in a row"),
                    })
                    .await?;
                }
                hints.push(hint);
            }
            if ctx.cancel.is_cancelled() {
                return Ok(StepEnd::Cancelled);
            }
        }
        if let Some(end) = finished {
            return Ok(end);
        }
        if let Some(reason) = stuck {
            if watch.nudged {
                return Ok(StepEnd::Failed(format!("stuck in a loop: {reason}")));
            }
            watch.nudged = true;
            if !replayed {
                ctx.emit(EventKind::Nudge {
                    step_id: step_id.to_string(),
                    reason: reason.clone(),
                })
                .await?;
            }
            hints.push(prompts::stuck_nudge(&reason));
            choice = ToolChoice::Function(COMPLETE_STEP.to_string());
        }
        if reply.tool_calls.is_empty() {
            hints.push(prompts::nudge_use_tools());
        }
        if !hints.is_empty() {
            messages.push(ChatMessage::user(hints.join("\n\n")));
        }
    }
    Ok(StepEnd::Failed(format!(
        "turn limit of {} reached without complete_step",
        limits.max_turns
    )))
}

/// `message_notify_user` and `message_ask_user`. `Ok(Err(reason))` when the step cannot go
/// on: the user was needed and nobody could answer.
async fn talk_to_user(
    ctx: &RunContext,
    scope: &str,
    step_id: &str,
    call: &ToolCall,
    replayed: bool,
) -> Result<Result<String, String>, StoreError> {
    let args = match parse_arguments(&call.arguments) {
        Ok(v) => v,
        Err(e) => return Ok(Ok(format!("Error: {e}"))),
    };
    if call.name == NOTIFY_USER {
        return Ok(match serde_json::from_value::<NotifyUserArgs>(args) {
            Ok(a) => {
                if !replayed {
                    ctx.notify_user(step_id, &a.text).await?;
                }
                Ok("Delivered to the user.".to_string())
            }
            Err(e) => Ok(format!("Error: invalid arguments for {NOTIFY_USER} ({e})")),
        });
    }
    let question = match serde_json::from_value::<AskUserArgs>(args) {
        Ok(a) if !a.question.trim().is_empty() => a.question,
        Ok(_) => return Ok(Ok("Error: `question` is empty".to_string())),
        Err(e) => return Ok(Ok(format!("Error: invalid arguments for {ASK_USER} ({e})"))),
    };
    Ok(
        match ctx
            .ask_user(&format!("{scope}:ask"), step_id, &question)
            .await?
        {
            Ok(answer) => Ok(format!("The user answered: {answer}")),
            Err(why) => Err(format!("the step needed the user's answer, but {why}")),
        },
    )
}

/// What the model reads for a call that started before the run was stopped and whose
/// outcome nobody recorded.
pub const INTERRUPTED_CALL: &str = "Interrupted, outcome unknown: the run was stopped while \
this call was running, before it reported back. It may or may not have taken effect: check \
(e.g. look at the files) before deciding whether to do it again.";

/// One tool call's outcome as the executor uses it.
struct ToolRun {
    ok: bool,
    /// What the model reads.
    text: String,
    /// Files the call produced (workspace-relative).
    attachments: Vec<String>,
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

/// Runs one tool call. Errors become text.
/// Journaled: `tool_calling` before, `tool_called` after; a resumed run reuses a finished
/// call's output and never runs it again.
async fn run_tool(
    ctx: &RunContext,
    limits: &StepLimits,
    toolbox: &Arc<dyn Toolbox>,
    tool_ctx: &crate::ports::ToolContext,
    call: &ToolCall,
    journal_key: &str,
) -> Result<ToolRun, StoreError> {
    let started_before = match ctx.journal().tool(journal_key) {
        Some(ToolEntry::Finished { ok, output }) => {
            return Ok(ToolRun {
                ok: *ok,
                text: output.clone(),
                attachments: files_named_in(output),
            })
        }
        Some(ToolEntry::Started) => true,
        None => false,
    };
    if started_before && !toolbox.idempotent(&call.name) {
        let text = INTERRUPTED_CALL.to_string();
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
        return Ok(ToolRun {
            ok: false,
            text,
            attachments: Vec::new(),
        });
    }
    if !started_before {
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
    let outcome = match parse_arguments(&call.arguments) {
        Ok(args) => call_isolated(toolbox, &call.name, args, tool_ctx).await,
        Err(e) => Err(e),
    };
    let (ok, text, attachments) = match outcome {
        Ok(out) => {
            let mut text = out.content;
            if !out.attachments.is_empty() {
                text.push_str(&format!("{FILES_MARKER}{}]", out.attachments.join(", ")));
            }
            (!out.is_error, text, out.attachments)
        }
        Err(e) => (false, format!("Error: {e}"), Vec::new()),
    };
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
        text,
        attachments,
    })
}

/// Runs a tool call in its own task, so a tool that panics fails the call (the model is told)
/// instead of the run. The task is aborted if the step is dropped midway.
async fn call_isolated(
    toolbox: &Arc<dyn Toolbox>,
    name: &str,
    args: Value,
    ctx: &crate::ports::ToolContext,
) -> Result<crate::ports::ToolOutput, ToolError> {
    let span = tracing::info_span!("tool", tool = %name);
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

fn parse_arguments(raw: &str) -> Result<Value, ToolError> {
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

fn parse_complete_step(raw: &str) -> Result<CompleteStepArgs, String> {
    let value = parse_arguments(raw).map_err(|e| format!("Error: {e}"))?;
    serde_json::from_value::<CompleteStepArgs>(value).map_err(|e| {
        format!("Error: invalid arguments for complete_step ({e}); expected {{\"success\": true|false, \"result\": \"...\"}}")
    })
}

fn non_empty(s: String, fallback: &str) -> String {
    if s.trim().is_empty() {
        fallback.to_string()
    } else {
        s
    }
}

/// Replaces the content of all but the last two tool messages with a marker.
fn trim_observations(messages: &mut [ChatMessage]) {
    let tool_positions: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role == Role::Tool)
        .map(|(i, _)| i)
        .collect();
    let keep_from = tool_positions.len().saturating_sub(2);
    for &i in &tool_positions[..keep_from] {
        messages[i].content = Some("[output trimmed to fit the context window]".to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loop_watch_spots_repeats_and_failing_tools() {
        let mut w = LoopWatch::default();
        assert_eq!(w.call("shell_exec", r#"{"command":"ls"}"#), None);
        assert_eq!(w.call("shell_exec", r#"{ "command": "ls" }"#), None);
        assert!(w.call("shell_exec", r#"{"command":"ls"}"#).is_some());
        assert_eq!(w.text("thinking"), None);
        assert!(w.text(" thinking ").is_some());
        assert_eq!(w.outcome("file_read", false), None);
        assert_eq!(w.outcome("file_read", false).as_deref(), Some("file_read"));
        assert_eq!(
            w.outcome("file_read", false),
            None,
            "hinted once per streak"
        );
        assert_eq!(w.outcome("file_read", true), None);
        assert_eq!(w.outcome("file_read", false), None);
        assert_eq!(w.outcome("file_read", false).as_deref(), Some("file_read"));
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

    #[test]
    fn complete_step_arguments_are_checked() {
        assert_eq!(
            parse_complete_step(r#"{"success": true, "result": "r"}"#),
            Ok(CompleteStepArgs {
                success: true,
                result: "r".into(),
                revise_plan: false
            })
        );
        assert!(parse_complete_step(r#"{"success": "yes"}"#)
            .expect_err("bad type")
            .contains("invalid arguments for complete_step"));
    }
}
