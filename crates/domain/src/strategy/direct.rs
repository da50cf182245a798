//! The **direct** style (docs/direct.md): no planner call. The task itself is the plan's one
//! step, run by one executor until it calls `complete_step`; the plan is still recorded, so
//! events, journal, resume, approvals, the web page and MCP see a one-step plan. A failed
//! step is retried by the scheduler's adapt loop; there is nothing to re-plan.

use async_trait::async_trait;

use crate::engine::context::RunContext;
use crate::engine::runtime::Runtime;
use crate::error::Error;
use crate::model::event::PlanSource;
use crate::model::plan::Plan;
use crate::prompts;
use crate::strategy::{InitialPlan, PlanningStrategy};

#[derive(Debug, Default)]
pub(crate) struct Direct;

/// The one-step plan of `task`.
pub(crate) fn direct_plan(task: &str) -> Result<Plan, Error> {
    Ok(Plan::from_texts(
        "plan_1",
        prompts::default_plan_title(task),
        task,
        &[task.trim().to_string()],
    )?)
}

#[async_trait]
impl PlanningStrategy for Direct {
    async fn initial_plan(
        &mut self,
        ctx: &RunContext,
        _rt: &Runtime,
    ) -> Result<InitialPlan, Error> {
        Ok(InitialPlan {
            plan: direct_plan(&ctx.task)?,
            source: PlanSource::Task,
            reason: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_is_the_task_as_one_step() {
        let plan = direct_plan("Write hello.txt containing hi").expect("a plan");
        assert_eq!(plan.steps().len(), 1);
        assert_eq!(plan.steps()[0].description, "Write hello.txt containing hi");
        assert_eq!(plan.goal, "Write hello.txt containing hi");
    }
}
