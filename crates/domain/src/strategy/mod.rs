//! The planning styles, as plug-ins of one scheduler: the `PlanningStrategy` trait and what
//! it exchanges with the scheduler. Each style is one module; the shared planner behaviour
//! (ask for structured output, re-ask on invalid output, fall back to the default plan) is in
//! `planner`; `list` is the one place that names every style. No style imports another.
//! A style written outside the crate implements `custom::PlanningStyle` (public) and is
//! given to `RuntimeBuilder::planning_style`.

pub mod auto;
pub mod custom;
pub(crate) mod dag;
pub(crate) mod direct;
pub(crate) mod flow;
pub(crate) mod list;
pub(crate) mod plan_act;
pub(crate) mod planner;
pub mod response_schemas;
pub(crate) mod revise;
pub(crate) mod todo;

use async_trait::async_trait;

use crate::engine::context::RunContext;
use crate::engine::runtime::Runtime;
use crate::error::Error;
use crate::model::plan::Plan;

pub use crate::ports::planning_style::{InitialPlan, StepReport};

/// Plan revisions allowed per run, shared by every kind of revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Revisions {
    pub used: u32,
    pub max: u32,
}

impl Revisions {
    /// Takes one revision if any is left.
    pub fn take(&mut self) -> bool {
        if self.used < self.max {
            self.used += 1;
            true
        } else {
            false
        }
    }
}

/// What makes planning styles differ: when to plan, when to revise, what may run in parallel.
#[async_trait]
pub(crate) trait PlanningStrategy: Send {
    async fn initial_plan(&mut self, ctx: &RunContext, rt: &Runtime) -> Result<InitialPlan, Error>;

    /// Whether independent ready steps may run at the same time.
    fn parallel(&self) -> bool {
        false
    }

    /// Whether a step given up on ends the run (the rest is skipped) or only blocks what
    /// depends on it.
    fn stop_on_give_up(&self) -> bool {
        true
    }

    /// Called when a step ended for good. Returns why the plan changed, if it did.
    async fn after_step(
        &mut self,
        _ctx: &RunContext,
        _rt: &Runtime,
        _plan: &mut Plan,
        _report: &StepReport,
        _revisions: &mut Revisions,
    ) -> Result<Option<String>, Error> {
        Ok(None)
    }

    /// The adapt loop's re-plan after `failed` could not be done. The failed step is still
    /// `failed`/`blocked`; a revision that keeps it must reset it to `not_started`.
    async fn replan(
        &mut self,
        _ctx: &RunContext,
        _rt: &Runtime,
        _plan: &mut Plan,
        _failed: &StepReport,
        _revisions: &mut Revisions,
    ) -> Result<Option<String>, Error> {
        Ok(None)
    }

    /// A reason to stop early (e.g. no progress for several rounds).
    fn should_stop(&self) -> Option<String> {
        None
    }
}
