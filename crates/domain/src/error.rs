//! The domain's errors.
//!
//! [`Error`](enum@Error) is what a run can fail with. The port error types ([`LlmError`],
//! [`ToolError`], [`StoreError`]) are part of the port contracts: adapters return them,
//! and the domain classifies them into retries, model-facing messages or run failures.

use thiserror::Error;

pub use crate::model::plan::PlanError;
pub use crate::ports::llm::LlmError;
pub use crate::ports::store::StoreError;
pub use crate::ports::tool::ToolError;

/// A run-level failure: something the runtime could not recover from.
#[derive(Debug, Error)]
pub enum Error {
    #[error("plan error: {0}")]
    Plan(#[from] PlanError),
    #[error("run store error: {0}")]
    Store(#[from] StoreError),
    #[error("LLM error: {0}")]
    Llm(#[from] LlmError),
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

impl Error {
    /// The kind of error, as a span's `error.type` names it (a fixed word, never the text).
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Plan(_) => "plan",
            Error::Store(_) => "store",
            Error::Llm(e) => e.kind(),
            Error::Suspended => "suspended",
            Error::LeaseLost => "lease_lost",
            Error::Leased { .. } => "leased",
            Error::UnknownRun(_) => "unknown_run",
            Error::Config(_) => "config",
        }
    }
}
