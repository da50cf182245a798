//! The user port: how `message_notify_user` and `message_ask_user` reach a person.

use async_trait::async_trait;

use crate::model::approval::ApprovalDecision;

/// A tool call waiting for a person's approval (docs/approvals.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRequest {
    pub step_id: String,
    pub call_id: String,
    pub tool: String,
    /// The call's arguments, as the model wrote them (JSON).
    pub arguments: String,
    /// Why the rules could not judge the call themselves (a command not understood, a
    /// script not seen), shown with the question; `None` when the mode simply asks.
    pub reason: Option<String>,
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
    /// Asks whether a tool call may run (`--approval ask`) and waits for the decision. Must
    /// fail, never hang, when nobody can decide; by default nobody can.
    async fn approve(
        &self,
        _run_id: &str,
        _request: &ApprovalRequest,
    ) -> Result<ApprovalDecision, AskUserError> {
        Err(AskUserError::Unavailable(
            "nobody here can approve tool calls".to_string(),
        ))
    }
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
