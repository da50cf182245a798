//! Every planning style through the one scheduler, with an LLM that answers by what is
//! asked (`crate::testing::RoutedLlm`: planner replies in order, executor replies per step,
//! with latency). Time is tokio's paused clock, so makespans are exact and nothing really
//! sleeps.

mod auto;
mod dag;
mod direct;
mod flow;
mod plan_act;
mod todo;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::support::{run_task, Run};
use crate::testing::replies::{call, Reply};
use crate::testing::{EchoToolbox, RoutedLlm};
use crate::RunConfig;

/// Runs `task` with `llm` and `config` until `cancel` is cancelled or the run ends.
async fn run_cancellable(
    llm: RoutedLlm,
    config: RunConfig,
    task: &str,
    cancel: CancellationToken,
) -> Run<RoutedLlm> {
    run_task(llm, EchoToolbox::new(), config, task, cancel).await
}

/// Runs `task` with `llm` and `config` to its end.
async fn run(llm: RoutedLlm, config: RunConfig, task: &str) -> Run<RoutedLlm> {
    run_cancellable(llm, config, task, CancellationToken::new()).await
}

/// The flow planner's `planning` `create` call with these steps.
fn flow_plan(steps: &[&str]) -> Reply {
    call(
        "planning",
        json!({"command": "create", "title": "T", "steps": steps}),
    )
}
