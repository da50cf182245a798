//! The tool port: one function the model can call ([`Tool`]), the set offered to an
//! executor ([`Toolbox`]), what a call knows and returns, and how it fails; and what a tool
//! says of itself besides its schema: its [`ToolFamily`] (which tools the router offers
//! together) and its [`ToolEffect`] (what the approval policy judges), so that neither
//! decides by a tool's name.

use std::path::PathBuf;
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use thiserror::Error;
use tokio_util::sync::CancellationToken;

pub use crate::model::tool_kind::{ToolEffect, ToolFamily};
use crate::ports::llm::ToolSchema;

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
    /// What a program the call ran printed on stdout, whole up to the tool's cap, for the
    /// runtime's own comparisons (docs/verification.md); `None` for tools that run none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdout: Option<String>,
    /// A program the call ran ended with `final_answer(…)`: the step's result, which
    /// finishes the step as `complete_step` would (docs/code-actions.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_answer: Option<String>,
    /// A program the call ran stopped at a call of the runtime (`input()`, which is
    /// `message_ask_user`, or a tool called as a function) before it changed any file: the
    /// call to make. The runtime makes it and runs the program again from the start with
    /// its result (docs/code-actions.md, "Tools in a program").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program_call: Option<ProgramCall>,
}

/// A tool call a program made as a function call (`input()` is `message_ask_user` with
/// its prompt as the `question`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProgramCall {
    pub tool: String,
    pub arguments: serde_json::Value,
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
            ..ToolOutput::default()
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
    /// The tools it is offered with ([`ToolFamily::Other`], always offered, unless it says).
    fn family(&self) -> ToolFamily {
        ToolFamily::Other
    }
    /// What its calls do ([`ToolEffect::Acts`], judged cautiously, unless it says).
    fn effect(&self) -> ToolEffect {
        ToolEffect::Acts
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

    /// The family of tool `name` ([`Tool::family`]); [`ToolFamily::Other`] when unknown.
    fn family(&self, _name: &str) -> ToolFamily {
        ToolFamily::Other
    }

    /// What a call to tool `name` does ([`Tool::effect`]); [`ToolEffect::Acts`] when unknown.
    fn effect(&self, _name: &str) -> ToolEffect {
        ToolEffect::Acts
    }

    /// The run ended: every tool releases what it holds for it.
    async fn close_run(&self, _run_id: &str) {}
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
