//! The planning style port: a style written outside the crate (the embedding program
//! implements [`PlanningStyle`]; `RuntimeBuilder::planning_style` gives it to the runtime,
//! whose scheduler runs it through `strategy::custom`). The contract is in
//! `strategy::custom`'s module doc.

use std::sync::Arc;

use async_trait::async_trait;

use crate::error::Error;
use crate::model::event::PlanSource;
use crate::model::plan::Plan;
use crate::ports::LlmClient;

/// A plan as a strategy first made it.
#[derive(Debug, Clone)]
pub struct InitialPlan {
    pub plan: Plan,
    pub source: PlanSource,
    /// Why the default plan was used, when it was.
    pub reason: Option<String>,
}

/// How a finished step went, as strategies see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepReport {
    pub step_id: String,
    pub description: String,
    pub success: bool,
    /// The result, or the error.
    pub text: String,
    /// The executor said the remaining plan no longer fits.
    pub revise_requested: bool,
}

/// What a style is told when it makes the first plan.
#[derive(Clone)]
pub struct StyleRequest {
    pub run_id: String,
    /// The task, as the user gave it.
    pub task: String,
    /// The run's workspace.
    pub workspace: std::path::PathBuf,
    /// The planner's model, for a style that asks one.
    pub llm: Arc<dyn LlmClient>,
}

impl std::fmt::Debug for StyleRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StyleRequest")
            .field("run_id", &self.run_id)
            .field("task", &self.task)
            .field("workspace", &self.workspace)
            .finish_non_exhaustive()
    }
}

/// A planning style written outside the crate (see the module doc for the contract).
#[async_trait]
pub trait PlanningStyle: Send {
    /// The run's first plan and where it came from.
    async fn initial_plan(&mut self, request: &StyleRequest) -> Result<InitialPlan, Error>;

    /// Whether independent ready steps may run at the same time.
    fn parallel(&self) -> bool {
        false
    }

    /// Whether a step given up on ends the run (the rest skipped) or only blocks what
    /// depends on it.
    fn stop_on_give_up(&self) -> bool {
        true
    }

    /// A step ended for good: may change the plan's unfinished steps; returns why it did.
    async fn after_step(
        &mut self,
        _plan: &mut Plan,
        _report: &StepReport,
    ) -> Result<Option<String>, Error> {
        Ok(None)
    }

    /// A step was given up on: may revise the plan (a kept failed step must be reset to
    /// not started); returns why it did.
    async fn replan(
        &mut self,
        _plan: &mut Plan,
        _failed: &StepReport,
    ) -> Result<Option<String>, Error> {
        Ok(None)
    }

    /// A reason to stop the run early.
    fn should_stop(&self) -> Option<String> {
        None
    }
}

/// Makes a run's style: given to `RuntimeBuilder::planning_style`.
pub type StyleFactory = Arc<dyn Fn() -> Box<dyn PlanningStyle> + Send + Sync>;
