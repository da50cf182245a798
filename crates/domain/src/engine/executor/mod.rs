//! The step executor: one agent's ReAct tool loop for one plan step.
//!
//! The loop ends only through `complete_step {success, result}` (or the turn limit, which
//! fails the step). Every tool call gets exactly one tool message back, also when it is
//! unknown, malformed or refused, so each request sent to the LLM is a valid transcript.

pub mod agent;
mod attempt;
mod loop_watch;
pub mod router;
pub mod step_kind;
mod tool_call;
mod user_call;

use tracing::Instrument;

use crate::engine::context::RunContext;
use crate::engine::executor::agent::{ExecutorAgent, StepLimits};
use crate::engine::executor::router::{self as tool_router, RouteQuery};
use crate::error::StoreError;
use crate::model::plan::Step;
use crate::model::step_input::StepInput;
use crate::ports::llm::ToolSchema;
use crate::tools::builtin::{complete_step_schema, user_message_schemas};

/// How a step attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StepEnd {
    /// `complete_step` with success=true.
    Completed {
        result: String,
        revise_plan: bool,
        /// Files the attempt's tool calls produced (workspace-relative).
        attachments: Vec<String>,
    },
    /// `complete_step` with success=false, the turn limit, or a stuck loop.
    Failed(String),
    /// The LLM could not be reached or answered an error: worth another attempt.
    Errored(String),
    Cancelled,
}

/// Why a step fails when its executor keeps claiming success without acting.
pub const CLAIMED_WITHOUT_ACTING: &str = "claimed success without calling any tool";

/// Runs one attempt of a step. `route_tools`: offer the tools the step needs (see
/// `tool_router`) instead of the whole toolbox.
pub(crate) async fn run_step(
    ctx: &RunContext,
    limits: &StepLimits,
    agent: &ExecutorAgent,
    input: &StepInput,
    route_tools: bool,
) -> Result<StepEnd, StoreError> {
    let span = tracing::info_span!("step", step_id = %input.step.id, index = input.index, agent = %agent.name);
    attempt::Attempt::new(ctx, limits, agent, input, route_tools)
        .run()
        .instrument(span)
        .await
}

/// The tools offered to one attempt of a step: the toolbox, the user functions and
/// `complete_step`, routed when `route_tools`. Fixed for the whole attempt, so a model's
/// KV cache can reuse the prefix from call to call. Returns (offered, everything).
pub fn offered_tools(
    task: &str,
    step: &Step,
    toolbox: &[ToolSchema],
    route_tools: bool,
) -> (Vec<ToolSchema>, Vec<ToolSchema>) {
    let mut all = toolbox.to_vec();
    all.extend(user_message_schemas());
    all.push(complete_step_schema());
    if !route_tools {
        return (all.clone(), all);
    }
    let offered = tool_router::route_tools(
        &RouteQuery {
            kind: step.kind.as_deref(),
            step: &step.description,
            task,
            retry: step.attempts() > 1,
        },
        &all,
    );
    (offered, all)
}
