//! Protected inputs (docs/security.md, "Input files"): the files in the workspace when a run
//! starts are its inputs. The runtime records them (and keeps copies of the small ones, out
//! of the workspace), lets the run change only those a call said it would change (its
//! `changes` argument, a file tool's `path`; or all, with `--allow-input-edits`; never those
//! `--protect` names) or a program changed (`code_run`: the check of the answer arbitrates,
//! docs/verification.md), undoes any other change after each tool call and tells the model why,
//! and reports in the end what the run created, changed, deleted and moved. No rule reads
//! the task's words. Here: recording at the start and reloading on resume; the checks
//! around a tool call are `check.rs`, the final report `report.rs`.

mod check;
mod report;
pub(crate) mod state;

pub(crate) use self::check::{
    after_call, declare, named_changes, put_back, refuse_up_front, sweep,
};
pub(crate) use self::report::{discard_copies, finish, recorded_inputs, rewritten_unchanged};
use self::state::{Inputs, MAX_COPIES_BYTES, MAX_COPY_BYTES, MAX_INPUTS};
use crate::engine::context::RunContext;
use crate::error::StoreError;
use crate::model::event::{Event, EventKind};
use crate::model::inputs::{InputAction, Permit, RecordedInput};

/// Records the inputs of a run that starts: lists the workspace, keeps copies of the small
/// files, journals it all (`inputs_recorded`).
pub(crate) async fn record(ctx: &RunContext) -> Result<(), StoreError> {
    let Some(port) = ctx.inputs.port.clone() else {
        return Ok(());
    };
    let listing = match port.list(&ctx.workspace, MAX_INPUTS).await {
        Ok(l) => l,
        Err(e) => {
            ctx.emit(EventKind::Error {
                step_id: None,
                message: format!(
                    "cannot list the workspace ({e}); its files are not protected in this run"
                ),
            })
            .await?;
            return Ok(());
        }
    };
    let mut inputs = Vec::with_capacity(listing.files.len());
    let mut copied_bytes = 0u64;
    for facts in &listing.files {
        let permit = ctx.inputs.first_permit(&facts.path);
        let copy = facts.size <= MAX_COPY_BYTES && copied_bytes + facts.size <= MAX_COPIES_BYTES;
        let mut digest = None;
        if copy {
            match port
                .keep_copy(&ctx.run_id, &ctx.workspace, &facts.path)
                .await
            {
                Ok(d) => {
                    copied_bytes += facts.size;
                    digest = Some(d);
                }
                Err(e) => tracing::warn!(path = %facts.path, error = %e, "cannot keep a copy"),
            }
        }
        inputs.push(RecordedInput {
            path: facts.path.clone(),
            size: facts.size,
            modified_ns: facts.modified_ns,
            mode: facts.mode,
            copied: digest.is_some(),
            digest,
            permit,
        });
    }
    ctx.emit(EventKind::InputsRecorded {
        inputs: inputs.clone(),
        outputs: Vec::new(),
        truncated: listing.truncated,
    })
    .await?;
    *ctx.inputs.state.lock().await = Some(Inputs::from_record(&inputs, listing.truncated));
    Ok(())
}

/// Reloads what a resumed run recorded when it started (nothing for a run started before
/// inputs were recorded), then undoes what an interrupted call may have left changed.
pub(crate) async fn reload(ctx: &RunContext, events: &[Event]) -> Result<(), StoreError> {
    if ctx.inputs.port.is_none() {
        return Ok(());
    }
    let recorded = events.iter().find_map(|e| match &e.kind {
        EventKind::InputsRecorded {
            inputs, truncated, ..
        } => Some(Inputs::from_record(inputs, *truncated)),
        _ => None,
    });
    let Some(mut inputs) = recorded else {
        return Ok(());
    };
    for e in events {
        let EventKind::InputProtected { path, action, .. } = &e.kind else {
            continue;
        };
        match action {
            InputAction::Restored if !inputs.restored.contains(path) => {
                inputs.restored.push(path.clone());
            }
            InputAction::Declared => {
                if let Some(i) = inputs.files.get_mut(path) {
                    if i.recorded.permit == Permit::Read {
                        i.recorded.permit = Permit::Change;
                    }
                }
            }
            _ => {}
        }
    }
    *ctx.inputs.state.lock().await = Some(inputs);
    sweep(ctx).await
}
