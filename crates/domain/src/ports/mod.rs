//! The port traits: everything the domain needs from the outside world.
//!
//! Adapters implement these (`adapter-openai` → [`LlmClient`], `adapter-tools-*` → [`Tool`],
//! `adapter-store-sqlite` → [`RunStore`]); the app wires them together. Domain tests mock
//! them with mockall.

pub mod llm;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error::{LlmError, StoreError, ToolError};
use crate::model::event::{Event, RunUsage};
use crate::model::plan::Plan;
use crate::ports::llm::{ChatRequest, ChatResponse, ToolSchema};

/// A chat-completion model with tool calling.
#[cfg_attr(test, mockall::automock)]
#[async_trait]
pub trait LlmClient: Send + Sync {
    async fn chat(&self, request: ChatRequest) -> Result<ChatResponse, LlmError>;
}

/// What a tool may know about the call it serves.
#[derive(Debug, Clone)]
pub struct ToolContext {
    pub run_id: String,
    pub step_id: Option<String>,
    /// The run's workspace folder; file and shell tools must stay inside it.
    pub workspace: PathBuf,
    pub cancel: CancellationToken,
}

/// What a tool hands back to the model.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ToolOutput {
    pub content: String,
    /// The tool ran but reports failure (e.g. a non-zero exit code).
    #[serde(default)]
    pub is_error: bool,
    /// Workspace-relative paths of files the call produced.
    #[serde(default)]
    pub attachments: Vec<String>,
}

impl ToolOutput {
    pub fn ok(content: impl Into<String>) -> ToolOutput {
        ToolOutput {
            content: content.into(),
            ..ToolOutput::default()
        }
    }
    pub fn error(content: impl Into<String>) -> ToolOutput {
        ToolOutput {
            content: content.into(),
            is_error: true,
            attachments: Vec::new(),
        }
    }
}

/// One function the model can call.
#[cfg_attr(test, mockall::automock)]
#[async_trait]
pub trait Tool: Send + Sync {
    fn name(&self) -> &str;
    fn description(&self) -> &str;
    /// JSON schema of the arguments object.
    fn parameters(&self) -> Value;
    /// Safe to run again with the same arguments (reads, listings).
    fn idempotent(&self) -> bool {
        false
    }
    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError>;

    /// The run ended: release what the tool holds for it (shell sessions, a browser).
    async fn close_run(&self, _run_id: &str) {}
}

/// The set of tools offered to an executor.
#[cfg_attr(test, mockall::automock)]
#[async_trait]
pub trait Toolbox: Send + Sync {
    fn schemas(&self) -> Vec<ToolSchema>;
    /// Runs tool `name`; an unknown name is `ToolError::Refused`.
    async fn call(
        &self,
        name: &str,
        args: Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError>;

    /// Whether tool `name` may simply run again after an interruption (reads, listings).
    fn idempotent(&self, _name: &str) -> bool {
        false
    }

    /// The run ended: every tool releases what it holds for it.
    async fn close_run(&self, _run_id: &str) {}
}

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
    /// started directly (`planwright run`); only queued runs are claimed by workers.
    #[serde(default)]
    pub queue_request: Option<Value>,
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
    /// Overwrites status, summary, error, usage and finish time.
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
}

/// Why the user could not be asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AskUserError {
    /// Nobody can answer: no terminal, no client connected, stdin closed.
    #[error("the user cannot be asked: {0}")]
    Unavailable(String),
    #[error("no answer from the user: {0}")]
    NoAnswer(String),
}

/// The human in the loop: how `message_ask_user` reaches the user and gets an answer.
#[cfg_attr(test, mockall::automock)]
#[async_trait]
pub trait UserChannel: Send + Sync {
    /// Tells the user something; nothing comes back (`message_notify_user`).
    async fn notify(&self, run_id: &str, text: &str);
    /// Asks and waits for the answer. Must fail, never hang, when nobody can answer.
    async fn ask(&self, run_id: &str, question: &str) -> Result<String, AskUserError>;
}

/// No user: questions fail at once with a clear reason (batch runs, tests).
#[derive(Debug, Default)]
pub struct NoUser;

#[async_trait]
impl UserChannel for NoUser {
    async fn notify(&self, _run_id: &str, _text: &str) {}
    async fn ask(&self, _run_id: &str, _question: &str) -> Result<String, AskUserError> {
        Err(AskUserError::Unavailable(
            "this run has no interactive user".to_string(),
        ))
    }
}

/// One web search hit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchHit {
    pub title: String,
    pub url: String,
    #[serde(default)]
    pub snippet: String,
}

/// A web search engine (SearxNG, Brave, Tavily ...) behind `web_search`.
#[cfg_attr(test, mockall::automock)]
#[async_trait]
pub trait SearchProvider: Send + Sync {
    /// A short name shown to users (`searxng`, `brave`).
    fn name(&self) -> &str;
    async fn search(&self, query: &str, max_results: usize) -> Result<Vec<SearchHit>, ToolError>;
}

/// A live listener for events (the CLI view, later the SSE stream). Must not block.
#[cfg_attr(test, mockall::automock)]
pub trait EventSink: Send + Sync {
    fn publish(&self, event: &Event);
}

/// A sink that drops everything.
#[derive(Debug, Default)]
pub struct NoEventSink;

impl EventSink for NoEventSink {
    fn publish(&self, _event: &Event) {}
}

#[cfg_attr(test, mockall::automock)]
pub trait Clock: Send + Sync {
    fn now(&self) -> DateTime<Utc>;
}

/// The wall clock.
#[derive(Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// Mints ids for runs and plans.
#[cfg_attr(test, mockall::automock)]
pub trait IdGen: Send + Sync {
    /// A new unique id starting with `prefix` (e.g. `run`, `plan`).
    fn new_id(&self, prefix: &str) -> String;
}

/// Deterministic ids `prefix_1`, `prefix_2`, ... (tests, replays).
#[derive(Debug, Default)]
pub struct SequentialIds(AtomicU64);

impl IdGen for SequentialIds {
    fn new_id(&self, prefix: &str) -> String {
        let n = self.0.fetch_add(1, Ordering::Relaxed) + 1;
        format!("{prefix}_{n}")
    }
}
