//! The domain's errors.
//!
//! [`Error`] is what a run can fail with. The port error types ([`LlmError`],
//! [`ToolError`], [`StoreError`]) are part of the port contracts: adapters return them,
//! and the domain classifies them into retries, model-facing messages or run failures.

use std::time::Duration;

use thiserror::Error;

use crate::model::plan::StepStatus;

/// A run-level failure: something the runtime could not recover from.
#[derive(Debug, Error)]
pub enum Error {
    #[error("plan error: {0}")]
    Plan(#[from] PlanError),
    #[error("run store error: {0}")]
    Store(#[from] StoreError),
    #[error("LLM error: {0}")]
    Llm(#[from] LlmError),
    #[error("run cancelled")]
    Cancelled,
    /// The run was suspended (`RunControl::suspend`) at a safe point: no outcome was written,
    /// its status is unchanged and its lease released; it resumes where it stopped.
    #[error("run suspended; it can be resumed")]
    Suspended,
    /// Another process took the run's lease over (this one's had expired): this process
    /// stopped working on it.
    #[error("the run's lease was taken over by another process")]
    LeaseLost,
    /// Another process holds the run's lease.
    #[error(
        "run '{run_id}' is being run by {owner} (its lease holds until {until}); it can be resumed once that process stops"
    )]
    Leased {
        run_id: String,
        owner: String,
        until: chrono::DateTime<chrono::Utc>,
    },
    /// No run with this id in the store.
    #[error("no run with id '{0}'")]
    UnknownRun(String),
    #[error("invalid configuration: {0}")]
    Config(String),
}

/// How an LLM call failed, classified so the caller knows what to do next.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LlmError {
    /// HTTP 429 or the like: wait `retry_after` (if the server said) and try again.
    #[error("rate limited{}: {message}", retry_after.map(|d| format!(" (retry after {:.1}s)", d.as_secs_f64())).unwrap_or_default())]
    RateLimited {
        retry_after: Option<Duration>,
        message: String,
    },
    /// 5xx, connection failures, timeouts, truncated replies: worth retrying.
    #[error("transient failure: {0}")]
    Transient(String),
    /// The prompt does not fit the model's context: trim and retry once.
    #[error("context too long: {0}")]
    ContextTooLong(String),
    /// Bad or missing credentials: retrying will not help.
    #[error("authentication failed: {0}")]
    Auth(String),
    /// Anything else the server refused (bad request, unknown model...).
    #[error("permanent failure: {0}")]
    Permanent(String),
    /// The reply arrived but could not be understood.
    #[error("invalid response: {0}")]
    InvalidResponse(String),
}

impl LlmError {
    /// Whether trying the same request again may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(self, LlmError::RateLimited { .. } | LlmError::Transient(_))
    }
}

/// A tool could not do what it was asked; the message goes back to the model.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ToolError {
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    #[error("refused: {0}")]
    Refused(String),
    #[error("timed out after {0:?}")]
    Timeout(Duration),
    #[error("{0}")]
    Failed(String),
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
            | StoreError::Suspended(m) => m,
        }
    }
}

/// Errors about plans and steps; shown to the model verbatim when it caused them.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PlanError {
    #[error("a plan needs at least one step")]
    EmptySteps,
    #[error("a step's text must not be empty")]
    EmptyStepText,
    #[error("duplicate step id '{0}'")]
    DuplicateStepId(String),
    #[error("unknown step '{0}'")]
    UnknownStep(String),
    #[error("step '{0}' depends on itself")]
    SelfDependency(String),
    #[error("the steps {0} form a dependency cycle")]
    Cycle(String),
    #[error("step '{step}' depends on unknown step '{dependency}'")]
    UnknownDependency { step: String, dependency: String },
    #[error("step '{step}' cannot move from {from} to {to}")]
    IllegalTransition {
        step: String,
        from: StepStatus,
        to: StepStatus,
    },
}
