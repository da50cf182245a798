//! The step executor: one agent's ReAct tool loop for one plan step.
//!
//! The loop ends only through `complete_step {success, result}` (or the turn limit, which
//! fails the step). Every tool call gets exactly one tool message back, also when it is
//! unknown, malformed or refused, so each request sent to the LLM is a valid transcript.

pub mod agent;
mod attempt;
mod loop_watch;
mod outcome;
pub(crate) mod program_calls;
pub mod router;
pub(crate) mod tool_call;
mod user_call;
pub(crate) mod workspace_view;

use tracing::Instrument;

use crate::engine::config::Actions;
use crate::engine::context::RunContext;
use crate::engine::executor::agent::{ExecutorAgent, StepLimits};
use crate::error::StoreError;
use crate::model::event::EventKind;
use crate::model::step_input::StepInput;
use crate::model::workspace_view::ViewBudget;

pub(crate) use self::outcome::StepEnd;

/// How an executor works a step: its limits, whether its tools are routed (see
/// `tool_router`) or all offered, and how it acts (docs/code-actions.md).
#[derive(Debug, Clone, Copy)]
pub(crate) struct StepSetup<'a> {
    pub limits: &'a StepLimits,
    pub route_tools: bool,
    pub actions: Actions,
}

/// Runs one attempt of a step, showing it the workspace as it is now first.
pub(crate) async fn run_step(
    ctx: &RunContext,
    setup: StepSetup<'_>,
    agent: &ExecutorAgent,
    input: &StepInput,
) -> Result<StepEnd, StoreError> {
    let span = crate::engine::trace::step_span(&input.step.id, input.index, &agent.name);
    async {
        // A resumed attempt is shown what it was shown before the stop (its journaled LLM
        // calls are recognised by their requests).
        let attempt = input.step.attempts();
        let view = match ctx.journal().view(&input.step.id, attempt) {
            Some(view) => Some(view.clone()),
            None => {
                let view = match &ctx.inputs.port {
                    Some(port) => {
                        workspace_view::look(port, &ctx.workspace, ViewBudget::default()).await
                    }
                    None => None,
                };
                if let Some(view) = &view {
                    ctx.emit(EventKind::WorkspaceShown {
                        step_id: input.step.id.clone(),
                        attempt,
                        view: view.clone(),
                    })
                    .await?;
                }
                view
            }
        };
        attempt::Attempt::new(ctx, setup, agent, input, view.as_ref())
            .run()
            .await
    }
    .instrument(span)
    .await
}
