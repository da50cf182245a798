//! The one place that names every planning style: a new style is one module of
//! `strategy/` plus one line here (and its `Mode`).

use crate::engine::config::{Mode, RunConfig};
use crate::strategy::dag::Dag;
use crate::strategy::direct::Direct;
use crate::strategy::flow::Flow;
use crate::strategy::plan_act::PlanAct;
use crate::strategy::todo::Todo;
use crate::strategy::PlanningStrategy;

/// The strategy that runs a plan of `mode`. `Mode::Auto` is resolved to a style before a
/// plan is made (`strategy::auto`); were it not, it runs as flow.
pub(crate) fn strategy_for(mode: Mode, config: &RunConfig) -> Box<dyn PlanningStrategy> {
    match mode {
        Mode::Flow | Mode::Auto => Box::new(Flow),
        Mode::PlanAct => Box::new(PlanAct),
        Mode::Todo => Box::new(Todo::new(config.todo_stall_rounds)),
        Mode::Dag => Box::new(Dag),
        Mode::Direct => Box::new(Direct),
    }
}
