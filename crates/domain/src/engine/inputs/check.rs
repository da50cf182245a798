//! The checks around a tool call (docs/security.md, "Input files"). Before a call: the
//! inputs it says it will change (its `changes` argument, or the `path` of a file tool that
//! writes) may change from then on ([`declare`]), unless `--protect` names them, which
//! refuses the call ([`refuse_up_front`]). After any call, the inputs are compared with
//! what was recorded and a change nobody declared is undone from the kept copy
//! ([`after_call`]), the model reading why; a program's changes (`code_run`) stand, checked
//! by the check of the answer, which puts back before its retry what neither of its
//! programs changed ([`put_back`]). A resumed run checks once before it goes on
//! ([`sweep`]). Nothing here reads the task's words: what a run may change is what its
//! calls say, before they run.

use std::sync::Arc;

use serde_json::Value;

use super::state::{relative_path, Inputs};
use crate::engine::context::RunContext;
use crate::error::StoreError;
use crate::model::event::EventKind;
use crate::model::inputs::{InputAction, Permit};
use crate::ports::{FileFacts, ToolEffect, ToolFamily, WorkspaceFiles};
use crate::tools::code::declared_changes;

/// The workspace files `args` say the call will change: its `changes`, and the `path` of a
/// file tool that writes.
pub(crate) fn named_changes(family: ToolFamily, effect: ToolEffect, args: &Value) -> Vec<String> {
    let mut paths = declared_changes(args);
    if family == ToolFamily::Files && effect.acts() {
        if let Some(path) = args.get("path").and_then(Value::as_str) {
            let path = path.trim().trim_start_matches("./").to_string();
            if !path.is_empty() && !paths.contains(&path) {
                paths.push(path);
            }
        }
    }
    paths
}

/// Why the call must not run: it says it will change an input `--protect` names. `None`
/// when it may run.
pub(crate) async fn refuse_up_front(
    ctx: &RunContext,
    step_id: Option<&str>,
    tool: &str,
    changes: &[String],
) -> Result<Option<String>, StoreError> {
    if ctx.inputs.protect.is_empty() {
        return Ok(None);
    }
    let workspace = ctx.workspace.display().to_string();
    let Some(path) = changes
        .iter()
        .map(|p| relative_path(&workspace, p))
        .find(|p| ctx.inputs.protects(p))
    else {
        return Ok(None);
    };
    ctx.emit(EventKind::InputProtected {
        step_id: step_id.map(str::to_string),
        tool: tool.to_string(),
        path: path.clone(),
        action: InputAction::Refused,
    })
    .await?;
    Ok(Some(crate::prompts::protected_file(&path)))
}

/// The call says it will change `changes`: the inputs among them may change from now on
/// (journaled as `input_protected` with action `declared`, so a resumed run knows).
pub(crate) async fn declare(
    ctx: &RunContext,
    step_id: Option<&str>,
    tool: &str,
    changes: &[String],
) -> Result<(), StoreError> {
    if changes.is_empty() {
        return Ok(());
    }
    let workspace = ctx.workspace.display().to_string();
    let mut declared = Vec::new();
    {
        let mut state = ctx.inputs.state.lock().await;
        let Some(inputs) = state.as_mut() else {
            return Ok(());
        };
        for path in changes {
            let rel = relative_path(&workspace, path);
            if let Some(input) = inputs.files.get_mut(&rel) {
                if matches!(input.recorded.permit, Permit::Read | Permit::Move) {
                    input.recorded.permit = Permit::Change;
                    declared.push(rel);
                }
            }
        }
    }
    for path in declared {
        ctx.emit(EventKind::InputProtected {
            step_id: step_id.map(str::to_string),
            tool: tool.to_string(),
            path,
            action: InputAction::Declared,
        })
        .await?;
    }
    Ok(())
}

/// After a call of `tool`: undoes every change to an input the run may not change, journals
/// it (`input_protected`) and returns what the model must read about it. `changes_stand`: a
/// person approved this very call, or it ran a program (`code_run`), so its changes stand
/// (but never to a file `--protect` names).
pub(crate) async fn after_call(
    ctx: &RunContext,
    step_id: Option<&str>,
    tool: &str,
    changes_stand: bool,
) -> Result<Option<String>, StoreError> {
    let Some(port) = ctx.inputs.port.clone() else {
        return Ok(None);
    };
    let mut state = ctx.inputs.state.lock().await;
    let Some(inputs) = state.as_mut() else {
        return Ok(None);
    };
    let found = examine(ctx, &port, inputs, changes_stand).await;
    drop(state);
    for (path, action) in &found {
        ctx.emit(EventKind::InputProtected {
            step_id: step_id.map(str::to_string),
            tool: tool.to_string(),
            path: path.clone(),
            action: *action,
        })
        .await?;
    }
    Ok(note_for_model(ctx, &found))
}

/// The check of a resumed run, before it goes on: an interrupted call may have changed an
/// input.
pub(crate) async fn sweep(ctx: &RunContext) -> Result<(), StoreError> {
    after_call(ctx, None, "(before the run was resumed)", false)
        .await
        .map(|_| ())
}

/// Puts `paths` (inputs the run changed or deleted) back from their kept copies, journaled
/// as `input_protected` (`restored`, by `by`); returns those put back. Used before the retry
/// two independent checks ask for when neither of them changed those files
/// (docs/verification.md): the retry starts from the user's files as they were.
pub(crate) async fn put_back(
    ctx: &RunContext,
    step_id: Option<&str>,
    by: &str,
    paths: &[String],
) -> Result<Vec<String>, StoreError> {
    let Some(port) = ctx.inputs.port.clone() else {
        return Ok(Vec::new());
    };
    let mut done = Vec::new();
    {
        let mut state = ctx.inputs.state.lock().await;
        let Some(inputs) = state.as_mut() else {
            return Ok(Vec::new());
        };
        for path in paths {
            let copied = inputs.files.get(path).is_some_and(|i| i.recorded.copied);
            if copied && restore(ctx, &port, inputs, path).await {
                done.push(path.clone());
            }
        }
    }
    for path in &done {
        ctx.emit(EventKind::InputProtected {
            step_id: step_id.map(str::to_string),
            tool: by.to_string(),
            path: path.clone(),
            action: InputAction::Restored,
        })
        .await?;
    }
    Ok(done)
}

/// Compares every input the run may not change with what was last seen; restores what
/// changed.
async fn examine(
    ctx: &RunContext,
    port: &Arc<dyn WorkspaceFiles>,
    inputs: &mut Inputs,
    changes_stand: bool,
) -> Vec<(String, InputAction)> {
    let ws = ctx.workspace.as_path();
    let mut found = Vec::new();
    let paths: Vec<String> = inputs
        .files
        .values()
        .filter(|i| i.recorded.permit != Permit::Change)
        .map(|i| i.recorded.path.clone())
        .collect();
    for path in paths {
        let now = match port.stat(ws, &path).await {
            Ok(now) => now,
            Err(e) => {
                tracing::warn!(%path, error = %e, "cannot look at an input");
                continue;
            }
        };
        let Some(input) = inputs.files.get(&path).cloned() else {
            continue;
        };
        if now.as_ref().is_some_and(|f| same_facts(f, &input.seen)) {
            continue;
        }
        if let (Some(f), Some(recorded)) = (&now, &input.recorded.digest) {
            if f.mode == input.recorded.mode
                && port.digest(ws, &path).await.ok().flatten().as_ref() == Some(recorded)
            {
                // Touched, content and permissions unchanged.
                set_seen(inputs, &path, f.clone());
                continue;
            }
        }
        if changes_stand && input.recorded.permit != Permit::Protected {
            give_up_protecting(inputs, &path, now);
            continue;
        }
        if input.recorded.copied && restore(ctx, port, inputs, &path).await {
            found.push((path, InputAction::Restored));
            continue;
        }
        give_up_protecting(inputs, &path, now);
        found.push((path, InputAction::NotRestored));
    }
    found
}

/// Writes `path` back from the copy kept when the run started, notes what it now looks
/// like and that the runtime restored it; false (logged) when it cannot.
async fn restore(
    ctx: &RunContext,
    port: &Arc<dyn WorkspaceFiles>,
    inputs: &mut Inputs,
    path: &str,
) -> bool {
    let ws = ctx.workspace.as_path();
    if let Err(e) = port.restore(&ctx.run_id, ws, path).await {
        tracing::warn!(%path, error = %e, "cannot restore an input");
        return false;
    }
    if let Ok(Some(f)) = port.stat(ws, path).await {
        set_seen(inputs, path, f);
    }
    if !inputs.restored.iter().any(|p| p == path) {
        inputs.restored.push(path.to_string());
    }
    true
}

/// Same size, time and permissions (a `chmod 000` changes only the last).
fn same_facts(a: &FileFacts, b: &FileFacts) -> bool {
    a.size == b.size && a.modified_ns == b.modified_ns && a.mode == b.mode
}

fn set_seen(inputs: &mut Inputs, path: &str, facts: FileFacts) {
    if let Some(i) = inputs.files.get_mut(path) {
        i.seen = facts;
    }
}

/// The change stands (a person approved it, a program made it, or it cannot be undone): the
/// input is no longer
/// checked, and the final report shows it.
fn give_up_protecting(inputs: &mut Inputs, path: &str, now: Option<FileFacts>) {
    if let Some(i) = inputs.files.get_mut(path) {
        i.recorded.permit = Permit::Change;
        if let Some(f) = now {
            i.seen = f;
        }
    }
}

/// What the model reads after a call whose changes to inputs were undone or could not be.
fn note_for_model(ctx: &RunContext, found: &[(String, InputAction)]) -> Option<String> {
    let of = |action: InputAction| -> Vec<&str> {
        found
            .iter()
            .filter(|(_, a)| *a == action)
            .map(|(p, _)| p.as_str())
            .collect()
    };
    let restored = of(InputAction::Restored);
    let (protected, undeclared): (Vec<&str>, Vec<&str>) =
        restored.into_iter().partition(|p| ctx.inputs.protects(p));
    let lost = of(InputAction::NotRestored);
    let mut notes = Vec::new();
    if !undeclared.is_empty() {
        notes.push(crate::prompts::undeclared_change_undone(&undeclared));
    }
    for path in protected {
        notes.push(crate::prompts::protected_file(path));
    }
    if !lost.is_empty() {
        notes.push(crate::prompts::change_not_undone(&lost));
    }
    (!notes.is_empty()).then(|| notes.join("\n"))
}
