//! Planning styles written outside this crate (docs/architecture.md, "Embedding
//! Planwright"): the public [`PlanningStyle`] trait (a port, `ports::planning_style`),
//! narrower than the crate's own `PlanningStrategy` (no run context: the task, the run and
//! the planner's model are given in a [`StyleRequest`]), and the adapter here that runs one
//! as a strategy of the scheduler.
//!
//! The contract: `initial_plan` returns the run's first plan (a valid [`Plan`]: at least one
//! step, dependencies on earlier steps only); the scheduler then runs its steps, each by an
//! executor until it calls `complete_step`, independent ready steps at once when `parallel`.
//! `after_step` (every step that ended for good) and `replan` (a step given up on) may change
//! the plan's unfinished steps and say why; each change spends one of the run's revisions
//! (`RunConfig::max_revisions`) and is undone when none is left. A style is made afresh for
//! each run (and again when the run is resumed), so it keeps no state across runs.

use async_trait::async_trait;

use crate::engine::context::RunContext;
use crate::engine::runtime::Runtime;
use crate::error::Error;
use crate::model::plan::Plan;
pub use crate::ports::planning_style::{PlanningStyle, StyleFactory, StyleRequest};
use crate::strategy::{InitialPlan, PlanningStrategy, Revisions, StepReport};

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
