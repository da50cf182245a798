//! The end of a run's input protection (docs/security.md, "Input files"): what the run
//! created, changed, deleted and moved, seen in the workspace against the record made when
//! it started, and what the runtime restored ([`finish`]); the inputs as recorded, for the
//! check that reproduces the run from them ([`recorded_inputs`], docs/verification.md); then the
//! kept copies are deleted ([`discard_copies`]; not for a cancelled run, which may be
//! resumed).

use super::state::{Input, MAX_INPUTS};
use crate::engine::context::RunContext;
use crate::model::inputs::{FileChanges, MovedFile, RecordedInput};
use crate::ports::FileFacts;

/// What the run changed in its workspace. Never fails the run: a workspace that cannot be
/// read gives an empty report (logged).
pub(crate) async fn finish(ctx: &RunContext) -> FileChanges {
    let Some(port) = ctx.inputs.port.clone() else {
        return FileChanges::default();
    };
    let state = ctx.inputs.state.lock().await;
    let Some(inputs) = state.as_ref() else {
        return FileChanges::default();
    };
    let ws = ctx.workspace.as_path();
    let listing = match port.list(ws, MAX_INPUTS.saturating_mul(2)).await {
        Ok(l) => l.files,
        Err(e) => {
            tracing::warn!(error = %e, "cannot list the workspace for the report");
            Vec::new()
        }
    };
    let moved = inputs.moved();
    let mut changes = FileChanges {
        created: listing
            .iter()
            .filter(|f| {
                !inputs.files.contains_key(&f.path) && !moved.iter().any(|m| m.to == f.path)
            })
            .map(|f| f.path.clone())
            .collect(),
        moved,
        ..FileChanges::default()
    };
    for input in inputs.files.values().filter(|i| i.moved_to.is_none()) {
        let path = &input.recorded.path;
        match listing.iter().find(|f| &f.path == path) {
            None => changes.deleted.push(path.clone()),
            Some(now) if content_changed(&port, ctx, input, now).await => {
                changes.changed.push(path.clone());
            }
            Some(_) => {}
        }
    }
    changes.restored = inputs
        .restored
        .iter()
        .filter(|p| !changes.changed.contains(p) && !changes.deleted.contains(p))
        .cloned()
        .collect();
    // A deleted input whose content is now a created file: it was moved.
    let deleted = std::mem::take(&mut changes.deleted);
    for path in deleted {
        let digest = inputs
            .files
            .get(&path)
            .and_then(|i| i.recorded.digest.clone());
        let mut to = None;
        if let Some(digest) = digest {
            for candidate in &changes.created {
                if port.digest(ws, candidate).await.ok().flatten().as_ref() == Some(&digest) {
                    to = Some(candidate.clone());
                    break;
                }
            }
        }
        match to {
            Some(to) => {
                changes.created.retain(|c| c != &to);
                changes.moved.push(MovedFile { from: path, to });
            }
            None => changes.deleted.push(path),
        }
    }
    changes
}

/// The run's inputs as recorded when it started (`None`: nothing was recorded).
pub(crate) async fn recorded_inputs(ctx: &RunContext) -> Option<Vec<RecordedInput>> {
    let state = ctx.inputs.state.lock().await;
    let inputs = state.as_ref()?;
    Some(inputs.files.values().map(|i| i.recorded.clone()).collect())
}

/// Which of `paths` are inputs that hold what they held when the run started (by the
/// report's own test, [`content_changed`]) though a call wrote them, leaving out the ones
/// the runtime put back itself.
pub(crate) async fn rewritten_unchanged(ctx: &RunContext, paths: &[String]) -> Vec<String> {
    let Some(port) = ctx.inputs.port.clone() else {
        return Vec::new();
    };
    let state = ctx.inputs.state.lock().await;
    let Some(inputs) = state.as_ref() else {
        return Vec::new();
    };
    let mut unchanged = Vec::new();
    for path in paths.iter().filter(|p| !inputs.restored.contains(p)) {
        let Some(input) = inputs.files.get(path) else {
            continue;
        };
        let Ok(Some(now)) = port.stat(&ctx.workspace, path).await else {
            continue;
        };
        if !content_changed(&port, ctx, input, &now).await {
            unchanged.push(path.clone());
        }
    }
    unchanged
}

/// Deletes the copies kept of the run's inputs, unless the run was cancelled (it may be
/// resumed).
pub(crate) async fn discard_copies(ctx: &RunContext) {
    let Some(port) = ctx.inputs.port.clone() else {
        return;
    };
    if !ctx.was_cancelled() {
        if let Err(e) = port.discard_copies(&ctx.run_id).await {
            tracing::warn!(error = %e, "cannot delete the copies of the run's inputs");
        }
    }
}

/// Whether `input` (now `now`) holds other content than when the run started.
async fn content_changed(
    port: &std::sync::Arc<dyn crate::ports::WorkspaceFiles>,
    ctx: &RunContext,
    input: &Input,
    now: &FileFacts,
) -> bool {
    let r = &input.recorded;
    if now.size == r.size && now.modified_ns == r.modified_ns {
        return false;
    }
    match &r.digest {
        Some(d) => {
            port.digest(&ctx.workspace, &r.path)
                .await
                .ok()
                .flatten()
                .as_ref()
                != Some(d)
        }
        None => true,
    }
}
