//! The application service the server's front ends (the HTTP API, the MCP service) call:
//! [`RunService`], the operations on runs (queue, list, show, cancel, answer, decide; follow
//! its events, read its progress, find its workspace; diff and undo its changes), with
//! plain typed inputs, the [`Caller`] among them, and a typed [`RunServiceError`] each front
//! end maps its own way. The queue runner implements it (`queue/runs.rs`); the server's
//! tests put a fake in its place (docs/architecture.md, "The server crate").

use std::path::PathBuf;
use std::task::{Context, Poll};

use async_trait::async_trait;
use serde_json::Value;
use tokio::sync::mpsc;

use domain::model::approval::ApprovalDecision;
use domain::model::event::Event;
use domain::ports::{Restored, WorkspaceDiff};

pub use crate::caller::{Caller, Scope};
pub use crate::run_changes::UndoRequest;
pub use crate::service_error::{store_error, unknown_run, RunServiceError};

/// What a caller asks to run.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct NewRun {
    pub task: String,
    /// A planning style's name ([`domain::Mode`]'s); the server's own when `None` or blank.
    pub mode: Option<String>,
    /// A model name; the server's own when `None` or blank.
    pub model: Option<String>,
    /// The caller's trace context: the run's spans continue its trace
    /// (docs/observability.md, "Across processes").
    pub trace: Option<crate::telemetry::context::CallerTrace>,
}

/// A run in the queue: started at once (`position` `None`) or waiting for a slot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Queued {
    pub run_id: String,
    pub position: Option<usize>,
}

/// One run as shown: its detail (record, plan, tool calls, what it waits on) and where its
/// workspace is, for the front end to list its files.
#[derive(Debug, Clone, PartialEq)]
pub struct ShownRun {
    /// `GET /v1/runs/{id}`'s body, the files aside.
    pub detail: Value,
    pub workspace: PathBuf,
}

/// What a cancellation did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cancelled {
    /// The run was still queued: it will never start.
    WhileQueued,
    /// The run is told to stop at its next safe point (here, or through its mailbox).
    Cancelling,
}

/// A run's events as they come ([`RunService::follow`]): the stored ones after the sequence
/// number asked for, then the live ones, each once and in order, until the run's final
/// event (or why it stopped without one). Dropping it stops the feed; a follower that stops
/// reading for long is dropped (it follows again from its last sequence number).
#[derive(Debug)]
pub struct RunFeed(mpsc::Receiver<FeedItem>);

impl RunFeed {
    /// A feed of what `items` receives (the queue runner's, or a fake service's).
    pub fn new(items: mpsc::Receiver<FeedItem>) -> RunFeed {
        RunFeed(items)
    }

    /// The next item; `None` once the feed ended.
    pub async fn next(&mut self) -> Option<FeedItem> {
        self.0.recv().await
    }

    /// Takes every item already there, without waiting (a follower that only needs to
    /// know something moved); true when the feed ended.
    pub fn skip_ready(&mut self) -> bool {
        loop {
            match self.0.try_recv() {
                Ok(_) => {}
                Err(mpsc::error::TryRecvError::Empty) => return false,
                Err(mpsc::error::TryRecvError::Disconnected) => return true,
            }
        }
    }

    /// The next item, for a front end that makes the feed a stream.
    pub fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<FeedItem>> {
        self.0.poll_recv(cx)
    }
}

/// One item of a [`RunFeed`].
#[derive(Debug)]
pub enum FeedItem {
    /// A stored event of the run.
    Event(Box<Event>),
    /// The run stopped without a final event: the feed's last item.
    Stopped(RunStopped),
    /// The store could not be read: the feed's last item.
    Unreadable(RunServiceError),
}

/// Why a run stopped without a final event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunStopped {
    /// Cancelled while queued: it never started.
    CancelledBeforeStart,
    /// It could not run (a store failure, a misconfiguration): the reason.
    Errored(String),
}

impl RunStopped {
    /// The sentence a front end shows.
    pub fn message(&self) -> String {
        match self {
            RunStopped::CancelledBeforeStart => QUEUED_CANCEL.to_string(),
            RunStopped::Errored(m) => m.clone(),
        }
    }
}

/// The error recorded for a run cancelled before it started.
pub const QUEUED_CANCEL: &str = "the run was cancelled before it started";

/// Where a run stands ([`RunService::progress`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    /// The run ended, waits for its user (an answer or a decision), was interrupted, or
    /// could not run: nothing moves until someone acts.
    pub settled: bool,
    /// Steps settled (done, failed, skipped) of its latest plan.
    pub done: usize,
    /// Steps of its latest plan (0 before the first plan).
    pub total: usize,
    /// One line: the step under way, or where the run stopped.
    pub message: String,
}

/// A run's workspace, for listing its files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunWorkspace {
    pub run_id: String,
    pub task: String,
    pub workspace: PathBuf,
}

/// The operations on runs, for the front ends. Each takes the [`Caller`]: it needs its
/// scope, and sees only its own runs.
#[async_trait]
pub trait RunService: Send + Sync {
    /// Stores the run as queued (before anyone hears of it: a restart cannot lose it) and
    /// starts what can start.
    async fn queue(&self, caller: &Caller, run: NewRun) -> Result<Queued, RunServiceError>;

    /// Every stored run the caller may see, newest first, as `GET /v1/runs` lists them.
    async fn list(&self, caller: &Caller) -> Result<Vec<Value>, RunServiceError>;

    /// One run as `GET /v1/runs/{id}` shows it, the files aside.
    async fn show(&self, caller: &Caller, run_id: &str) -> Result<ShownRun, RunServiceError>;

    /// Cancels a queued or running run; a run that already ended is a conflict.
    async fn cancel(&self, caller: &Caller, run_id: &str) -> Result<Cancelled, RunServiceError>;

    /// Answers the `message_ask_user` question the run waits on, wherever it runs.
    async fn answer(
        &self,
        caller: &Caller,
        run_id: &str,
        answer: String,
    ) -> Result<(), RunServiceError>;

    /// A person's decision on a tool call waiting for approval, wherever the run runs.
    async fn decide(
        &self,
        caller: &Caller,
        run_id: &str,
        call_id: &str,
        decision: ApprovalDecision,
    ) -> Result<(), RunServiceError>;

    /// The run's events after sequence number `after` (0: all), then the live ones, until
    /// its final event, wherever it runs.
    async fn follow(
        &self,
        caller: &Caller,
        run_id: &str,
        after: u64,
    ) -> Result<RunFeed, RunServiceError>;

    /// Where the run stands, read cheaply (its record and latest plan).
    async fn progress(&self, caller: &Caller, run_id: &str) -> Result<Progress, RunServiceError>;

    /// The run's workspace folder.
    async fn workspace(&self, caller: &Caller, run_id: &str) -> Result<PathBuf, RunServiceError>;

    /// The workspaces of every stored run the caller may see, newest first.
    async fn workspaces(&self, caller: &Caller) -> Result<Vec<RunWorkspace>, RunServiceError>;

    /// What the run changed in its workspace, or what step `step` (its index in the plan,
    /// from 0) changed, from its checkpoints (docs/checkpoints.md).
    async fn diff(
        &self,
        caller: &Caller,
        run_id: &str,
        step: Option<u32>,
    ) -> Result<WorkspaceDiff, RunServiceError>;

    /// Puts the run's workspace back as it was before the run (or a step); a live run is a
    /// conflict, and so are files changed after the run unless `force` (docs/checkpoints.md).
    async fn undo(
        &self,
        caller: &Caller,
        run_id: &str,
        request: UndoRequest,
    ) -> Result<Restored, RunServiceError>;
}
