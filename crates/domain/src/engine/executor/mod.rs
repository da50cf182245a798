//! The step executor: one agent's ReAct tool loop for one plan step.
//!
//! The loop ends only through `complete_step {success, result}` (or the turn limit, which
//! fails the step). Every tool call gets exactly one tool message back, also when it is
//! unknown, malformed or refused, so each request sent to the LLM is a valid transcript.

pub mod agent;
mod attempt;
mod guessed;
mod loop_watch;
mod outcome;
pub mod router;
pub mod step_kind;
mod tool_call;
mod user_call;

use tracing::Instrument;

use crate::engine::context::RunContext;
use crate::engine::executor::agent::{ExecutorAgent, StepLimits};
use crate::error::StoreError;
use crate::model::step_input::StepInput;

pub(crate) use self::outcome::StepEnd;

/// Runs one attempt of a step. `route_tools`: offer the tools the step needs (see
/// `tool_router`) instead of the whole toolbox.
pub(crate) async fn run_step(
    ctx: &RunContext,
    limits: &StepLimits,
    agent: &ExecutorAgent,
    input: &StepInput,
    route_tools: bool,
) -> Result<StepEnd, StoreError> {
    let span = crate::engine::trace::step_span(&input.step.id, input.index, &agent.name);
    attempt::Attempt::new(ctx, limits, agent, input, route_tools)
        .run()
        .instrument(span)
        .await
}
