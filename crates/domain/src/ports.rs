//! The port traits: everything the domain needs from the outside world.
//!
//! Adapters implement these (`adapter-openai` → [`LlmClient`], `adapter-tools-*` → [`Tool`],
//! `adapter-store-sqlite` → [`RunStore`]); the app wires them together. Domain tests mock
//! them with mockall.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error::{LlmError, StoreError, ToolError};
use crate::event::{Event, RunUsage};
use crate::llm::{ChatRequest, ChatResponse, ToolSchema};
use crate::plan::Plan;

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
}

/// Lifecycle of a run as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Running,
    Completed,
    Failed,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Completed => "completed",
            RunStatus::Failed => "failed",
        }
    }
    pub fn parse(s: &str) -> Option<RunStatus> {
        [RunStatus::Running, RunStatus::Completed, RunStatus::Failed]
            .into_iter()
            .find(|st| st.as_str() == s)
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
}

/// Durable home of runs, plan versions, steps and the event log.
#[cfg_attr(test, mockall::automock)]
#[async_trait]
pub trait RunStore: Send + Sync {
    async fn create_run(&self, run: &RunRecord) -> Result<(), StoreError>;
    /// Overwrites status, summary, error, usage and finish time.
    async fn update_run(&self, run: &RunRecord) -> Result<(), StoreError>;
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
