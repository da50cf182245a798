//! Planning styles written outside this crate (docs/architecture.md, "Embedding
//! Planwright"): the public [`PlanningStyle`] trait, narrower than the crate's own
//! `PlanningStrategy` (no run context: the task, the run and the planner's model are given
//! in a [`StyleRequest`]), and the adapter that runs one as a strategy of the scheduler.
//!
//! The contract: `initial_plan` returns the run's first plan (a valid [`Plan`]: at least one
//! step, dependencies on earlier steps only); the scheduler then runs its steps, each by an
//! executor until it calls `complete_step`, independent ready steps at once when `parallel`.
//! `after_step` (every step that ended for good) and `replan` (a step given up on) may change
//! the plan's unfinished steps and say why; each change spends one of the run's revisions
//! (`RunConfig::max_revisions`) and is undone when none is left. A style is made afresh for
//! each run (and again when the run is resumed), so it keeps no state across runs.

use std::sync::Arc;

use async_trait::async_trait;

use crate::engine::context::RunContext;
use crate::engine::runtime::Runtime;
use crate::error::Error;
use crate::model::plan::Plan;
use crate::ports::LlmClient;
use crate::strategy::{InitialPlan, PlanningStrategy, Revisions, StepReport};

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

/// A [`PlanningStyle`] run as the scheduler's strategy.
pub(crate) struct Custom(pub Box<dyn PlanningStyle>);

impl Custom {
    /// `change` applied to `plan` if a revision is left; undone (and `None`) otherwise.
    fn spend(
        plan: &mut Plan,
        before: Plan,
        change: Option<String>,
        revisions: &mut Revisions,
    ) -> Option<String> {
        let reason = change?;
        if revisions.take() {
            Some(reason)
        } else {
            *plan = before;
            None
        }
    }
}

#[async_trait]
impl PlanningStrategy for Custom {
    async fn initial_plan(&mut self, ctx: &RunContext, rt: &Runtime) -> Result<InitialPlan, Error> {
        let request = StyleRequest {
            run_id: ctx.run_id.clone(),
            task: ctx.task.clone(),
            workspace: ctx.workspace.clone(),
            llm: rt.planner_llm.clone(),
        };
        self.0.initial_plan(&request).await
    }

    fn parallel(&self) -> bool {
        self.0.parallel()
    }

    fn stop_on_give_up(&self) -> bool {
        self.0.stop_on_give_up()
    }

    async fn after_step(
        &mut self,
        _ctx: &RunContext,
        _rt: &Runtime,
        plan: &mut Plan,
        report: &StepReport,
        revisions: &mut Revisions,
    ) -> Result<Option<String>, Error> {
        let before = plan.clone();
        let change = self.0.after_step(plan, report).await?;
        Ok(Self::spend(plan, before, change, revisions))
    }

    async fn replan(
        &mut self,
        _ctx: &RunContext,
        _rt: &Runtime,
        plan: &mut Plan,
        failed: &StepReport,
        revisions: &mut Revisions,
    ) -> Result<Option<String>, Error> {
        let before = plan.clone();
        let change = self.0.replan(plan, failed).await?;
        Ok(Self::spend(plan, before, change, revisions))
    }

    fn should_stop(&self) -> Option<String> {
        self.0.should_stop()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(steps: &[&str]) -> Plan {
        let steps: Vec<String> = steps.iter().map(|s| s.to_string()).collect();
        Plan::from_texts("plan_1", "t", "goal", &steps).expect("plan")
    }

    #[test]
    fn a_change_spends_a_revision_and_is_undone_when_none_is_left() {
        let mut revisions = Revisions { used: 0, max: 1 };
        let mut changed = plan(&["a", "b"]);
        let kept = Custom::spend(
            &mut changed,
            plan(&["a"]),
            Some("why".into()),
            &mut revisions,
        );
        assert_eq!(kept.as_deref(), Some("why"));
        assert_eq!(changed.steps().len(), 2);
        let mut again = plan(&["a", "b", "c"]);
        let undone = Custom::spend(
            &mut again,
            plan(&["a"]),
            Some("more".into()),
            &mut revisions,
        );
        assert_eq!(undone, None);
        assert_eq!(
            again.steps().len(),
            1,
            "no revision left: the plan is as it was"
        );
        let mut same = plan(&["a"]);
        assert_eq!(
            Custom::spend(&mut same, plan(&["a"]), None, &mut revisions),
            None
        );
    }
}
