//! The application service the server's front ends (the HTTP API, the MCP service) call:
//! [`RunService`], the operations on runs (queue, list, show, cancel, answer, decide), with
//! plain typed inputs, the [`Caller`] among them, and a typed [`RunServiceError`] each front
//! end maps its own way. The queue runner implements it (`queue/runs.rs`); the server's
//! tests put a fake in its place (docs/architecture.md, "The server crate").

use std::path::PathBuf;

use async_trait::async_trait;
use serde_json::Value;

use domain::model::approval::ApprovalDecision;

pub use crate::caller::{Caller, Scope};
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
}
