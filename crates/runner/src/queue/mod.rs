//! The queue runner (docs/durability.md, "The work queue"): claims queued runs (and runs
//! whose owner is gone) from the store and executes them, up to a number at once; a run
//! waiting for its user gives its slot back. `serve`, `worker` and `mcp serve` share it
//! (`planwright-server`); shutdown suspends the runs at their next safe point and gives
//! their leases up, so the next process on the same store goes on with them.

pub mod dispatch;
mod follow;
mod progress;
pub mod runs;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use domain::model::approval::ApprovalDecision;
use domain::model::event::Event;
use domain::ports::{
    ApprovalRequest, AskUserError, EventSink, LlmClient, RunChanges, RunMailbox, RunRecord,
    RunStore, UserChannel, WorkQueue,
};
use domain::LeaseConfig;
use tokio::sync::{broadcast, oneshot, Notify, OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use crate::database::Database;
use crate::service::{store_error, Caller, RunServiceError};
use crate::{RunSettings, RunnerError};

/// Capacity of a run's live event channel; a listener further behind re-reads the store.
pub const EVENT_CHANNEL: usize = 1024;

/// Where a run known to this server stands, before the store has its record or instead of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Phase {
    /// Stored as queued, waiting for a free slot.
    Queued,
    /// Running; the store has its record and events.
    Active,
    /// Cancelled while queued: it never started (stored as failed, without events).
    Cancelled,
    /// Executed by another process (a worker, another server): followed in the store.
    Elsewhere,
    /// Could not run (store failure or misconfiguration).
    Errored(String),
}

/// A run this server works on or was asked about: its live channel and cancel token.
pub struct Entry {
    pub workspace: PathBuf,
    pub cancel: CancellationToken,
    /// The live channel; `None` once nothing more will be published.
    pub events: Option<broadcast::Sender<Event>>,
    pub phase: Phase,
}

#[derive(Default)]
pub struct Registry {
    pub runs: HashMap<String, Entry>,
}

/// A question a run is waiting on: a `message_ask_user` question, or an approval of the
/// tool call `call_id`.
struct Pending {
    question: String,
    call_id: Option<String>,
    answer: oneshot::Sender<String>,
}

/// `message_ask_user` over HTTP: the question is in the event stream, the answer comes from
/// `POST /v1/runs/{id}/reply`. A run waiting for its answer gives its slot back (another
/// queued run may start) and takes a slot again once answered; it waits at most
/// `--ask-timeout-secs`.
pub struct ServerUser {
    pending: Mutex<HashMap<String, Pending>>,
    /// The slot of each run this server works on (see `dispatch`).
    permits: Mutex<HashMap<String, OwnedSemaphorePermit>>,
    slots: Arc<Semaphore>,
    ask_timeout: Duration,
    /// Told whenever a waiting run gave its slot back.
    pub freed: Arc<Notify>,
}

/// Why a reply could not be delivered.
#[derive(Debug, thiserror::Error)]
pub enum ReplyError {
    #[error("run '{0}' is not waiting for an answer")]
    NotWaiting(String),
    #[error("run '{run_id}' has no call '{call_id}' waiting for approval")]
    NoSuchApproval { run_id: String, call_id: String },
}

impl ServerUser {
    pub fn new(slots: Arc<Semaphore>, ask_timeout: Duration) -> ServerUser {
        ServerUser {
            pending: Mutex::new(HashMap::new()),
            permits: Mutex::new(HashMap::new()),
            slots,
            ask_timeout,
            freed: Arc::new(Notify::new()),
        }
    }

    /// Keeps `permit` as the slot of `run_id` while it runs.
    pub fn hold_slot(&self, run_id: &str, permit: OwnedSemaphorePermit) {
        if let Ok(mut m) = self.permits.lock() {
            m.insert(run_id.to_string(), permit);
        }
    }

    /// Frees the slot of `run_id` (the run ended).
    pub fn free_slot(&self, run_id: &str) {
        let permit = self.permits.lock().ok().and_then(|mut m| m.remove(run_id));
        drop(permit);
    }

    /// The `message_ask_user` question `run_id` waits on here.
    pub fn question(&self, run_id: &str) -> Option<String> {
        self.pending
            .lock()
            .ok()?
            .get(run_id)
            .filter(|p| p.call_id.is_none())
            .map(|p| p.question.clone())
    }

    /// The tool call `run_id` waits here to have approved.
    pub fn approval(&self, run_id: &str) -> Option<String> {
        self.pending.lock().ok()?.get(run_id)?.call_id.clone()
    }

    /// The tool call `run_id` waits here to have approved and what it does (`allow TOOL
    /// ARGUMENTS?`), read together so that both belong to the same pending call.
    pub fn approval_request(&self, run_id: &str) -> Option<(String, String)> {
        let map = self.pending.lock().ok()?;
        let pending = map.get(run_id)?;
        let call_id = pending.call_id.clone()?;
        Some((call_id, pending.question.clone()))
    }

    pub fn reply(&self, run_id: &str, answer: String) -> Result<(), ReplyError> {
        self.settle(run_id, None, answer)
            .map_err(|_| ReplyError::NotWaiting(run_id.to_string()))
    }

    /// Delivers a person's decision on the call `call_id` waiting for approval.
    pub fn decide(
        &self,
        run_id: &str,
        call_id: &str,
        decision: ApprovalDecision,
    ) -> Result<(), ReplyError> {
        let text = serde_json::to_value(decision)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        self.settle(run_id, Some(call_id), text)
            .map_err(|_| ReplyError::NoSuchApproval {
                run_id: run_id.to_string(),
                call_id: call_id.to_string(),
            })
    }

    /// Sends `text` to what `run_id` waits on, when it is the question (`call_id` `None`)
    /// or the approval of `call_id`.
    fn settle(&self, run_id: &str, call_id: Option<&str>, text: String) -> Result<(), ()> {
        let pending = self.pending.lock().ok().and_then(|mut m| {
            let fits = m
                .get(run_id)
                .is_some_and(|p| p.call_id.as_deref() == call_id);
            if fits {
                m.remove(run_id)
            } else {
                None
            }
        });
        match pending {
            Some(p) => p.answer.send(text).map_err(|_| ()),
            None => Err(()),
        }
    }

    /// Waits for what `run_id` is asked (`question`; `call_id` for an approval), giving the
    /// run's slot back meanwhile.
    async fn wait_for(
        &self,
        run_id: &str,
        question: &str,
        call_id: Option<&str>,
    ) -> Result<String, AskUserError> {
        let (tx, rx) = oneshot::channel();
        {
            let mut map = self
                .pending
                .lock()
                .map_err(|_| AskUserError::Unavailable("the server's state is poisoned".into()))?;
            if map.get(run_id).is_some_and(|p| !p.answer.is_closed()) {
                return Err(AskUserError::Unavailable(
                    "another question of this run is already waiting for an answer".into(),
                ));
            }
            map.insert(
                run_id.to_string(),
                Pending {
                    question: question.to_string(),
                    call_id: call_id.map(str::to_string),
                    answer: tx,
                },
            );
        }
        let _cleanup = PendingGuard {
            user: self,
            run_id: run_id.to_string(),
        };
        // Waiting needs no slot: give it back so a queued run can start meanwhile.
        let held = self.permits.lock().ok().and_then(|mut m| m.remove(run_id));
        if held.is_some() {
            drop(held);
            self.freed.notify_one();
        }
        let answer = match tokio::time::timeout(self.ask_timeout, rx).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(_)) => Err(AskUserError::NoAnswer("the question was withdrawn".into())),
            Err(_) => Err(AskUserError::NoAnswer(format!(
                "nobody answered within {} s",
                self.ask_timeout.as_secs()
            ))),
        };
        // Back to work: wait for a slot like any run.
        if let Ok(permit) = self.slots.clone().acquire_owned().await {
            self.hold_slot(run_id, permit);
        }
        answer
    }
}

#[async_trait]
impl UserChannel for ServerUser {
    /// The `user_notified` event reaches clients through the stream.
    async fn notify(&self, _run_id: &str, _text: &str) {}

    /// Waits for `POST /v1/runs/{id}/reply`; the runtime stops waiting when the run is
    /// cancelled (the pending question is then dropped).
    async fn ask(&self, run_id: &str, question: &str) -> Result<String, AskUserError> {
        self.wait_for(run_id, question, None).await
    }

    /// Waits for `POST /v1/runs/{id}/approvals/{call_id}` (the `approval_requested` event
    /// announces the call).
    async fn approve(
        &self,
        run_id: &str,
        request: &ApprovalRequest,
    ) -> Result<ApprovalDecision, AskUserError> {
        let question = match &request.reason {
            None => format!("allow {} {}?", request.tool, request.arguments),
            Some(why) => format!(
                "allow {} {}? (the rules cannot tell on their own: {why})",
                request.tool, request.arguments
            ),
        };
        let text = self
            .wait_for(run_id, &question, Some(&request.call_id))
            .await?;
        text.parse()
            .map_err(|e: String| AskUserError::NoAnswer(format!("an unreadable decision: {e}")))
    }
}

/// Removes a question that nobody will answer any more (answered, or the run stopped).
struct PendingGuard<'a> {
    user: &'a ServerUser,
    run_id: String,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        if let Ok(mut map) = self.user.pending.lock() {
            if map.get(&self.run_id).is_some_and(|p| p.answer.is_closed()) {
                map.remove(&self.run_id);
            }
        }
    }
}

/// Forwards a run's events into its broadcast channel; never blocks.
pub struct BroadcastSink(pub broadcast::Sender<Event>);

impl EventSink for BroadcastSink {
    fn publish(&self, event: &Event) {
        // No listener is fine: the store has every event.
        let _ = self.0.send(event.clone());
    }
}

/// The queue runner: the store, its queue and mailbox, the runs this process works on and
/// the user channel they ask through; shared by every front end that executes queued runs
/// (`serve`, `worker`, `mcp serve`).
pub struct QueueRunner {
    pub store: Arc<dyn RunStore>,
    pub queue: Arc<dyn WorkQueue>,
    /// Cancellations and answers for runs another process executes, and for this
    /// process's runs from other servers.
    pub mailbox: Arc<dyn RunMailbox>,
    /// Wake-ups when a run's events or mailbox change in the store.
    pub changes: Arc<dyn RunChanges>,
    /// This process's owner id and lease time (docs/durability.md, "Leases").
    pub lease: LeaseConfig,
    pub opts: RunSettings,
    /// The LLM client of runs that keep the server's model.
    pub llm: Arc<dyn LlmClient>,
    pub slots: Arc<Semaphore>,
    pub registry: Mutex<Registry>,
    pub user: Arc<ServerUser>,
    /// Fired on shutdown: no run is claimed any more, and the active ones are suspended.
    pub shutdown: CancellationToken,
    /// Where new runs' workspaces are created (`--workspace-root`).
    pub workspace_root: PathBuf,
}

impl QueueRunner {
    /// The gauges `/metrics` reports now: this process's active runs and the queue's
    /// waiting runs, read in one aggregate query (never every run).
    pub async fn gauges(&self) -> crate::metrics::Gauges {
        let active_runs = self
            .with_registry(|r| r.runs.values().filter(|e| e.phase == Phase::Active).count())
            .unwrap_or(0);
        let queue = self.queue.waiting().await.unwrap_or_else(|e| {
            tracing::warn!(error = %e, "metrics: cannot read the queue");
            domain::ports::QueueWaiting::default()
        });
        crate::metrics::Gauges { active_runs, queue }
    }

    pub fn with_registry<T>(&self, f: impl FnOnce(&mut Registry) -> T) -> Option<T> {
        self.registry.lock().ok().map(|mut r| f(&mut r))
    }

    /// Why the run ended without an outcome, when it did.
    pub fn errored(&self, run_id: &str) -> Option<String> {
        self.with_registry(|reg| match reg.runs.get(run_id).map(|e| &e.phase) {
            Some(Phase::Errored(m)) => Some(m.clone()),
            _ => None,
        })
        .flatten()
    }

    /// The stored run `run_id` when `caller` may see it; the same error as an unknown run
    /// when it is another client's.
    pub async fn visible(
        &self,
        caller: &Caller,
        run_id: &str,
    ) -> Result<RunRecord, RunServiceError> {
        let run = self.store.get_run(run_id).await.map_err(store_error)?;
        caller.visible(run, run_id)
    }
}

/// How many runs a queue runner executes at once, how long they wait for their user, and
/// where their workspaces are.
#[derive(Debug, Clone)]
pub struct QueueOptions {
    /// Runs executed at once.
    pub slots: u32,
    pub ask_timeout: Duration,
    pub workspace_root: PathBuf,
}

impl QueueRunner {
    /// Opens the database and builds the runner with `settings` as its runs' defaults;
    /// claims nothing until [`start`].
    pub async fn open(
        db: &Database,
        settings: &RunSettings,
        options: QueueOptions,
    ) -> Result<Arc<QueueRunner>, RunnerError> {
        let llm = crate::wiring::llm(settings)?;
        let crate::database::QueueStore {
            store,
            queue,
            mailbox,
            changes,
        } = db.open().await?;
        // Fails early on a build without tools.
        let probe = crate::wiring::runtime(
            llm.client.clone(),
            store.clone(),
            settings,
            &options.workspace_root,
        )?;
        let slots = Arc::new(Semaphore::new(options.slots as usize));
        let user = ServerUser::new(slots.clone(), options.ask_timeout);
        Ok(Arc::new(QueueRunner {
            store,
            queue,
            mailbox,
            changes,
            lease: probe.config.lease.clone(),
            opts: settings.clone(),
            llm: llm.client.clone(),
            slots,
            registry: Mutex::new(Registry::default()),
            user: Arc::new(user),
            shutdown: CancellationToken::new(),
            workspace_root: options.workspace_root,
        }))
    }

    /// A queue runner over one store that is also its queue, mailbox and change feed (the
    /// in-memory store of tests, an embedder's own), with the default settings, one slot
    /// and `llm` as its model; claims nothing until [`start`].
    pub fn over<S>(store: Arc<S>, llm: Arc<dyn LlmClient>) -> QueueRunner
    where
        S: RunStore + WorkQueue + RunMailbox + RunChanges + 'static,
    {
        let slots = Arc::new(Semaphore::new(1));
        QueueRunner {
            store: store.clone(),
            queue: store.clone(),
            mailbox: store.clone(),
            changes: store,
            lease: LeaseConfig::default(),
            opts: RunSettings::default(),
            llm,
            user: Arc::new(ServerUser::new(slots.clone(), Duration::from_secs(60))),
            slots,
            registry: Mutex::new(Registry::default()),
            shutdown: CancellationToken::new(),
            workspace_root: ".planwright/runs".into(),
        }
    }
}

/// Starts executing runs: adopts the runs of a dead server of this host, claims what is
/// queued, and keeps claiming (new work at once, expired leases on a timer).
pub async fn start(state: &Arc<QueueRunner>) {
    dispatch::adopt_orphans(state).await;
    dispatch::dispatch(state).await;
    tokio::spawn(poll_queue(state.clone()));
}

/// Stops claiming, suspends the active runs at their next safe point (the LLM or tool call
/// under way finishes and is journaled) and gives their leases up.
pub async fn stop(state: &Arc<QueueRunner>) {
    state.shutdown.cancel();
    wait_for_runs(state, SHUTDOWN_GRACE).await;
    release_leases(state).await;
}

/// Runs a server with a SQLite file executes at once unless `--workers` says otherwise.
pub const DEFAULT_WORKERS: u32 = 4;

/// The longest a runner goes without trying to claim (expired leases notify nobody).
const QUEUE_POLL: Duration = Duration::from_secs(1);
/// The shortest (a lease of a second or two).
const QUEUE_POLL_MIN: Duration = Duration::from_millis(250);

/// How long shutdown waits for the active runs to reach a safe point.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Claims what becomes claimable: runs queued by another process (woken by the store's
/// change feed where it has one), and runs freed elsewhere (an owner that died on another
/// host or container) once their leases expire, found by a claim every [`QUEUE_POLL`] at
/// most, so a failover takes the lease time and about a second more (docs/scaling.md).
/// New local work is dispatched at once, not by this loop.
async fn poll_queue(state: Arc<QueueRunner>) {
    let every = (state.lease.ttl / 2).clamp(QUEUE_POLL_MIN, QUEUE_POLL);
    let mut queue = state.changes.watch_queue();
    loop {
        tokio::select! {
            _ = queue.changed(every) => dispatch::dispatch(&state).await,
            // A run waiting for its user gave its slot back.
            _ = state.user.freed.notified() => dispatch::dispatch(&state).await,
            _ = state.shutdown.cancelled() => return,
        }
    }
}

/// Waits (up to `limit`) until no run of this server is still active.
async fn wait_for_runs(state: &Arc<QueueRunner>, limit: Duration) {
    let deadline = tokio::time::Instant::now() + limit;
    while tokio::time::Instant::now() < deadline {
        let active = state
            .with_registry(|r| r.runs.values().any(|e| e.phase == Phase::Active))
            .unwrap_or(false);
        if !active {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Gives up the leases of runs still active after the grace period: the next server takes
/// them at once (their journals say what finished; a call under way counts as interrupted).
async fn release_leases(state: &Arc<QueueRunner>) {
    let active: Vec<String> = state
        .with_registry(|r| {
            r.runs
                .iter()
                .filter(|(_, e)| e.phase == Phase::Active)
                .map(|(id, _)| id.clone())
                .collect()
        })
        .unwrap_or_default();
    for run_id in active {
        if let Err(e) = state.store.release_lease(&run_id, &state.lease.owner).await {
            tracing::warn!(run_id = %run_id, error = %e, "cannot release the lease at shutdown");
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::Arc;

    use domain::testing::{MemoryStore, ScriptedLlm};

    use super::QueueRunner;

    /// A queue runner over `store`, with a model that has nothing to say.
    pub fn runner_over(store: Arc<MemoryStore>) -> Arc<QueueRunner> {
        Arc::new(QueueRunner::over(
            store,
            Arc::new(ScriptedLlm::new(Vec::new())),
        ))
    }
}
