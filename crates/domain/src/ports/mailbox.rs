//! The mailbox port: requests for a run that reach the process executing it, wherever it
//! runs (another worker, another host): cancellation, answers to `message_ask_user` and
//! approvals of tool calls (docs/durability.md, "Workers").
//!
//! Whoever receives the request (an API server) posts it; the message is addressed to the
//! run's owner at that moment (the holder of its lease), which takes it and acts on it. A
//! message is taken once, and only by the owner it was addressed to: a request for a run
//! that ended meanwhile never reaches a later owner of the same run (one that resumes it).

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::ports::store::StoreError;

/// A request for a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RunMessage {
    /// Cancel the run (it ends `failed`, "the run was cancelled", and can be resumed).
    Cancel,
    /// The user's answer to the question the run is waiting on.
    Answer { text: String },
    /// A person's decision on the tool call `call_id` waiting for approval.
    Approval {
        call_id: String,
        decision: crate::model::approval::ApprovalDecision,
    },
}

/// Durable delivery of [`RunMessage`]s to a run's owner.
#[async_trait]
pub trait RunMailbox: Send + Sync {
    /// Posts `message` for `run_id`, addressed to the run's current lease owner;
    /// [`StoreError::NotFound`] when there is no such run.
    async fn post(&self, run_id: &str, message: &RunMessage) -> Result<(), StoreError>;
    /// Takes the messages for `run_id` addressed to `owner`, oldest first: each is returned
    /// by exactly one call, even when several callers race.
    async fn take(&self, run_id: &str, owner: &str) -> Result<Vec<RunMessage>, StoreError>;
}
