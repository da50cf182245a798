//! Protected inputs (docs/security.md, "Input files"): the files in the workspace when a run
//! starts are its inputs. The runtime records them (and keeps copies of the small ones, out
//! of the workspace), lets the run change only those the task asks to change (or all, with
//! `--allow-input-edits`; or a call a person approved), undoes any other change after each
//! tool call and tells the model why, and reports in the end what the run created, changed,
//! deleted and moved. Here: recording at the start and reloading on resume; the checks
//! around a tool call are `check.rs`, the final report `report.rs`.

mod check;
mod report;
pub(crate) mod state;

use std::collections::BTreeSet;

pub(crate) use self::check::{after_call, refuse_up_front, sweep};
pub(crate) use self::report::finish;
use self::state::{Inputs, MAX_COPIES_BYTES, MAX_COPY_BYTES, MAX_INPUTS};
use crate::engine::context::RunContext;
use crate::error::StoreError;
use crate::model::event::{Event, EventKind};
use crate::model::inputs::{Permit, RecordedInput};
use crate::model::task_files::{mentions, Intent};

/// Records the inputs of a run that starts: lists the workspace, reads from the task what
/// may be done to each file, keeps copies, journals it all (`inputs_recorded`). Returns why
/// the task cannot be done at all: it asks to change a file that is not there.
pub(crate) async fn record(ctx: &RunContext) -> Result<Option<String>, StoreError> {
    let Some(port) = ctx.inputs.port.clone() else {
        return Ok(None);
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
            return Ok(None);
        }
    };
    let known: Vec<&str> = listing.files.iter().map(|f| f.path.as_str()).collect();
    let named = mentions(&ctx.task, &known);
    let existing: BTreeSet<&str> = known.iter().copied().collect();
    if let Some(missing) = named.iter().find(|m| {
        matches!(m.intent, Intent::Edit | Intent::Move)
            && !m.written
            && !existing.contains(m.name.as_str())
    }) {
        let there = if known.is_empty() {
            "the workspace is empty".to_string()
        } else {
            let mut shown: Vec<&str> = known.iter().take(10).copied().collect();
            if known.len() > 10 {
                shown.push("…");
            }
            format!("the workspace holds: {}", shown.join(", "))
        };
        return Ok(Some(format!(
            "the task asks to change {}, which is not in the workspace ({there})",
            missing.name
        )));
    }
    let mut inputs = Vec::with_capacity(listing.files.len());
    let mut copied_bytes = 0u64;
    for facts in &listing.files {
        let asked = match named
            .iter()
            .find(|m| m.name == facts.path)
            .map(|m| m.intent)
        {
            Some(Intent::Edit | Intent::Write) => Permit::Change,
            Some(Intent::Move) => Permit::Move,
            _ => Permit::Read,
        };
        let permit = ctx.inputs.permit(asked);
        let copy = permit != Permit::Change
            && facts.size <= MAX_COPY_BYTES
            && copied_bytes + facts.size <= MAX_COPIES_BYTES;
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
    let outputs: Vec<String> = named
        .iter()
        .filter(|m| {
            m.intent == Intent::Write
                || m.intent == Intent::Unsaid && !existing.contains(m.name.as_str())
        })
        .map(|m| m.name.clone())
        .collect();
    ctx.emit(EventKind::InputsRecorded {
        inputs: inputs.clone(),
        outputs: outputs.clone(),
        truncated: listing.truncated,
    })
    .await?;
    *ctx.inputs.state.lock().await =
        Some(Inputs::from_record(&inputs, &outputs, listing.truncated));
    Ok(None)
}

/// Reloads what a resumed run recorded when it started (nothing for a run started before
/// inputs were recorded), then undoes what an interrupted call may have left changed.
pub(crate) async fn reload(ctx: &RunContext, events: &[Event]) -> Result<(), StoreError> {
    if ctx.inputs.port.is_none() {
        return Ok(());
    }
    let recorded = events.iter().find_map(|e| match &e.kind {
        EventKind::InputsRecorded {
            inputs,
            outputs,
            truncated,
        } => Some(Inputs::from_record(inputs, outputs, *truncated)),
        _ => None,
    });
    let Some(mut inputs) = recorded else {
        return Ok(());
    };
    inputs.restored = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::InputProtected {
                path,
                action: crate::model::inputs::InputAction::Restored,
                ..
            } => Some(path.clone()),
            _ => None,
        })
        .fold(Vec::new(), |mut acc, p| {
            if !acc.contains(&p) {
                acc.push(p);
            }
            acc
        });
    *ctx.inputs.state.lock().await = Some(inputs);
    sweep(ctx).await
}
