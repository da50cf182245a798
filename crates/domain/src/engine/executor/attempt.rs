//! One attempt of a step: the ReAct loop of turns (ask the model, run the calls it made,
//! nudge it when it is stuck) until `complete_step`, a limit, or a cancellation.

use crate::engine::context::RunContext;
use crate::engine::executor::agent::{ExecutorAgent, StepLimits};
use crate::engine::executor::loop_watch::LoopWatch;
use crate::engine::executor::outcome::{StepEnd, CLAIMED_AFTER_FAILURES, EMPTY_ANSWERS};
use crate::engine::executor::program_calls::functions_of;
use crate::engine::executor::router::{self as tool_router, offered_tools};
use crate::engine::executor::tool_call::{parse_arguments, CallSite, StepTools};
use crate::engine::executor::user_call::{talk_to_user, UserCall};
use crate::engine::executor::StepSetup;
use crate::engine::failure::CallProblem;
use crate::engine::SAMPLED_TEMPERATURE;
use crate::error::{LlmError, StoreError};
use crate::model::event::EventKind;
use crate::model::step_input::StepInput;
use crate::model::tool_kind::{ToolEffect, ToolFamily};
use crate::model::workspace_view::WorkspaceView;
use crate::ports::llm::{
    CallPurpose, ChatMessage, ChatRequest, ChatResponse, Role, ToolCall, ToolChoice, ToolSchema,
};
use crate::ports::ToolContext;
use crate::prompts;
use crate::tools::builtin::{CompleteStepArgs, ASK_USER, COMPLETE_STEP, NOTIFY_USER};
use crate::tools::code::{ProgramFunction, CODE_RUN};

/// Failures claimed right after a failing call that are sent back to be fixed, per attempt.
const MAX_GIVE_UPS_REFUSED: u32 = 2;

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
    /// The offered tools a program may call as functions: fixed for the attempt, as
    /// `tools` are.
    functions: Vec<ProgramFunction>,
    tool_ctx: ToolContext,
    /// Tool calls that act (anything but `complete_step` and `message_notify_user`).
    real_calls: u32,
    /// Tool calls that worked or may have (interrupted), and questions the user answered.
    ok_calls: u32,
    /// Empty answers of the user; the second fails the step.
    empty_answers: u32,
    claim_refused: bool,
    /// Whether the attempt's last acting call was a program that failed.
    last_program_failed: bool,
    /// Failures claimed right after a failing call and sent back to be fixed.
    give_ups_refused: u32,
    /// A retry of the step (an earlier attempt ended): its calls sample
    /// ([`SAMPLED_TEMPERATURE`]): a retry's prompt is the earlier attempt's plus why it was
    /// not accepted, the same from the second retry on, and decoding greedily every retry
    /// repeated the first word for word.
    retry: bool,
    /// A give-up right after a failing program was sent back: the next answer is asked
    /// without `complete_step` among its tools. Sent back with words only, a small model
    /// wrote the same give-up again (word for word, three times in a row); without the
    /// finishing form it fixes the program, asks the user or calls another tool
    /// (docs/direct.md, "Giving up at the first error").
    finish_withheld: bool,
    /// Files the attempt's tool calls produced.
    attachments: Vec<String>,
    /// A finish was sent back because a file the attempt wrote is empty or unchanged (once
    /// per attempt).
    outputs_held: bool,
    /// The next answer samples: the finish just sent back was a program's, and decoding
    /// greedily the model ran the same program again, byte for byte.
    sample_next: bool,
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
    /// A program ended with `final_answer`: the step's result (docs/code-actions.md).
    final_answer: Option<String>,
}

impl<'a> Attempt<'a> {
    pub(super) fn new(
        ctx: &'a RunContext,
        setup: StepSetup<'a>,
        agent: &'a ExecutorAgent,
        input: &'a StepInput,
        view: Option<&WorkspaceView>,
    ) -> Self {
        let step_id = input.step.id.as_str();
        let (tools, all_tools) = offered_tools(
            &ctx.task,
            &input.step,
            agent.toolbox.as_ref(),
            setup.route_tools,
            setup.actions,
        );
        let mut first = prompts::step_prompt(&ctx.task, input, view);
        let functions = functions_of(agent.toolbox.as_ref(), &tools);
        if tools.iter().any(|t| t.name == CODE_RUN) {
            if let Some(text) = prompts::program_functions(&functions) {
                first.push_str("\n\n");
                first.push_str(&text);
            }
        }
        Attempt {
            ctx,
            limits: setup.limits,
            agent,
            step_id,
            scope: format!("exec:{}:{}", input.step.id, input.step.attempts()),
            messages: vec![
                ChatMessage::system(prompts::executor_system(
                    &agent.name,
                    &agent.description,
                    setup.actions,
                )),
                ChatMessage::user(first),
            ],
            tools,
            all_tools,
            functions,
            tool_ctx: ctx.tool_context(Some(step_id)),
            real_calls: 0,
            ok_calls: 0,
            empty_answers: 0,
            claim_refused: false,
            last_program_failed: false,
            give_ups_refused: 0,
            retry: input.step.attempts() > 1,
            finish_withheld: false,
            attachments: Vec::new(),
            outputs_held: false,
            sample_next: false,
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
        let choice = std::mem::take(&mut self.choice);
        let withheld = std::mem::take(&mut self.finish_withheld) && choice == ToolChoice::Auto;
        let tools: Vec<ToolSchema> = self
            .tools
            .iter()
            .filter(|t| !(withheld && t.name == COMPLETE_STEP))
            .cloned()
            .collect();
        let mut request =
            ChatRequest::new(CallPurpose::Execute, self.messages.clone()).with_tools(tools, choice);
        // A retry, and the answer after a give-up sent back, sample: decoding greedily, the
        // model wrote the program that had just failed again, byte for byte.
        if self.retry || withheld || std::mem::take(&mut self.sample_next) {
            request.temperature = Some(SAMPLED_TEMPERATURE);
        }
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
    /// next turn (hints, the stuck nudge). A `complete_step` sent beside other calls is taken
    /// last, after they all ran, and only if none of them failed (docs/direct.md, "Fewer
    /// calls"); the tool messages keep the calls' order.
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
            if self.limits.nudges.loops {
                notes.stuck = self.watch.text(text);
            }
        }
        let calls = &reply.tool_calls;
        let mut results: Vec<Option<String>> = vec![None; calls.len()];
        let mut failed: Vec<String> = Vec::new();
        let mut completion: Option<usize> = None;
        for (i, call) in calls.iter().enumerate() {
            if i >= self.limits.max_calls_per_reply {
                results[i] = Some(prompts::too_many_calls(self.limits.max_calls_per_reply));
            } else if notes.finished.is_some() {
                results[i] = Some(NOT_RUN_STEP_ENDED.to_string());
            } else if call.name == COMPLETE_STEP {
                if completion.is_none() {
                    completion = Some(i);
                } else {
                    results[i] = Some(NOT_RUN_STEP_ENDED.to_string());
                }
            } else if call.name == NOTIFY_USER || call.name == ASK_USER {
                let (text, end) = self.user_call(call, replayed).await?;
                results[i] = Some(text);
                notes.finished = end;
            } else {
                let (text, ok) = self.tool_call(call, replayed, llm_key, &mut notes).await?;
                results[i] = Some(text);
                if !ok {
                    failed.push(format!("`{}`", call.name));
                }
                if self.ctx.cancel.is_cancelled() {
                    self.push_results(calls, results);
                    return Ok(Some(StepEnd::Cancelled));
                }
            }
        }
        if let (None, Some(answer)) = (&notes.finished, notes.final_answer.take()) {
            // A program that handed over nothing and wrote nothing did nothing: it does not
            // finish the step (a small model piped a message into `final_answer` in bash).
            let nothing = answer.trim().is_empty() && self.attachments.is_empty();
            if failed.is_empty() && nothing && self.limits.nudges.empty_outputs {
                self.sample_next = true;
                self.nudged(replayed, "a program finished with nothing")
                    .await?;
                notes.hints.push(prompts::nothing_handed_over());
            } else if failed.is_empty() {
                if let Some(hint) = self.outputs_to_look_at(replayed).await? {
                    notes.hints.push(hint);
                } else {
                    notes.finished = Some(StepEnd::Completed {
                        result: answer,
                        revise_plan: false,
                        attachments: std::mem::take(&mut self.attachments),
                    });
                }
            } else {
                notes.hints.push(prompts::completion_held(&failed));
            }
        }
        if let Some(i) = completion {
            if notes.finished.is_some() {
                results[i] = Some(NOT_RUN_STEP_ENDED.to_string());
            } else if !failed.is_empty() && completes_successfully(&calls[i].arguments) {
                results[i] = Some(prompts::completion_held(&failed));
            } else {
                let (text, end) = self.complete_step(&calls[i], replayed).await?;
                results[i] = Some(text);
                notes.finished = end;
            }
        }
        self.push_results(calls, results);
        if notes.finished.is_some() {
            return Ok(notes.finished);
        }
        self.end_turn(notes, replayed, calls.is_empty()).await
    }

    /// One tool message per call, in the calls' order.
    fn push_results(&mut self, calls: &[ToolCall], results: Vec<Option<String>>) {
        for (call, text) in calls.iter().zip(results) {
            let text = text.unwrap_or_else(|| NOT_RUN_STEP_ENDED.to_string());
            self.messages.push(ChatMessage::tool_result(&call.id, text));
        }
    }

    /// Journals a nudge of this step (`nudge` event), unless the turn is replayed from the
    /// journal, which holds it already.
    async fn nudged(&self, replayed: bool, reason: &str) -> Result<(), StoreError> {
        if replayed {
            return Ok(());
        }
        self.ctx
            .emit(EventKind::Nudge {
                step_id: self.step_id.to_string(),
                reason: reason.to_string(),
            })
            .await
    }

    /// `complete_step`: ends the attempt. A success claimed before any call of the run
    /// worked is refused once (the model reads why and may act, or claim again, which then
    /// stands: the run's answer is not verified without executed actions).
    async fn complete_step(
        &mut self,
        call: &ToolCall,
        replayed: bool,
    ) -> Result<(String, Option<StepEnd>), StoreError> {
        let args = match parse_complete_step(&call.arguments) {
            Ok(args) => args,
            Err(e) => return Ok((e, None)),
        };
        let nudge = self.limits.nudges.claim_before_acting;
        // A step that did not act after earlier steps did may only report what they did (no
        // rule reads the step's words to tell); one whose every call failed is refused.
        let only_reports = self.real_calls == 0 && self.ctx.facts().calls_that_worked() > 0;
        if nudge && args.success && self.ok_calls == 0 && !only_reports && !self.claim_refused {
            let (reason, answer) = if self.real_calls == 0 {
                (
                    "claimed success before acting",
                    prompts::claim_not_accepted(),
                )
            } else {
                (CLAIMED_AFTER_FAILURES, prompts::claim_after_failures())
            };
            self.claim_refused = true;
            self.nudged(replayed, reason).await?;
            return Ok((answer, None));
        }
        // A retry that gives up before trying anything repeats the earlier attempt's
        // failure: it is sent back once to try. In words only: with the way to finish
        // withheld, a model that had nothing to try ran the answer format's template.
        if self.limits.nudges.failing_tool
            && !args.success
            && self.retry
            && self.real_calls == 0
            && self.give_ups_refused == 0
            && self.tools.iter().any(|t| {
                tool_router::family_of(self.agent.toolbox.as_ref(), &t.name) == ToolFamily::Code
            })
        {
            self.give_ups_refused += 1;
            self.nudged(replayed, "gave up on a retry before trying")
                .await?;
            return Ok((prompts::try_before_giving_up(), None));
        }
        // A failure claimed right after a program failed: the error is read back and fixed
        // first, at most twice per attempt (a small model gives up at the first traceback).
        if self.limits.nudges.failing_tool
            && !args.success
            && self.last_program_failed
            && self.give_ups_refused < MAX_GIVE_UPS_REFUSED
        {
            self.give_ups_refused += 1;
            self.finish_withheld = true;
            self.nudged(replayed, "gave up right after a failing call")
                .await?;
            return Ok((prompts::fix_before_giving_up(), None));
        }
        if args.success {
            if let Some(hint) = self.outputs_to_look_at(replayed).await? {
                return Ok((hint, None));
            }
        }
        Ok((
            "Step finished.".to_string(),
            Some(if args.success {
                StepEnd::Completed {
                    result: args.result,
                    revise_plan: args.revise_plan,
                    attachments: std::mem::take(&mut self.attachments),
                }
            } else {
                StepEnd::Failed(non_empty(args.result, "the executor reported failure"))
            }),
        ))
    }

    /// Before a step ends done: the files its calls wrote that are empty, or that hold
    /// what they held when the run started. A finish with one is sent back once per attempt
    /// to look at it (docs/code-actions.md, "An empty file is looked at", "A file rewritten
    /// unchanged"): an empty output was, where measured, a program whose filter matched
    /// nothing, and a check that reproduced it agreed; an unchanged one, an edit that
    /// replaced a text with itself. `None`: finish.
    async fn outputs_to_look_at(&mut self, replayed: bool) -> Result<Option<String>, StoreError> {
        let nudges = self.limits.nudges;
        if !(nudges.empty_outputs || nudges.unchanged_outputs)
            || self.outputs_held
            || self.attachments.is_empty()
        {
            return Ok(None);
        }
        let Some(port) = self.ctx.inputs.port.clone() else {
            return Ok(None);
        };
        let mut empty = Vec::new();
        if nudges.empty_outputs {
            for path in &self.attachments {
                if let Ok(Some(facts)) = port.stat(&self.ctx.workspace, path).await {
                    if facts.size == 0 {
                        empty.push(path.clone());
                    }
                }
            }
        }
        let unchanged = if nudges.unchanged_outputs {
            let written: Vec<String> = self
                .attachments
                .iter()
                .filter(|p| !empty.contains(p))
                .cloned()
                .collect();
            crate::engine::inputs::rewritten_unchanged(self.ctx, &written).await
        } else {
            Vec::new()
        };
        if empty.is_empty() && unchanged.is_empty() {
            return Ok(None);
        }
        self.outputs_held = true;
        self.sample_next = true;
        let mut hints = Vec::new();
        if !empty.is_empty() {
            self.nudged(replayed, "finished with an empty file").await?;
            hints.push(prompts::empty_outputs(&empty));
        }
        if !unchanged.is_empty() {
            self.nudged(replayed, "finished with a file unchanged")
                .await?;
            hints.push(prompts::unchanged_outputs(&unchanged));
        }
        Ok(Some(hints.join("\n")))
    }

    /// `message_notify_user` / `message_ask_user`: asking counts as acting, an answer as
    /// acting that worked; an unanswered question fails the step, and so does a second empty
    /// answer.
    async fn user_call(
        &mut self,
        call: &ToolCall,
        replayed: bool,
    ) -> Result<(String, Option<StepEnd>), StoreError> {
        if call.name == ASK_USER {
            self.real_calls += 1;
        }
        match talk_to_user(self.ctx, &self.scope, self.step_id, call, replayed).await? {
            UserCall::Reply(reply) => Ok((reply, None)),
            UserCall::Answered(answer) if answer.trim().is_empty() => {
                self.empty_answers += 1;
                if self.empty_answers >= 2 {
                    let why = EMPTY_ANSWERS.to_string();
                    return Ok((format!("Error: {why}"), Some(StepEnd::Failed(why))));
                }
                Ok((prompts::empty_user_answer(), None))
            }
            UserCall::Answered(answer) => {
                self.ok_calls += 1;
                Ok((format!("The user answered: {answer}"), None))
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
    ) -> Result<(String, bool), StoreError> {
        if let Some(s) = self.watch.call(&call.name, &call.arguments) {
            if self.limits.nudges.loops {
                notes.stuck = Some(s);
            }
        }
        let known = self.all_tools.iter().any(|t| t.name == call.name);
        let journal_key = format!("{llm_key}/{}", call.id);
        let tools = StepTools {
            ctx: self.ctx,
            limits: self.limits,
            toolbox: &self.agent.toolbox,
            tool_ctx: &self.tool_ctx,
            site: CallSite::Workspace,
        };
        let run = tools
            .run_program(call, &journal_key, &self.functions)
            .await?;
        if known || run.ok {
            self.real_calls += 1;
        }
        // An interrupted call may have taken effect: it does not count as failed.
        if run.ok || run.interrupted {
            self.ok_calls += 1;
        }
        self.last_program_failed = !(run.ok || run.interrupted)
            && tool_router::family_of(self.agent.toolbox.as_ref(), &call.name) == ToolFamily::Code;
        for file in run.attachments {
            if !self.attachments.contains(&file) {
                self.attachments.push(file);
            }
        }
        // Only for tools that look: commands that act print the same "done" for new work.
        if matches!(
            self.agent.toolbox.effect(&call.name),
            ToolEffect::Reads | ToolEffect::Network
        ) {
            if let Some(s) = self.watch.output(&call.name, &run.text) {
                if self.limits.nudges.loops {
                    notes.stuck.get_or_insert(s);
                }
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
        let failing = self.watch.outcome(&call.name, run.ok);
        if let Some(tool) = failing.filter(|_| self.limits.nudges.failing_tool) {
            self.nudged(replayed, &format!("`{tool}` failed twice in a row"))
                .await?;
            notes.hints.push(prompts::tool_failed_twice_hint(&tool));
        }
        if run.ok {
            if let Some(answer) = run.final_answer {
                notes.final_answer = Some(answer);
            }
        }
        Ok((text, run.ok))
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
            self.nudged(replayed, &reason).await?;
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

/// What the model reads for a call not run because the step already ended.
const NOT_RUN_STEP_ENDED: &str =
    "Not executed: the step was already completed by an earlier call in this turn.";

/// Whether `complete_step` arguments claim success (unparsable ones do not).
fn completes_successfully(raw: &str) -> bool {
    parse_complete_step(raw).is_ok_and(|a| a.success)
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
