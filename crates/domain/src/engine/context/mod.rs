//! [`RunContext`]: what every part of a run shares. It numbers and journals events (store
//! first, then live sinks), saves plan versions, meters LLM calls and carries the run's
//! cancellation token.

mod approval;

pub(crate) use approval::Gate;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::engine::failure::{CallError, CallProblem, Failure, Unanswered};
use crate::engine::inputs::state::InputGuard;
use crate::engine::journal::{request_hash, Journal};
use crate::engine::json_formats::FormatRefusals;
use crate::engine::lease::RunControl;
use crate::engine::runtime::{RunRequest, Runtime};
use crate::engine::trace::{self, TraceLabels};
use crate::error::StoreError;
use crate::model::approval::{ApprovalPolicy, WrittenFiles};
use crate::model::event::{Event, EventKind, RunUsage};
use crate::model::observations::RunFacts;
use crate::model::plan::Plan;
use crate::model::verification::Checks;
use crate::model::verification::Verification;
use crate::ports::llm::{sampling_seed, ChatRequest, ChatResponse};
use crate::ports::{Clock, EventSink, LlmClient, RunStatus, RunStore, ToolContext, UserChannel};

/// An LLM reply and where it came from.
#[derive(Debug)]
pub(crate) struct Reply {
    pub response: ChatResponse,
    /// Served from the journal of a resumed run: its events are in the log already.
    pub replayed: bool,
    /// The call's journal key; tool calls it asked for are keyed under it.
    pub key: String,
}

/// The stop reason of a cancelled run.
pub const CANCELLED: &str = "the run was cancelled";

pub(crate) struct RunContext {
    pub run_id: String,
    pub task: String,
    pub workspace: PathBuf,
    pub cancel: CancellationToken,
    /// Fired to suspend the run: no new step, tool call or LLM call starts after it.
    suspend: CancellationToken,
    store: Arc<dyn RunStore>,
    sink: Arc<dyn EventSink>,
    clock: Arc<dyn Clock>,
    user: Arc<dyn UserChannel>,
    /// Last sequence number written; held across the append so order = sequence.
    seq: tokio::sync::Mutex<u64>,
    usage: Mutex<RunUsage>,
    /// Held while the usage is saved (see [`RunContext::save_usage`]).
    usage_save: tokio::sync::Mutex<()>,
    /// What a resumed run already did (empty for a new run).
    journal: Journal,
    /// Calls made so far per call-site scope; scope + count = the call's journal key.
    scopes: Mutex<HashMap<String, u32>>,
    /// Prompt + completion tokens after which the run stops.
    max_tokens: Option<u64>,
    stop_reason: Mutex<Option<String>>,
    /// The JSON response formats each client refused this run.
    json_formats: FormatRefusals,
    /// Tool calls run per step id (`tool_called` events), for the summary.
    tool_calls: Mutex<HashMap<String, u32>>,
    /// What may run without asking (docs/approvals.md).
    approvals: ApprovalPolicy,
    /// Tools a person approved for the rest of the run ("always").
    always_approved: Mutex<HashSet<String>>,
    /// What the calls let through wrote (docs/approvals.md, "Scripts").
    written: Mutex<WrittenFiles>,
    /// The run's input files and what it may do to them (docs/security.md, "Input files").
    pub(crate) inputs: InputGuard,
    /// What each step really did, from the events written (and, resumed, the log).
    facts: Mutex<RunFacts>,
    /// What the checks of the run's answer found so far (docs/verification.md).
    checks: Mutex<Checks>,
    /// What the run's spans say about its model.
    trace: TraceLabels,
}

impl RunContext {
    /// The context of `request` on `rt`'s ports. The run stops on `control.cancel`, or by
    /// itself on a spent budget; `control.suspend` stops it at the next safe point.
    pub fn new(rt: &Runtime, request: &RunRequest, control: &RunControl) -> RunContext {
        RunContext {
            run_id: request.run_id.clone(),
            task: request.task.clone(),
            workspace: request.workspace.clone(),
            cancel: control.cancel.child_token(),
            suspend: control.suspend.clone(),
            store: rt.store.clone(),
            sink: rt.sink.clone(),
            clock: rt.clock.clone(),
            user: rt.user.clone(),
            seq: tokio::sync::Mutex::new(0),
            usage: Mutex::new(RunUsage::default()),
            usage_save: tokio::sync::Mutex::new(()),
            journal: Journal::default(),
            scopes: Mutex::new(HashMap::new()),
            max_tokens: rt.config.max_tokens,
            stop_reason: Mutex::new(None),
            json_formats: FormatRefusals::default(),
            tool_calls: Mutex::new(HashMap::new()),
            approvals: rt.config.approvals.clone(),
            always_approved: Mutex::new(HashSet::new()),
            written: Mutex::new(WrittenFiles::default()),
            inputs: InputGuard::new(
                rt.workspace_files.clone(),
                rt.config.allow_input_edits,
                rt.config.protect.clone(),
            ),
            facts: Mutex::new(RunFacts::default()),
            checks: Mutex::new(Checks::default()),
            trace: rt.config.trace.clone(),
        }
    }

    /// What the run's spans say about its model (`engine::trace`).
    pub fn trace_labels(&self) -> &TraceLabels {
        &self.trace
    }

    /// The context of a run picked up again: sequence numbers go on after `last_seq`, usage
    /// after `usage`, and `journal` serves what was already done.
    pub fn resumed(
        rt: &Runtime,
        request: &RunRequest,
        control: &RunControl,
        last_seq: u64,
        usage: RunUsage,
        journal: Journal,
    ) -> RunContext {
        let mut ctx = RunContext::new(rt, request, control);
        ctx.seq = tokio::sync::Mutex::new(last_seq);
        ctx.usage = Mutex::new(usage);
        ctx.always_approved = Mutex::new(journal.always_approved().clone());
        ctx.written = Mutex::new(journal.written_files(request.workspace.to_str()));
        ctx.facts = Mutex::new(journal.facts().clone());
        ctx.checks = Mutex::new(journal.checks().clone());
        ctx.journal = journal;
        ctx
    }

    /// Counts one tool call run for `step_id` (a `tool_called` event).
    pub fn count_tool_call(&self, step_id: &str) {
        if let Ok(mut m) = self.tool_calls.lock() {
            *m.entry(step_id.to_string()).or_insert(0) += 1;
        }
    }

    /// Tool calls run per step id so far, in this process and (for a resumed run) before.
    pub fn tool_calls(&self) -> HashMap<String, u32> {
        self.tool_calls
            .lock()
            .map(|m| m.clone())
            .unwrap_or_default()
    }

    /// Every step's facts so far (docs/direct.md, "Observations").
    pub fn facts(&self) -> RunFacts {
        self.facts.lock().map(|f| f.clone()).unwrap_or_default()
    }
    /// What the checks of the run's answer found so far.
    pub(crate) fn checks(&self) -> Checks {
        self.checks.lock().map(|c| c.clone()).unwrap_or_default()
    }

    /// Keeps the verdict of the latest check.
    pub(crate) fn set_check(&self, verdict: Verification) {
        if let Ok(mut c) = self.checks.lock() {
            c.last = Some(verdict);
        }
    }

    /// The last step is tried again after two checks disagreed with it (once per run).
    pub(crate) fn note_check_retry(&self) {
        if let Ok(mut c) = self.checks.lock() {
            c.retried = true;
        }
    }

    /// Whether the run's answer was verified (docs/verification.md).
    pub fn verified(&self) -> Verification {
        self.checks().last.unwrap_or_else(|| Verification {
            verified: false,
            detail: "no check ran".to_string(),
        })
    }

    /// The next journal key of call-site `scope` (`exec:s2:1#3`).
    fn next_key(&self, scope: &str) -> String {
        let n = match self.scopes.lock() {
            Ok(mut m) => {
                let n = m.entry(scope.to_string()).or_insert(0);
                *n += 1;
                *n
            }
            Err(_) => 0,
        };
        format!("{scope}#{n}")
    }

    pub fn journal(&self) -> &Journal {
        &self.journal
    }

    /// `message_notify_user`: tells the user, journals it.
    pub async fn notify_user(&self, step_id: &str, text: &str) -> Result<(), StoreError> {
        self.user.notify(&self.run_id, text).await;
        self.emit(EventKind::UserNotified {
            step_id: step_id.to_string(),
            text: text.to_string(),
        })
        .await
    }

    /// `message_ask_user`: the run waits (status `waiting`) until the user answers, nobody
    /// can, or the run is stopped. A question the user already answered this run gets that
    /// answer again without asking (docs/direct.md, "Observations").
    pub async fn ask_user(
        &self,
        scope: &str,
        step_id: &str,
        question: &str,
    ) -> Result<String, Failure<Unanswered>> {
        let key = self.next_key(scope);
        if let Some(answer) = self.journal.answer(&key) {
            return Ok(answer.to_string());
        }
        // The same question again (a retry, a later step): the user is not asked twice.
        if let Some(answer) = self.facts().earlier_answer(question).map(str::to_string) {
            self.emit(EventKind::UserReplied {
                step_id: step_id.to_string(),
                answer: Some(answer.clone()),
                error: None,
                journal_key: Some(key),
            })
            .await?;
            return Ok(answer);
        }
        self.emit(EventKind::WaitingForUser {
            step_id: step_id.to_string(),
            question: question.to_string(),
        })
        .await?;
        let answer = match self
            .wait_for_person(trace::Wait::Answer, self.user.ask(&self.run_id, question))
            .await?
        {
            Some(a) => a.map_err(Unanswered::User),
            None => Err(Unanswered::Stopped),
        };
        self.emit(EventKind::UserReplied {
            step_id: step_id.to_string(),
            answer: answer.as_ref().ok().cloned(),
            error: answer.as_ref().err().map(ToString::to_string),
            journal_key: Some(key),
        })
        .await?;
        answer.map_err(Failure::Recoverable)
    }

    /// Waits for a person (`asked`: a question, an approval; `what` names it on the wait's
    /// span) with the run `waiting`; `None` when the run was cancelled meanwhile. Suspended
    /// while waiting, the run stays `waiting` (a fatal error here) and asks again when
    /// resumed.
    async fn wait_for_person<T>(
        &self,
        what: trace::Wait,
        asked: impl std::future::Future<Output = T>,
    ) -> Result<Option<T>, StoreError> {
        let asked = asked.instrument(trace::wait_span(what));
        self.store
            .set_run_status(&self.run_id, RunStatus::Waiting)
            .await?;
        let got = tokio::select! {
            got = asked => Some(got),
            _ = self.cancel.cancelled() => None,
            _ = self.suspend.cancelled() => return Err(self.suspended()),
        };
        self.store
            .set_run_status(&self.run_id, RunStatus::Running)
            .await?;
        Ok(got)
    }

    /// Stops the run: in-flight steps end, nothing new starts. The first reason wins.
    pub fn stop(&self, reason: impl Into<String>) {
        if let Ok(mut r) = self.stop_reason.lock() {
            if r.is_none() {
                *r = Some(reason.into());
            }
        }
        self.cancel.cancel();
    }

    /// Whether the run was cancelled (by its caller), not stopped for a reason of its own
    /// (a spent budget, a stalled style).
    pub fn was_cancelled(&self) -> bool {
        self.cancel.is_cancelled() && self.stop_reason.lock().is_ok_and(|r| r.is_none())
    }

    /// Why the run was stopped, if it was.
    pub fn stop_reason(&self) -> Option<String> {
        if !self.cancel.is_cancelled() {
            return None;
        }
        self.stop_reason
            .lock()
            .ok()
            .and_then(|r| r.clone())
            .or_else(|| Some(CANCELLED.to_string()))
    }

    /// The JSON response formats each LLM client refused this run.
    pub fn json_formats(&self) -> &FormatRefusals {
        &self.json_formats
    }

    pub fn now(&self) -> chrono::DateTime<chrono::Utc> {
        self.clock.now()
    }

    pub fn store(&self) -> &dyn RunStore {
        self.store.as_ref()
    }

    /// Journals one event, then hands it to the live sink.
    pub async fn emit(&self, kind: EventKind) -> Result<(), StoreError> {
        if self.suspend.is_cancelled() && starts_work(&kind) {
            return Err(self.suspended());
        }
        let mut seq = self.seq.lock().await;
        let event = Event {
            run_id: self.run_id.clone(),
            seq: *seq + 1,
            at: self.clock.now(),
            kind,
        };
        self.store.append_event(&event).await?;
        *seq += 1;
        drop(seq);
        if let Ok(mut facts) = self.facts.lock() {
            facts.record(&event.kind);
        }
        self.sink.publish(&event);
        Ok(())
    }

    /// The error that unwinds a suspended run: it travels the store-failure path, which
    /// already stops everything without writing an outcome; `Runtime` reports it as
    /// [`Error::Suspended`](crate::Error::Suspended) by looking at the token, not the text.
    fn suspended(&self) -> StoreError {
        StoreError::Suspended(self.run_id.clone())
    }

    pub async fn save_plan(&self, plan: &Plan) -> Result<(), StoreError> {
        self.store.save_plan(&self.run_id, plan).await
    }

    pub fn usage(&self) -> RunUsage {
        self.usage.lock().map(|u| *u).unwrap_or_default()
    }

    /// Saves the run's usage so far, so a run killed mid-way still shows what it spent.
    /// Saves are taken one at a time and each reads the tally when its turn comes, so calls
    /// finishing in parallel never leave an older tally stored over a newer one.
    async fn save_usage(&self) -> Result<(), StoreError> {
        let _turn = self.usage_save.lock().await;
        let usage = self.usage();
        self.store.save_usage(&self.run_id, &usage).await
    }

    pub fn tool_context(&self, step_id: Option<&str>) -> ToolContext {
        ToolContext {
            run_id: self.run_id.clone(),
            step_id: step_id.map(str::to_string),
            workspace: self.workspace.clone(),
            cancel: self.cancel.clone(),
        }
    }

    /// One metered LLM call at call-site `scope`: served from the journal when a resumed run
    /// made this very request before, else raced against cancellation, counted and journaled.
    pub async fn chat(
        &self,
        scope: &str,
        llm: &dyn LlmClient,
        request: ChatRequest,
        step_id: Option<&str>,
    ) -> Result<ChatResponse, CallError> {
        self.chat_replayable(scope, llm, request, step_id)
            .await
            .map(|r| r.response)
    }

    /// As [`RunContext::chat`], also saying whether the reply came from the journal (its
    /// events are in the log already and must not be written again).
    pub async fn chat_replayable(
        &self,
        scope: &str,
        llm: &dyn LlmClient,
        request: ChatRequest,
        step_id: Option<&str>,
    ) -> Result<Reply, CallError> {
        let key = self.next_key(scope);
        let mut request = request;
        if request.temperature.is_some_and(|t| t > 0.0) && request.seed.is_none() {
            request.seed = Some(sampling_seed(&key));
        }
        let hash = request_hash(&request);
        if let Some(recorded) = self.journal.llm(&key, &request) {
            return Ok(Reply {
                response: recorded,
                replayed: true,
                key,
            });
        }
        if self.cancel.is_cancelled() {
            return Err(Failure::Recoverable(CallProblem::Cancelled));
        }
        if self.suspend.is_cancelled() {
            return Err(Failure::Fatal(self.suspended()));
        }
        let purpose = request.purpose;
        let started = Instant::now();
        let span = trace::chat_span(&self.trace, purpose, &request);
        let result = tokio::select! {
            r = llm.chat(request).instrument(span.clone()) => r,
            _ = self.cancel.cancelled() => return Err(Failure::Recoverable(CallProblem::Cancelled)),
        };
        trace::chat_ended(&span, &self.trace, &result);
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let usage = result.as_ref().map(|r| r.usage).unwrap_or_default();
        let spent = match self.usage.lock() {
            Ok(mut u) => {
                u.add(&usage);
                u.prompt_tokens + u.completion_tokens
            }
            Err(_) => 0,
        };
        self.emit(EventKind::LlmCalled {
            purpose,
            step_id: step_id.map(str::to_string),
            ok: result.is_ok(),
            prompt_tokens: usage.prompt_tokens,
            completion_tokens: usage.completion_tokens,
            cached_prompt_tokens: usage.cached_prompt_tokens,
            duration_ms,
            key: Some(key.clone()),
            request_hash: Some(hash),
            response: result.as_ref().ok().cloned(),
        })
        .await?;
        self.save_usage().await?;
        if let Err(e) = &result {
            tracing::warn!(error = %e, ?purpose, "LLM call failed");
        }
        if let Some(max) = self.max_tokens {
            if spent >= max {
                self.stop(format!(
                    "the token budget of {max} tokens is exhausted ({spent} used)"
                ));
            }
        }
        result
            .map(|response| Reply {
                response,
                replayed: false,
                key,
            })
            .map_err(|e| Failure::Recoverable(CallProblem::Llm(e)))
    }
}

/// Whether writing `kind` begins new work (a step, a tool call, a plan, a question): the
/// events a suspended run must not write.
fn starts_work(kind: &EventKind) -> bool {
    matches!(
        kind,
        EventKind::StepStarted { .. }
            | EventKind::ToolCalling { .. }
            | EventKind::PlanCreated { .. }
            | EventKind::WaitingForUser { .. }
            | EventKind::ApprovalRequested { .. }
            | EventKind::RunCompleted { .. }
            | EventKind::RunFailed { .. }
    )
}
