//! Workspace checkpoints of a run (docs/checkpoints.md): one before each attempt of a step
//! and one when the run ends, through the runtime's `WorkspaceCheckpoints` port when it has
//! one, each journaled as a `checkpoint_taken` event. A resumed run does not take again a
//! checkpoint its log already lists. A checkpoint that fails is a warning (an `error`
//! event): the run goes on without it. At the end, what the run created, changed and
//! deleted is read from its first and run-end checkpoints ([`file_changes`]).

use crate::engine::context::RunContext;
use crate::engine::runtime::Runtime;
use crate::error::StoreError;
use crate::model::event::EventKind;
use crate::model::inputs::FileChanges;
use crate::ports::checkpoints::{CheckpointAt, CheckpointLog, FileChange};

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

/// What the run created, changed and deleted, from its first checkpoint to its run-end one
/// (docs/checkpoints.md), in place of what the input record saw: every file of the
/// workspace counts, whatever changed it. The input record's moves and restores stay (a
/// moved file is neither created nor deleted). Without checkpoints, or when they cannot be
/// compared (logged), `files` as it is.
pub(crate) async fn file_changes(
    ctx: &RunContext,
    rt: &Runtime,
    files: FileChanges,
) -> FileChanges {
    let Some(checkpoints) = &rt.workspace_checkpoints else {
        return files;
    };
    let events = match ctx.store().events(&ctx.run_id, 0).await {
        Ok(events) => events,
        Err(e) => {
            tracing::warn!(error = %e, "cannot read the run's checkpoints back");
            return files;
        }
    };
    let log = CheckpointLog::from_events(&events);
    let (Some(start), Some(end)) = (log.run_start(), log.run_end()) else {
        return files;
    };
    let diff = match checkpoints.diff(&ctx.run_id, &start.id, &end.id).await {
        Ok(diff) => diff,
        Err(e) => {
            tracing::warn!(error = %e, "cannot compare the run's checkpoints");
            return files;
        }
    };
    let moved_from = |p: &str| files.moved.iter().any(|m| m.from == p);
    let moved_to = |p: &str| files.moved.iter().any(|m| m.to == p);
    let created: Vec<String> = diff
        .paths(FileChange::Added)
        .into_iter()
        .filter(|p| !moved_to(p))
        .map(str::to_string)
        .collect();
    let deleted: Vec<String> = diff
        .paths(FileChange::Deleted)
        .into_iter()
        .filter(|p| !moved_from(p))
        .map(str::to_string)
        .collect();
    let changed: Vec<String> = diff
        .paths(FileChange::Modified)
        .into_iter()
        .map(str::to_string)
        .collect();
    let restored = files
        .restored
        .iter()
        .filter(|p| !changed.contains(p) && !deleted.contains(p))
        .cloned()
        .collect();
    FileChanges {
        created,
        changed,
        deleted,
        moved: files.moved,
        restored,
    }
}
