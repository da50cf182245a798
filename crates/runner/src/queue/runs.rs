//! The queue runner's [`RunService`]: the operations on runs the server's front ends call
//! (docs/architecture.md, "The server crate"). Each checks the [`Caller`]'s scope and shows
//! it only its own runs (docs/security.md, "Clients").

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{json, Value};

use domain::model::approval::ApprovalDecision;
use domain::model::names::Named;
use domain::ports::{Restored, RunMessage, RunRecord, RunStatus, WorkspaceDiff};
use domain::Mode;

use super::{dispatch, Phase, QueueRunner, ReplyError};
use crate::run_changes::{self, RunChangesError};
use crate::service::{
    store_error, unknown_run, Caller, Cancelled, NewRun, Progress, Queued, RunFeed, RunService,
    RunServiceError, RunWorkspace, Scope, ShownRun, UndoRequest,
};

type State = Arc<QueueRunner>;

#[async_trait]
impl RunService for Arc<QueueRunner> {
    async fn queue(&self, caller: &Caller, run: NewRun) -> Result<Queued, RunServiceError> {
        create(self, caller, run).await
    }

    async fn list(&self, caller: &Caller) -> Result<Vec<Value>, RunServiceError> {
        list(self, caller).await
    }

    async fn show(&self, caller: &Caller, run_id: &str) -> Result<ShownRun, RunServiceError> {
        show(self, caller, run_id).await
    }

    async fn cancel(&self, caller: &Caller, run_id: &str) -> Result<Cancelled, RunServiceError> {
        cancel(self, caller, run_id).await
    }

    async fn answer(
        &self,
        caller: &Caller,
        run_id: &str,
        answer: String,
    ) -> Result<(), RunServiceError> {
        reply(self, caller, run_id, answer).await
    }

    async fn decide(
        &self,
        caller: &Caller,
        run_id: &str,
        call_id: &str,
        decision: ApprovalDecision,
    ) -> Result<(), RunServiceError> {
        decide(self, caller, run_id, call_id, decision).await
    }

    async fn diff(
        &self,
        caller: &Caller,
        run_id: &str,
        step: Option<u32>,
    ) -> Result<WorkspaceDiff, RunServiceError> {
        caller.require(Scope::Read)?;
        let run = self.visible(caller, run_id).await?;
        let plan = self.store.latest_plan(run_id).await.map_err(store_error)?;
        let events = self.store.events(run_id, 0).await.map_err(store_error)?;
        let checkpoints = checkpoint_store(self)?;
        Ok(run_changes::diff(checkpoints.as_ref(), &run, plan.as_ref(), &events, step).await?)
    }

    async fn undo(
        &self,
        caller: &Caller,
        run_id: &str,
        request: UndoRequest,
    ) -> Result<Restored, RunServiceError> {
        caller.require(Scope::Submit)?;
        let run = self.visible(caller, run_id).await?;
        let plan = self.store.latest_plan(run_id).await.map_err(store_error)?;
        let events = self.store.events(run_id, 0).await.map_err(store_error)?;
        let checkpoints = checkpoint_store(self)?;
        Ok(run_changes::undo(
            self.store.as_ref(),
            checkpoints.as_ref(),
            &run,
            plan.as_ref(),
            &events,
            &request,
        )
        .await?)
    }

    async fn follow(
        &self,
        caller: &Caller,
        run_id: &str,
        after: u64,
    ) -> Result<RunFeed, RunServiceError> {
        super::follow::follow(self, caller, run_id, after).await
    }

    async fn progress(&self, caller: &Caller, run_id: &str) -> Result<Progress, RunServiceError> {
        super::progress::progress(self, caller, run_id).await
    }

    async fn workspace(&self, caller: &Caller, run_id: &str) -> Result<PathBuf, RunServiceError> {
        workspace(self, caller, run_id).await
    }

    async fn workspaces(&self, caller: &Caller) -> Result<Vec<RunWorkspace>, RunServiceError> {
        caller.require(Scope::Read)?;
        let runs = self.store.list_runs().await.map_err(store_error)?;
        Ok(runs
            .into_iter()
            .filter(|r| caller.sees(r))
            .map(|r| RunWorkspace {
                run_id: r.run_id,
                task: r.task,
                workspace: r.workspace.into(),
            })
            .collect())
    }
}

/// The workspace of a run known to the store or to this process, when `caller` may read
/// it (another client's run is unknown).
async fn workspace(
    state: &State,
    caller: &Caller,
    run_id: &str,
) -> Result<PathBuf, RunServiceError> {
    caller.require(Scope::Read)?;
    if let Some(r) = state.store.get_run(run_id).await.map_err(store_error)? {
        return caller
            .visible(Some(r), run_id)
            .map(|r| PathBuf::from(r.workspace));
    }
    if !caller.is_admin() {
        return Err(unknown_run(run_id));
    }
    state
        .with_registry(|reg| reg.runs.get(run_id).map(|e| e.workspace.clone()))
        .flatten()
        .ok_or_else(|| unknown_run(run_id))
}

/// The checkpoints of the runs under this process's workspace root.
fn checkpoint_store(
    state: &QueueRunner,
) -> Result<Arc<dyn domain::ports::WorkspaceCheckpoints>, RunServiceError> {
    crate::wiring::checkpoint_store(&state.workspace_root, &state.opts)
        .ok_or_else(|| RunChangesError::Unsupported.into())
}

/// Stores the run as queued (before anyone hears of it: a restart cannot lose it) and
/// dispatches what can start.
async fn create(state: &State, client: &Caller, req: NewRun) -> Result<Queued, RunServiceError> {
    client.require(Scope::Submit)?;
    let task = req.task.trim().to_string();
    if task.is_empty() {
        return Err(RunServiceError::BadRequest("`task` is empty".into()));
    }
    let mut opts = state.opts.clone();
    if let Some(mode) = req.mode.as_deref().filter(|m| !m.trim().is_empty()) {
        opts.mode =
            Mode::from_name(mode.trim()).map_err(|e| RunServiceError::BadRequest(e.to_string()))?;
    }
    let model = req
        .model
        .as_deref()
        .map(str::trim)
        .filter(|m| !m.is_empty());
    if let Some(model) = model.filter(|m| *m != state.opts.model) {
        if state.opts.replay.is_some() || state.opts.record.is_some() {
            return Err(RunServiceError::BadRequest(
                "this server replays or records its LLM; `model` cannot be overridden".into(),
            ));
        }
        opts.model = model.to_string();
        // Built to refuse a bad model now; the worker that claims the run builds its own.
        crate::wiring::llm(&opts)
            .map_err(|e| RunServiceError::BadRequest(format!("cannot use model '{model}': {e}")))?;
    }
    let run_id = domain::ports::IdGen::new_id(&domain::ports::TimeRandomIds, "run");
    let workspace = crate::workspace::create_workspace(&crate::workspace::run_workspace(
        &state.workspace_root,
        &run_id,
    ))
    .map_err(|e| RunServiceError::Internal(e.to_string()))?;
    let record = RunRecord {
        run_id: run_id.clone(),
        task,
        mode: opts.mode.name().to_string(),
        status: RunStatus::Queued,
        workspace: workspace.display().to_string(),
        created_at: chrono::Utc::now(),
        finished_at: None,
        summary: None,
        error: None,
        usage: Default::default(),
        lease: None,
        queue_request: Some({
            let mut request = dispatch::queue_request(&opts);
            if let Some(trace) = &req.trace {
                trace.store_in(&mut request);
            }
            request
        }),
        client: client.name().map(str::to_string),
    };
    state.queue.enqueue(&record).await.map_err(store_error)?;
    dispatch::channel_for(state, &record);
    dispatch::dispatch(state).await;
    let position = state.queue.position(&run_id).await.map_err(store_error)?;
    Ok(Queued { run_id, position })
}

/// Every stored run the client may see, newest first, as `GET /v1/runs` lists them.
async fn list(state: &State, client: &Caller) -> Result<Vec<Value>, RunServiceError> {
    client.require(Scope::Read)?;
    let mut stored = state.store.list_runs().await.map_err(store_error)?;
    stored.retain(|r| client.sees(r));
    let mut runs: Vec<Value> = Vec::new();
    if let Value::Array(list) = crate::json::runs_list_json(&stored) {
        for (mut v, r) in list.into_iter().zip(&stored) {
            v["mode"] = json!(r.mode);
            v["queued"] = json!(r.status == RunStatus::Queued);
            v["client"] = json!(r.client);
            if cancelled_while_queued(r) {
                v["status"] = json!("cancelled");
            }
            if let Some(error) = state.errored(&r.run_id) {
                v["status"] = json!("failed");
                v["error"] = json!(error);
            }
            runs.push(v);
        }
    }
    Ok(runs)
}

/// One run as `GET /v1/runs/{id}` shows it: record, plan, tool calls, what it waits on.
async fn show(state: &State, client: &Caller, run_id: &str) -> Result<ShownRun, RunServiceError> {
    client.require(Scope::Read)?;
    let run = state.visible(client, run_id).await?;
    let plan = state.store.latest_plan(run_id).await.map_err(store_error)?;
    let events = state.store.events(run_id, 0).await.map_err(store_error)?;
    let mut v = crate::json::run_show_json(&run, plan.as_ref(), &events);
    v["queued"] = json!(run.status == RunStatus::Queued);
    v["client"] = json!(run.client);
    if cancelled_while_queued(&run) {
        v["status"] = json!("cancelled");
    }
    if run.status == RunStatus::Queued {
        v["position"] = json!(state.queue.position(run_id).await.map_err(store_error)?);
    }
    // A run that stopped without a final event (cancelled while planning, store failure).
    if let Some(error) = state.errored(run_id) {
        v["status"] = json!("failed");
        v["error"] = json!(error);
    }
    // Bytes the run's workspace checkpoints take (docs/checkpoints.md).
    if let Some(checkpoints) = crate::wiring::checkpoint_store(&state.workspace_root, &state.opts) {
        v["space_used"] = json!(run_changes::space_used(checkpoints.as_ref(), run_id)
            .await
            .ok());
    }
    v["pending_question"] = json!(state.user.question(run_id));
    let (call_id, request) = state.user.approval_request(run_id).unzip();
    v["pending_approval"] = json!(call_id);
    v["pending_approval_request"] = json!(request);
    Ok(ShownRun {
        detail: v,
        workspace: PathBuf::from(&run.workspace),
    })
}

/// Whether the run exists anywhere (store or registry) for `client`: admin also reaches a
/// run this process knows before the store has it; a named client only its stored runs.
async fn known(state: &State, client: &Caller, run_id: &str) -> Result<bool, RunServiceError> {
    if client.is_admin()
        && state
            .with_registry(|r| r.runs.contains_key(run_id))
            .unwrap_or(false)
    {
        return Ok(true);
    }
    let run = state.store.get_run(run_id).await.map_err(store_error)?;
    Ok(run.is_some_and(|r| client.sees(&r)))
}

/// Cancels a queued or running run; a run that already ended is a conflict.
async fn cancel(
    state: &State,
    client: &Caller,
    run_id: &str,
) -> Result<Cancelled, RunServiceError> {
    client.require(Scope::Submit)?;
    let run = state.visible(client, run_id).await?;
    if run.status == RunStatus::Queued {
        let now = chrono::Utc::now();
        if state
            .queue
            .cancel_queued(run_id, QUEUED_CANCEL, now)
            .await
            .map_err(store_error)?
        {
            state.with_registry(|reg| {
                if let Some(e) = reg.runs.get_mut(run_id) {
                    e.phase = Phase::Cancelled;
                    e.events = None;
                }
            });
            return Ok(Cancelled::WhileQueued);
        }
        // Claimed meanwhile: it is starting here or elsewhere; cancel it as a running run.
    }
    let local = state
        .with_registry(|reg| {
            reg.runs
                .get(run_id)
                // A run queued here but claimed since (cancel_queued failed) may be running
                // in another process: the mailbox reaches it wherever it runs.
                .filter(|e| e.phase == Phase::Active)
                .map(|e| e.cancel.clone())
        })
        .flatten();
    match local {
        Some(cancel) => {
            cancel.cancel();
            Ok(Cancelled::Cancelling)
        }
        // Executed by another process (a worker, another server): its owner reads the
        // run's mailbox.
        None if matches!(
            run.status,
            RunStatus::Queued | RunStatus::Running | RunStatus::Waiting
        ) =>
        {
            state
                .mailbox
                .post(run_id, &RunMessage::Cancel)
                .await
                .map_err(store_error)?;
            Ok(Cancelled::Cancelling)
        }
        None => Err(RunServiceError::Conflict(format!(
            "run '{run_id}' is not running ({})",
            crate::liveness::Liveness::of(&run).shown()
        ))),
    }
}

pub fn cancelled_while_queued(run: &RunRecord) -> bool {
    run.status == RunStatus::Failed && run.error.as_deref() == Some(QUEUED_CANCEL)
}

use crate::service::QUEUED_CANCEL;

/// Answers the `message_ask_user` question the run waits on, here or in the process that
/// executes it.
async fn reply(
    state: &State,
    client: &Caller,
    run_id: &str,
    answer: String,
) -> Result<(), RunServiceError> {
    client.require(Scope::Approve)?;
    if !known(state, client, run_id).await? {
        return Err(unknown_run(run_id));
    }
    let Err(not_here) = state.user.reply(run_id, answer.clone()) else {
        return Ok(());
    };
    post_to_executor(
        state,
        run_id,
        &RunMessage::Answer { text: answer },
        &not_here,
    )
    .await
}

/// A person's decision on a tool call waiting for approval (`approval_requested`), here or
/// in the process executing the run.
async fn decide(
    state: &State,
    client: &Caller,
    run_id: &str,
    call_id: &str,
    decision: ApprovalDecision,
) -> Result<(), RunServiceError> {
    client.require(Scope::Approve)?;
    if !known(state, client, run_id).await? {
        return Err(unknown_run(run_id));
    }
    let Err(not_here) = state.user.decide(run_id, call_id, decision) else {
        return Ok(());
    };
    if state.user.approval(run_id).is_some() {
        // Waiting here, on another call.
        return Err(RunServiceError::Conflict(not_here.to_string()));
    }
    let message = RunMessage::Approval {
        call_id: call_id.to_string(),
        decision,
    };
    post_to_executor(state, run_id, &message, &not_here).await
}

/// For a run not waiting in this process: posts `message` to the process that executes it
/// (the run mailbox), when the store says the run waits; a conflict with `not_here`
/// otherwise.
async fn post_to_executor(
    state: &State,
    run_id: &str,
    message: &RunMessage,
    not_here: &ReplyError,
) -> Result<(), RunServiceError> {
    let waiting = state
        .store
        .get_run(run_id)
        .await
        .map_err(store_error)?
        .is_some_and(|r| r.status == RunStatus::Waiting);
    if !waiting {
        return Err(RunServiceError::Conflict(not_here.to_string()));
    }
    state
        .mailbox
        .post(run_id, message)
        .await
        .map_err(store_error)
}
