//! Workspace checkpoints of a run (docs/checkpoints.md): one before each attempt of a step
//! and one when the run ends, through the runtime's `WorkspaceCheckpoints` port when it has
//! one, each journaled as a `checkpoint_taken` event. A resumed run does not take again a
//! checkpoint its log already lists. A checkpoint that fails is a warning (an `error`
//! event): the run goes on without it.

use crate::engine::context::RunContext;
use crate::engine::runtime::Runtime;
use crate::error::StoreError;
use crate::model::event::EventKind;
use crate::ports::checkpoints::CheckpointAt;

/// The checkpoint before attempt `attempt` of step `step_id`.
pub(crate) async fn before_attempt(
    ctx: &RunContext,
    rt: &Runtime,
    step_id: &str,
    attempt: u32,
) -> Result<(), StoreError> {
    take(
        ctx,
        rt,
        CheckpointAt::Step {
            step_id: step_id.to_string(),
            attempt,
        },
    )
    .await
}

/// The checkpoint of what the run left.
pub(crate) async fn at_run_end(ctx: &RunContext, rt: &Runtime) -> Result<(), StoreError> {
    take(ctx, rt, CheckpointAt::RunEnd).await
}

async fn take(ctx: &RunContext, rt: &Runtime, at: CheckpointAt) -> Result<(), StoreError> {
    let Some(checkpoints) = &rt.workspace_checkpoints else {
        return Ok(());
    };
    let (step_id, attempt) = match &at {
        CheckpointAt::Step { step_id, attempt } => (Some(step_id.clone()), *attempt),
        CheckpointAt::RunEnd | CheckpointAt::BeforeRestore => (None, 0),
    };
    if ctx.journal().checkpoints().has(step_id.as_deref(), attempt) {
        return Ok(());
    }
    match checkpoints
        .checkpoint(&ctx.run_id, &ctx.workspace, &at)
        .await
    {
        Ok(taken) => {
            if !taken.complete {
                tracing::warn!(checkpoint = %taken.id, "the workspace checkpoint is incomplete");
            }
            ctx.emit(EventKind::CheckpointTaken {
                step_id,
                attempt,
                checkpoint: taken.id,
                files: taken.files,
                stored_bytes: taken.stored_bytes,
                left_out: taken.left_out,
                incomplete: !taken.complete,
            })
            .await
        }
        Err(e) => {
            tracing::warn!(error = %e, "the workspace checkpoint failed; the run goes on");
            ctx.emit(EventKind::Error {
                step_id,
                message: format!(
                    "the workspace checkpoint failed (the run goes on without it): {e}"
                ),
            })
            .await
        }
    }
}
