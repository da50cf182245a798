//! The store port: where runs, plan versions and the event log live ([`RunStore`]), the
//! leases that say who works on a run, and the durable work queue ([`WorkQueue`]).

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use thiserror::Error;

use crate::model::event::{Event, RunUsage};
use crate::model::plan::Plan;

/// Lifecycle of a run as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Stored by `planwright serve` (or a client of its queue) and not started yet: a worker
    /// claims it ([`WorkQueue::claim`]).
    Queued,
    Running,
    /// Paused on `message_ask_user` until the user answers.
    Waiting,
    Completed,
    Failed,
}

impl RunStatus {
    pub const ALL: [RunStatus; 5] = [
        RunStatus::Queued,
        RunStatus::Running,
        RunStatus::Waiting,
        RunStatus::Completed,
        RunStatus::Failed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Queued => "queued",
            RunStatus::Running => "running",
            RunStatus::Waiting => "waiting",
            RunStatus::Completed => "completed",
            RunStatus::Failed => "failed",
        }
    }
    pub fn parse(s: &str) -> Option<RunStatus> {
        RunStatus::ALL.into_iter().find(|st| st.as_str() == s)
    }
}

/// A run as the store keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub run_id: String,
    pub task: String,
    pub mode: String,
    pub status: RunStatus,
    pub workspace: String,
    pub created_at: DateTime<Utc>,
    #[serde(default)]
    pub finished_at: Option<DateTime<Utc>>,
    #[serde(default)]
    pub summary: Option<String>,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub usage: RunUsage,
    /// Who works on the run, until when: a `running` or `waiting` run whose lease expired
    /// was interrupted and may be taken over (docs/durability.md, "Leases").
    #[serde(default)]
    pub lease: Option<Lease>,
    /// For a run that went through the work queue: what the client asked for beyond the task
    /// (mode, model), so whichever worker claims it runs it the same way. `None` for runs
    /// started directly (`planwright run`); only queued runs are claimed by workers. Also
    /// keeps the context of the run's latest span (`engine::trace::RUN_SPAN_KEY`).
    #[serde(default)]
    pub queue_request: Option<Value>,
    /// The named API client (token name) that submitted the run, on a server shared by
    /// several clients: only it and an admin see or act on the run (docs/security.md,
    /// "Clients"). `None` for runs of the admin token, of the CLI and of earlier builds.
    /// Written when the run is created or queued and never changed by progress updates.
    #[serde(default)]
    pub client: Option<String>,
}

/// A time-limited claim on a run: only its owner works on the run, and renews it while it
/// does. Ownership is never inferred from a process id (PID namespaces, other hosts).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lease {
    /// An opaque id of the owning process, unique across hosts and restarts.
    pub owner: String,
    pub until: DateTime<Utc>,
}

impl Lease {
    /// Whether the lease still holds at `now`.
    pub fn is_live(&self, now: DateTime<Utc>) -> bool {
        self.until > now
    }
}

/// The runs waiting in the queue (status `queued`), as `/metrics` reports them without
/// loading every run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueWaiting {
    pub count: usize,
    /// When the oldest of them was created.
    pub oldest: Option<DateTime<Utc>>,
}

/// A request to take a run's lease over (one atomic compare-and-set in the store).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseClaim {
    pub owner: String,
    pub now: DateTime<Utc>,
    /// The expiry of the new lease.
    pub until: DateTime<Utc>,
    /// An owner the caller has proved gone (its process no longer exists on this host): its
    /// lease may be taken before it expires.
    pub stale_owner: Option<String>,
}

/// The answer to a [`LeaseClaim`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeaseOutcome {
    /// The caller owns the run now.
    Acquired,
    /// Someone else holds a live lease.
    Held(Lease),
    /// No such run.
    Unknown,
}

/// Durable home of runs, plan versions, steps and the event log.
#[cfg_attr(test, mockall::automock)]
#[async_trait]
pub trait RunStore: Send + Sync {
    async fn create_run(&self, run: &RunRecord) -> Result<(), StoreError>;
    /// Overwrites status, summary, error, usage and finish time, and the queue request when
    /// `run` has one (never erased: a run stays a queue run).
    async fn update_run(&self, run: &RunRecord) -> Result<(), StoreError>;
    /// Deletes a run with its plans, steps and events; false when there was no such run.
    async fn delete_run(&self, run_id: &str) -> Result<bool, StoreError>;
    /// Overwrites only the usage of a run; called after every LLM call so an interrupted
    /// run still shows what it spent.
    async fn save_usage(&self, run_id: &str, usage: &RunUsage) -> Result<(), StoreError>;
    /// Changes only the status of a run (running ⇄ waiting).
    async fn set_run_status(&self, run_id: &str, status: RunStatus) -> Result<(), StoreError>;
    /// Stores the plan under its `version` (replacing that version's row) and its steps.
    async fn save_plan(&self, run_id: &str, plan: &Plan) -> Result<(), StoreError>;
    /// Appends one event; its `seq` must be the next of its run.
    async fn append_event(&self, event: &Event) -> Result<(), StoreError>;
    async fn get_run(&self, run_id: &str) -> Result<Option<RunRecord>, StoreError>;
    /// Newest first.
    async fn list_runs(&self) -> Result<Vec<RunRecord>, StoreError>;
    async fn latest_plan(&self, run_id: &str) -> Result<Option<Plan>, StoreError>;
    /// Events with `seq > after_seq`, in order.
    async fn events(&self, run_id: &str, after_seq: u64) -> Result<Vec<Event>, StoreError>;
    /// Takes the run's lease in one atomic step: granted when nobody holds it, when it has
    /// expired, when the caller already owns it, or when its owner is `claim.stale_owner`.
    /// Of several callers racing for one run, exactly one is granted.
    async fn acquire_lease(
        &self,
        run_id: &str,
        claim: &LeaseClaim,
    ) -> Result<LeaseOutcome, StoreError>;
    /// Extends the caller's lease to `until`; false when the caller no longer owns it.
    async fn renew_lease(
        &self,
        run_id: &str,
        owner: &str,
        until: DateTime<Utc>,
    ) -> Result<bool, StoreError>;
    /// Gives the run up (when `owner` holds it): another process may take it at once.
    async fn release_lease(&self, run_id: &str, owner: &str) -> Result<(), StoreError>;
}

/// The durable work queue: runs stored as `queued` before a client is answered, then claimed
/// by whichever worker has room (docs/durability.md, "The work queue").
#[async_trait]
pub trait WorkQueue: Send + Sync {
    /// Stores `run` (status [`RunStatus::Queued`], no lease) durably.
    async fn enqueue(&self, run: &RunRecord) -> Result<(), StoreError>;
    /// Claims the next run to work on and leases it to `owner` until `until`, atomically:
    /// first a queued run's interrupted predecessor (a queue run still `running` or
    /// `waiting` whose lease expired: it is resumed), then the oldest `queued` run.
    async fn claim(
        &self,
        owner: &str,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<Option<RunRecord>, StoreError>;
    /// Ends a run nobody has claimed yet as `failed` with `error`; false when it is not
    /// queued any more (a worker took it meanwhile, or it does not exist).
    async fn cancel_queued(
        &self,
        run_id: &str,
        error: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError>;
    /// The 1-based place of a queued run nobody has claimed yet among such runs (`None`
    /// once claimed or started).
    async fn position(&self, run_id: &str) -> Result<Option<usize>, StoreError>;
    /// How many runs are `queued` and since when the oldest: one aggregate read.
    async fn waiting(&self) -> Result<QueueWaiting, StoreError>;
}

/// The run store failed; a run cannot go on without its journal. The kind says what
/// happened, so callers decide by matching it, never by reading the message; the message
/// (shown as is) names the operation, the run and the store.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum StoreError {
    /// The run (or the record asked for) does not exist.
    #[error("{0}")]
    NotFound(String),
    /// The write contradicts what is stored: the run exists already, an event out of
    /// order, a lease someone else holds.
    #[error("{0}")]
    Conflict(String),
    /// What is stored cannot be read back: invalid JSON, an unknown status, a schema newer
    /// than this build.
    #[error("{0}")]
    Corrupt(String),
    /// The store cannot be used now: the file or server is gone, locked, full, or the
    /// connection failed. Retrying later (or elsewhere) may work.
    #[error("{0}")]
    Unavailable(String),
    /// The value cannot be stored as it is (text or a number the database refuses): the
    /// write fails the same way every time, so retrying or resuming does not help.
    #[error("{0}")]
    Unstorable(String),
    /// The run was suspended (`RunControl::suspend`): the journal refuses further writes of
    /// this process so the run unwinds without an outcome.
    #[error("run '{0}' is suspended")]
    Suspended(String),
}

impl StoreError {
    /// The message, without the kind.
    pub fn message(&self) -> &str {
        match self {
            StoreError::NotFound(m)
            | StoreError::Conflict(m)
            | StoreError::Corrupt(m)
            | StoreError::Unavailable(m)
            | StoreError::Unstorable(m)
            | StoreError::Suspended(m) => m,
        }
    }
}
