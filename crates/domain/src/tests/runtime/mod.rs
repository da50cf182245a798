//! Behaviour of a whole run over the shared fakes (`crate::testing`): the scripted LLM
//! answers in order, the in-memory store keeps the journal, the echo toolbox answers by tool
//! name.

mod approvals;
mod checkpoints;
mod inputs;
mod journal;
mod planning;
mod steps;
mod stopping;
mod verification;

use tokio_util::sync::CancellationToken;

use super::support::{base_config, run_task, Run};
use crate::engine::config::RunConfig;
use crate::testing::replies::Reply;
use crate::testing::{EchoToolbox, ScriptedLlm};

/// What the scripted LLM answers, in order.
type Script = Vec<Reply>;

/// Runs "make a file" on `script` with `config`.
async fn run_with(script: Script, config: RunConfig) -> Run<ScriptedLlm> {
    run_task(
        ScriptedLlm::new(script),
        EchoToolbox::new(),
        config,
        "make a file",
        CancellationToken::new(),
    )
    .await
}

/// Runs "make a file" on `script` with [`base_config`].
async fn run(script: Script) -> Run<ScriptedLlm> {
    run_with(script, base_config()).await
}
