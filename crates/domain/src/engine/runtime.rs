//! [`Runtime`]: the ports and configuration every run is made with, and what a run is asked
//! ([`RunRequest`]) and ends with ([`RunOutcome`]). Starting and resuming runs is `crate::run`.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use crate::engine::config::RunConfig;
use crate::engine::executor::agent::ExecutorAgent;
use crate::error::Error;
use crate::model::event::RunUsage;
use crate::model::inputs::FileChanges;
use crate::model::plan::Plan;
use crate::ports::{
    Clock, EventSink, IdGen, LlmClient, RunStatus, RunStore, UserChannel, WorkspaceCheckpoints,
    WorkspaceFiles,
};

/// Everything a run needs, wired by the app.
#[derive(Clone)]
pub struct Runtime {
    pub planner_llm: Arc<dyn LlmClient>,
    /// At least one; the first is the primary agent.
    pub executors: Vec<ExecutorAgent>,
    pub store: Arc<dyn RunStore>,
    pub sink: Arc<dyn EventSink>,
    pub clock: Arc<dyn Clock>,
    pub ids: Arc<dyn IdGen>,
    /// The human in the loop (`message_ask_user`); `NoUser` when nobody can answer.
    pub user: Arc<dyn UserChannel>,
    /// What the runtime sees of workspaces, to protect their input files and to check the
    /// outputs a task names (docs/security.md, "Input files"); `None`: neither.
    pub workspace_files: Option<Arc<dyn WorkspaceFiles>>,
    /// Checkpoints of the workspace before each step's attempt and at the run's end, so its
    /// changes can be shown and undone (docs/checkpoints.md); `None`: no checkpoints.
    pub workspace_checkpoints: Option<Arc<dyn WorkspaceCheckpoints>>,
    pub config: RunConfig,
    /// A planning style written outside the crate, used instead of the configured mode's
    /// (`strategy::custom`); `None`: the mode's.
    pub style: Option<crate::ports::planning_style::StyleFactory>,
    /// How the exporter reads and links spans' contexts, so a resumed run's span links to
    /// its earlier life (docs/observability.md); `None`: no link is kept.
    pub span_contexts: Option<crate::engine::trace::SpanContexts>,
}

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runtime")
            .field("executors", &self.executors)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// A task to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunRequest {
    pub run_id: String,
    pub task: String,
    /// Must exist; tools are confined to it.
    pub workspace: PathBuf,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    pub run_id: String,
    pub status: RunStatus,
    pub summary: String,
    /// Why the run failed, when it did.
    pub error: Option<String>,
    pub plan: Plan,
    pub usage: RunUsage,
    /// What the run created, changed, deleted, moved, and what the runtime restored, seen in
    /// the workspace.
    pub files: FileChanges,
    /// Whether an independent reproduction agreed with the run's answer, and what was
    /// checked (docs/verification.md); never verified for a run that did not complete.
    pub verification: crate::model::verification::Verification,
}

impl Runtime {
    /// A fresh run id from the runtime's id generator.
    pub fn new_run_id(&self) -> String {
        self.ids.new_id("run")
    }

    /// Refuses a runtime that could not run a step, or whose approval rules name an
    /// argument the tools they name do not take (docs/approvals.md, "Rules").
    pub(crate) fn check_executors(&self) -> Result<(), Error> {
        if self.executors.is_empty() {
            return Err(Error::Config(
                "a runtime needs at least one executor".into(),
            ));
        }
        let schemas: Vec<_> = self
            .executors
            .iter()
            .flat_map(|e| e.toolbox.schemas())
            .collect();
        let warnings = self
            .config
            .approvals
            .check_arguments(&schemas)
            .map_err(|e| Error::Config(e.to_string()))?;
        for warning in warnings {
            tracing::warn!(%warning, "an approval rule matches no tool offered here");
        }
        Ok(())
    }
}
