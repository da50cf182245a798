//! One attempt of a step: the ReAct loop of turns (ask the model, run the calls it made,
//! nudge it when it is stuck) until `complete_step`, a limit, or a cancellation.

use crate::engine::context::RunContext;
use crate::engine::executor::agent::{ExecutorAgent, StepLimits};
use crate::engine::executor::loop_watch::LoopWatch;
use crate::engine::executor::outcome::{StepEnd, CLAIMED_WITHOUT_ACTING};
use crate::engine::executor::router::{self as tool_router, offered_tools};
use crate::engine::executor::step_kind::asks_for_action;
use crate::engine::executor::tool_call::{parse_arguments, run_tool};
use crate::engine::executor::user_call::{talk_to_user, UserCall};
use crate::engine::failure::CallProblem;
use crate::error::{LlmError, StoreError};
use crate::model::event::EventKind;
use crate::model::step_input::StepInput;
use crate::ports::llm::{
    CallPurpose, ChatMessage, ChatRequest, ChatResponse, Role, ToolCall, ToolChoice, ToolSchema,
};
use crate::ports::ToolContext;
use crate::prompts;
use crate::tools::builtin::{CompleteStepArgs, ASK_USER, COMPLETE_STEP, NOTIFY_USER};

/// The state of one attempt, carried from turn to turn.
pub(super) struct Attempt<'a> {
    ctx: &'a RunContext,
    limits: &'a StepLimits,
    agent: &'a ExecutorAgent,
    step_id: &'a str,
    /// The attempt's call-site scope: a resumed run finds this attempt's calls under it.
    scope: String,
    messages: Vec<ChatMessage>,
    /// The tools offered (routed) and every tool that exists.
    tools: Vec<ToolSchema>,
    all_tools: Vec<ToolSchema>,
    tool_ctx: ToolContext,
    /// Whether the step asks for action: a success claimed without any is refused once.
    needs_action: bool,
    /// Tool calls that act (anything but `complete_step` and `message_notify_user`).
    real_calls: u32,
    claim_refused: bool,
    /// Files the attempt's tool calls produced.
    attachments: Vec<String>,
    /// Whether old tool output was trimmed already (once per attempt).
    trimmed: bool,
    watch: LoopWatch,
    /// After the stuck nudge the next answer must be `complete_step`: a small model that
    /// repeats a call would otherwise repeat it again (the model still chooses success or
    /// failure and writes the result).
    choice: ToolChoice,
}

/// How one model call of a turn went.
enum Asked {
    Reply {
        reply: ChatResponse,
        replayed: bool,
        key: String,
    },
    /// The context was trimmed: ask again, the turn does not count.
    AskAgain,
    Ended(StepEnd),
}

/// What the calls of one turn left behind.
#[derive(Default)]
struct TurnNotes {
    finished: Option<StepEnd>,
    stuck: Option<String>,
    hints: Vec<String>,
}

impl<'a> Attempt<'a> {
    pub(super) fn new(
        ctx: &'a RunContext,
        limits: &'a StepLimits,
        agent: &'a ExecutorAgent,
        input: &'a StepInput,
        route_tools: bool,
    ) -> Self {
        let step_id = input.step.id.as_str();
        let (tools, all_tools) = offered_tools(
            &ctx.task,
            &input.step,
            &agent.toolbox.schemas(),
            route_tools,
        );
        Attempt {
            ctx,
            limits,
            agent,
            step_id,
            scope: format!("exec:{}:{}", input.step.id, input.step.attempts()),
            messages: vec![
                ChatMessage::system(prompts::executor_system(&agent.name, &agent.description)),
                ChatMessage::user(prompts::step_prompt(&ctx.task, input)),
            ],
            tools,
            all_tools,
            tool_ctx: ctx.tool_context(Some(step_id)),
            needs_action: asks_for_action(&input.step.display_text()),
            real_calls: 0,
            claim_refused: false,
            attachments: Vec::new(),
            trimmed: false,
            watch: LoopWatch::default(),
            choice: ToolChoice::Auto,
        }
    }

    pub(super) async fn run(mut self) -> Result<StepEnd, StoreError> {
        let mut turn = 0;
        let started = tokio::time::Instant::now();
        while turn < self.limits.max_turns {
            if let Some(limit) = self.limits.max_step_time {
                if started.elapsed() >= limit {
                    return Ok(StepEnd::Failed(format!(
                        "the step's time limit of {} s was reached",
                        limit.as_secs()
                    )));
                }
            }
            turn += 1;
            let (reply, replayed, key) = match self.ask().await? {
                Asked::Reply {
                    reply,
                    replayed,
                    key,
                } => (reply, replayed, key),
                Asked::AskAgain => {
                    turn -= 1;
                    continue;
                }
                Asked::Ended(end) => return Ok(end),
            };
            if let Some(end) = self.take_turn(&reply, replayed, &key).await? {
                return Ok(end);
            }
        }
        Ok(StepEnd::Failed(format!(
            "turn limit of {} reached without complete_step",
            self.limits.max_turns
        )))
    }

    /// Asks the model for the next move; trims old tool output once when the context is
    /// too long.
    async fn ask(&mut self) -> Result<Asked, StoreError> {
        let request = ChatRequest::new(CallPurpose::Execute, self.messages.clone())
            .with_tools(self.tools.clone(), std::mem::take(&mut self.choice));
        let e = match self
            .ctx
            .chat_replayable(
                &self.scope,
                self.agent.llm.as_ref(),
                request,
                Some(self.step_id),
            )
            .await
        {
            Ok(r) => {
                return Ok(Asked::Reply {
                    reply: r.response,
                    replayed: r.replayed,
                    key: r.key,
                })
            }
            Err(e) => e,
        };
        match e.recoverable()? {
            CallProblem::Cancelled => Ok(Asked::Ended(StepEnd::Cancelled)),
            CallProblem::Llm(LlmError::ContextTooLong(msg)) if !self.trimmed => {
                self.trimmed = true;
                trim_observations(&mut self.messages);
                self.ctx
                    .emit(EventKind::Error {
                        step_id: Some(self.step_id.to_string()),
                        message: format!(
                            "context too long ({msg}); trimmed old tool output and retrying"
                        ),
                    })
                    .await?;
                Ok(Asked::AskAgain)
            }
            CallProblem::Llm(e) => Ok(Asked::Ended(StepEnd::Errored(e.to_string()))),
        }
    }

    /// Handles one reply: its text, then each of its calls; ends the attempt or prepares the
    /// next turn (hints, the stuck nudge).
    async fn take_turn(
        &mut self,
        reply: &ChatResponse,
        replayed: bool,
        llm_key: &str,
    ) -> Result<Option<StepEnd>, StoreError> {
        self.messages.push(ChatMessage::from_reply(reply));
        let mut notes = TurnNotes::default();
        if let Some(text) = reply.text() {
            if !replayed {
                self.ctx
                    .emit(EventKind::Message {
                        step_id: Some(self.step_id.to_string()),
                        text: text.to_string(),
                    })
                    .await?;
            }
            notes.stuck = self.watch.text(text);
        }
        for (i, call) in reply.tool_calls.iter().enumerate() {
            if i >= self.limits.max_calls_per_reply {
                self.messages.push(ChatMessage::tool_result(
                    &call.id,
                    prompts::too_many_calls(self.limits.max_calls_per_reply),
                ));
            } else if notes.finished.is_some() {
                self.messages.push(ChatMessage::tool_result(
                    &call.id,
                    "Not executed: the step was already completed by an earlier call in this turn.",
                ));
            } else if call.name == COMPLETE_STEP {
                notes.finished = self.complete_step(call, replayed).await?;
            } else if call.name == NOTIFY_USER || call.name == ASK_USER {
                notes.finished = self.user_call(call, replayed).await?;
            } else {
                self.tool_call(call, replayed, llm_key, &mut notes).await?;
                if self.ctx.cancel.is_cancelled() {
                    return Ok(Some(StepEnd::Cancelled));
                }
            }
        }
        if notes.finished.is_some() {
            return Ok(notes.finished);
        }
        self.end_turn(notes, replayed, reply.tool_calls.is_empty())
            .await
    }

    /// `complete_step`: ends the attempt, unless it claims success without having acted
    /// (refused once, then a failure).
    async fn complete_step(
        &mut self,
        call: &ToolCall,
        replayed: bool,
    ) -> Result<Option<StepEnd>, StoreError> {
        let args = match parse_complete_step(&call.arguments) {
            Ok(args) => args,
            Err(e) => {
                self.messages.push(ChatMessage::tool_result(&call.id, e));
                return Ok(None);
            }
        };
        if args.success && self.real_calls == 0 && self.needs_action {
            if self.claim_refused {
                self.messages.push(ChatMessage::tool_result(
                    &call.id,
                    prompts::claim_refused_again(),
                ));
                return Ok(Some(StepEnd::Failed(CLAIMED_WITHOUT_ACTING.to_string())));
            }
            self.claim_refused = true;
            if !replayed {
                self.ctx
                    .emit(EventKind::Nudge {
                        step_id: self.step_id.to_string(),
                        reason: CLAIMED_WITHOUT_ACTING.to_string(),
                    })
                    .await?;
            }
            self.messages.push(ChatMessage::tool_result(
                &call.id,
                prompts::claim_not_accepted(),
            ));
            return Ok(None);
        }
        self.messages
            .push(ChatMessage::tool_result(&call.id, "Step finished."));
        Ok(Some(if args.success {
            StepEnd::Completed {
                result: args.result,
                revise_plan: args.revise_plan,
                attachments: std::mem::take(&mut self.attachments),
            }
        } else {
            StepEnd::Failed(non_empty(args.result, "the executor reported failure"))
        }))
    }

    /// `message_notify_user` / `message_ask_user`: asking counts as acting; an unanswered
    /// question fails the step.
    async fn user_call(
        &mut self,
        call: &ToolCall,
        replayed: bool,
    ) -> Result<Option<StepEnd>, StoreError> {
        if call.name == ASK_USER {
            self.real_calls += 1;
        }
        match talk_to_user(self.ctx, &self.scope, self.step_id, call, replayed).await? {
            UserCall::Reply(reply) => {
                self.messages
                    .push(ChatMessage::tool_result(&call.id, reply));
                Ok(None)
            }
            UserCall::StepFails(why) => {
                self.messages
                    .push(ChatMessage::tool_result(&call.id, format!("Error: {why}")));
                Ok(Some(StepEnd::Failed(why)))
            }
        }
    }

    /// Any other call goes to the toolbox, which knows what exists: a tool the router did
    /// not offer still runs. A failed call to a tool with no schema (unknown) is told which
    /// tools this step was offered.
    async fn tool_call(
        &mut self,
        call: &ToolCall,
        replayed: bool,
        llm_key: &str,
        notes: &mut TurnNotes,
    ) -> Result<(), StoreError> {
        if let Some(s) = self.watch.call(&call.name, &call.arguments) {
            notes.stuck = Some(s);
        }
        let known = self.all_tools.iter().any(|t| t.name == call.name);
        let journal_key = format!("{llm_key}/{}", call.id);
        let run = run_tool(
            self.ctx,
            self.limits,
            &self.agent.toolbox,
            &self.tool_ctx,
            call,
            &journal_key,
        )
        .await?;
        if known || run.ok {
            self.real_calls += 1;
        }
        for file in run.attachments {
            if !self.attachments.contains(&file) {
                self.attachments.push(file);
            }
        }
        let text = if known || run.ok {
            run.text
        } else {
            format!(
                "{}\nTools offered for this step: {}",
                run.text,
                tool_router::names(&self.tools).join(", ")
            )
        };
        self.messages.push(ChatMessage::tool_result(&call.id, text));
        if let Some(tool) = self.watch.outcome(&call.name, run.ok) {
            if !replayed {
                self.ctx
                    .emit(EventKind::Nudge {
                        step_id: self.step_id.to_string(),
                        reason: format!("`{tool}` failed twice in a row"),
                    })
                    .await?;
            }
            notes.hints.push(prompts::tool_failed_twice_hint(&tool));
        }
        Ok(())
    }

    /// After a turn that did not finish the step: the stuck nudge (or the end of a loop that
    /// was nudged already), the nudge to use tools, and the hints, as one user message.
    async fn end_turn(
        &mut self,
        mut notes: TurnNotes,
        replayed: bool,
        no_calls: bool,
    ) -> Result<Option<StepEnd>, StoreError> {
        if let Some(reason) = notes.stuck {
            if self.watch.nudged {
                return Ok(Some(StepEnd::Failed(format!("stuck in a loop: {reason}"))));
            }
            self.watch.nudged = true;
            if !replayed {
                self.ctx
                    .emit(EventKind::Nudge {
                        step_id: self.step_id.to_string(),
                        reason: reason.clone(),
                    })
                    .await?;
            }
            notes.hints.push(prompts::stuck_nudge(&reason));
            self.choice = ToolChoice::Function(COMPLETE_STEP.to_string());
        }
        if no_calls {
            notes.hints.push(prompts::nudge_use_tools());
        }
        if !notes.hints.is_empty() {
            self.messages
                .push(ChatMessage::user(notes.hints.join("\n\n")));
        }
        Ok(None)
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
