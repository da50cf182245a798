//! `planwright serve`: the HTTP API under `/v1`, the live event stream (SSE) and the web
//! page at `/`.
//!
//! ```text
//! POST /v1/runs ─▶ registry (queued | active) ─▶ tokio task: Semaphore slot ─▶ Runtime::run
//!                                                   sink ─▶ broadcast ─▶ SSE (replay from store)
//! ```
//!
//! Runs execute concurrently up to `--max-concurrent-runs`; the rest wait in a queue. Every
//! run has its own workspace (`./.planwright/runs/<id>/workspace`). Live listeners never slow
//! a run: events go through a bounded broadcast channel, and a listener that falls behind
//! re-reads what it missed from the store.

mod api;
mod auth;
mod listener;
mod sse;
mod web;

use std::collections::{HashMap, VecDeque};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use domain::event::Event;
use domain::ports::{AskUserError, EventSink, LlmClient, RunStore, UserChannel};
use domain::RunRequest;
use tokio::sync::{broadcast, oneshot, OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use crate::cli::{RunOptions, ServeArgs};
use crate::AppError;

/// Capacity of a run's live event channel; a listener further behind re-reads the store.
const EVENT_CHANNEL: usize = 1024;

/// Where a run known to this server stands, before the store has its record or instead of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Waiting for a free slot; its record is not in the store yet.
    Queued,
    /// Running; the store has its record and events.
    Active,
    /// Cancelled while queued: it never started and has no record.
    Cancelled,
    /// Could not run (store failure or misconfiguration).
    Errored(String),
}

impl Phase {
    pub(crate) fn as_str(&self) -> &'static str {
        match self {
            Phase::Queued => "queued",
            Phase::Active => "running",
            Phase::Cancelled => "cancelled",
            Phase::Errored(_) => "failed",
        }
    }
}

/// A run this server started (queued, running, or stopped before it had a record).
pub(crate) struct Entry {
    pub task: String,
    pub mode: String,
    pub created_at: DateTime<Utc>,
    pub workspace: PathBuf,
    pub cancel: CancellationToken,
    /// The live channel; `None` once nothing more will be published.
    pub events: Option<broadcast::Sender<Event>>,
    pub phase: Phase,
}

#[derive(Default)]
pub(crate) struct Registry {
    pub runs: HashMap<String, Entry>,
    /// Queued run ids, oldest first.
    pub queue: VecDeque<String>,
}

impl Registry {
    /// 1-based place of a queued run.
    pub fn position(&self, run_id: &str) -> Option<usize> {
        self.queue.iter().position(|id| id == run_id).map(|i| i + 1)
    }
}

/// A question a run is waiting on.
struct Pending {
    question: String,
    answer: oneshot::Sender<String>,
}

/// `message_ask_user` over HTTP: the question is in the event stream, the answer comes from
/// `POST /v1/runs/{id}/reply`.
#[derive(Default)]
pub(crate) struct ServerUser {
    pending: Mutex<HashMap<String, Pending>>,
}

/// Why a reply could not be delivered.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReplyError {
    #[error("run '{0}' is not waiting for an answer")]
    NotWaiting(String),
}

impl ServerUser {
    pub fn question(&self, run_id: &str) -> Option<String> {
        self.pending
            .lock()
            .ok()?
            .get(run_id)
            .map(|p| p.question.clone())
    }

    pub fn reply(&self, run_id: &str, answer: String) -> Result<(), ReplyError> {
        let pending = self.pending.lock().ok().and_then(|mut m| m.remove(run_id));
        match pending {
            Some(p) => p
                .answer
                .send(answer)
                .map_err(|_| ReplyError::NotWaiting(run_id.to_string())),
            None => Err(ReplyError::NotWaiting(run_id.to_string())),
        }
    }
}

#[async_trait]
impl UserChannel for ServerUser {
    /// The `user_notified` event reaches clients through the stream.
    async fn notify(&self, _run_id: &str, _text: &str) {}

    /// Waits for `POST /v1/runs/{id}/reply`; the runtime stops waiting when the run is
    /// cancelled (the pending question is then dropped).
    async fn ask(&self, run_id: &str, question: &str) -> Result<String, AskUserError> {
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
                    answer: tx,
                },
            );
        }
        let _cleanup = PendingGuard {
            user: self,
            run_id: run_id.to_string(),
        };
        rx.await
            .map_err(|_| AskUserError::NoAnswer("the question was withdrawn".into()))
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
struct BroadcastSink(broadcast::Sender<Event>);

impl EventSink for BroadcastSink {
    fn publish(&self, event: &Event) {
        // No listener is fine: the store has every event.
        let _ = self.0.send(event.clone());
    }
}

/// Everything the handlers share.
pub(crate) struct AppState {
    pub store: Arc<dyn RunStore>,
    pub opts: RunOptions,
    /// The LLM client of runs that keep the server's model.
    pub llm: Arc<dyn LlmClient>,
    pub token: String,
    pub slots: Arc<Semaphore>,
    pub registry: Mutex<Registry>,
    pub user: Arc<ServerUser>,
    /// Cancelled on shutdown.
    pub shutdown: CancellationToken,
}

pub(crate) type State = Arc<AppState>;

impl AppState {
    pub fn with_registry<T>(&self, f: impl FnOnce(&mut Registry) -> T) -> Option<T> {
        self.registry.lock().ok().map(|mut r| f(&mut r))
    }
}

/// A run ready to be started by [`start_run`].
pub(crate) struct NewRun {
    pub run_id: String,
    pub task: String,
    pub workspace: PathBuf,
    /// The serve options with the request's mode and model applied.
    pub opts: RunOptions,
    /// The server's LLM client, or one built for the request's model.
    pub llm: Arc<dyn LlmClient>,
}

/// Registers the run and spawns it; returns the queue position when it has to wait.
pub(crate) fn start_run(state: &State, new: NewRun) -> Option<usize> {
    let NewRun {
        run_id,
        task,
        workspace,
        opts,
        llm,
    } = new;
    let (tx, _) = broadcast::channel(EVENT_CHANNEL);
    let cancel = state.shutdown.child_token();
    let permit = state.slots.clone().try_acquire_owned().ok();
    let mode = clap::ValueEnum::to_possible_value(&opts.mode)
        .map(|v| v.get_name().to_string())
        .unwrap_or_default();
    let position = state
        .with_registry(|reg| {
            reg.runs.insert(
                run_id.clone(),
                Entry {
                    task: task.clone(),
                    mode,
                    created_at: Utc::now(),
                    workspace: workspace.clone(),
                    cancel: cancel.clone(),
                    events: Some(tx.clone()),
                    phase: if permit.is_some() {
                        Phase::Active
                    } else {
                        Phase::Queued
                    },
                },
            );
            if permit.is_none() {
                reg.queue.push_back(run_id.clone());
                reg.position(&run_id)
            } else {
                None
            }
        })
        .flatten();
    let state = state.clone();
    tokio::spawn(async move {
        let request = RunRequest {
            run_id,
            task,
            workspace,
        };
        execute(state, request, (opts, llm), tx, cancel, permit).await;
    });
    position
}

async fn execute(
    state: State,
    request: RunRequest,
    (opts, llm): (RunOptions, Arc<dyn LlmClient>),
    events: broadcast::Sender<Event>,
    cancel: CancellationToken,
    permit: Option<OwnedSemaphorePermit>,
) {
    let run_id = request.run_id.clone();
    let permit = match permit {
        Some(p) => p,
        None => {
            let acquired = tokio::select! {
                p = state.slots.clone().acquire_owned() => p.ok(),
                _ = cancel.cancelled() => None,
            };
            let started = acquired.is_some();
            state.with_registry(|reg| {
                reg.queue.retain(|id| id != &run_id);
                if let Some(e) = reg.runs.get_mut(&run_id) {
                    if started {
                        e.phase = Phase::Active;
                    } else {
                        e.phase = Phase::Cancelled;
                        e.events = None;
                    }
                }
            });
            match acquired {
                Some(p) => p,
                None => {
                    tracing::info!(run_id = %run_id, "queued run cancelled");
                    return;
                }
            }
        }
    };
    tracing::info!(run_id = %run_id, "run starting");
    let result = run(&state, request, &opts, llm, events, cancel).await;
    drop(permit);
    state.with_registry(|reg| match result {
        // The store has the run from now on.
        Ok(()) => {
            reg.runs.remove(&run_id);
        }
        Err(e) => {
            tracing::warn!(run_id = %run_id, error = %e, "the run ended without an outcome");
            if let Some(entry) = reg.runs.get_mut(&run_id) {
                entry.phase = Phase::Errored(e);
                entry.events = None;
            }
        }
    });
}

/// Builds the run's runtime (its events go to the run's channel, its questions to the
/// server's user channel) and runs it to the end.
async fn run(
    state: &State,
    request: RunRequest,
    opts: &RunOptions,
    llm: Arc<dyn LlmClient>,
    events: broadcast::Sender<Event>,
    cancel: CancellationToken,
) -> Result<(), String> {
    let mut runtime =
        crate::wiring::runtime(llm, state.store.clone(), opts).map_err(|e| e.to_string())?;
    runtime.sink = Arc::new(BroadcastSink(events));
    runtime.user = state.user.clone();
    match runtime.run(request, cancel).await {
        Ok(_) => Ok(()),
        Err(domain::Error::Cancelled) => {
            Err("the run was cancelled before its plan was made".to_string())
        }
        Err(e) => Err(format!("the run could not go on: {e}")),
    }
}

/// `planwright serve`.
pub async fn serve(db: &Path, args: ServeArgs) -> Result<ExitCode, AppError> {
    if args.opts.workspace.is_some() {
        return Err(AppError::Config(
            "serve gives every run its own workspace; --workspace is not supported here".into(),
        ));
    }
    let token = auth::resolve_token(db, args.token.as_deref(), &args.addr)?;
    let llm = crate::wiring::llm(&args.opts)?;
    let store = crate::wiring::store(db)?;
    // Fails early on a build without tools.
    crate::wiring::runtime(llm.client.clone(), store.clone(), &args.opts)?;
    let listener = tokio::net::TcpListener::bind(args.addr)
        .await
        .map_err(|e| AppError::Config(format!("cannot listen on {}: {e}", args.addr)))?;
    let local = listener
        .local_addr()
        .map_err(|e| AppError::Config(format!("cannot read the bound address: {e}")))?;
    let state: State = Arc::new(AppState {
        store,
        opts: args.opts.clone(),
        llm: llm.client.clone(),
        token,
        slots: Arc::new(Semaphore::new(args.max_concurrent_runs as usize)),
        registry: Mutex::new(Registry::default()),
        user: Arc::new(ServerUser::default()),
        shutdown: CancellationToken::new(),
    });
    let router = api::router(state.clone());
    {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "listening on http://{local}");
        let _ = err.flush();
    }
    let stop = state.shutdown.clone();
    let shutdown_state = state.clone();
    let limits = listener::Limits {
        max_connections: args.max_connections as usize,
        header_timeout: Duration::from_secs(args.header_timeout_secs.into()),
        ..listener::Limits::default()
    };
    listener::serve(listener, router, limits, async move {
        let _ = tokio::signal::ctrl_c().await;
        let _ = writeln!(
            std::io::stderr(),
            "\nshutting down: cancelling the active runs"
        );
        stop.cancel();
        wait_for_runs(&shutdown_state, Duration::from_secs(10)).await;
    })
    .await;
    Ok(ExitCode::SUCCESS)
}

/// Waits (up to `limit`) until no run of this server is still active.
async fn wait_for_runs(state: &State, limit: Duration) {
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
