//! The checks around a tool call (docs/security.md, "Input files"): a file tool that would
//! change an input the run may not change is refused before it runs ([`refuse_up_front`]);
//! after any call, the inputs are compared with what was recorded and an unpermitted change
//! is undone from the kept copy ([`after_call`]), the model reading why. A resumed run checks
//! once before it goes on ([`sweep`]).

use std::sync::Arc;

use serde_json::Value;

use super::state::{Input, Inputs};
use crate::engine::context::RunContext;
use crate::error::StoreError;
use crate::model::event::EventKind;
use crate::model::inputs::{InputAction, Permit};
use crate::model::task_files::{mentions, Intent};
use crate::ports::{FileFacts, WorkspaceFiles};

/// The most of an input read to check that a write keeps what it holds.
const MAX_KEPT_BYTES: usize = 1024 * 1024;
/// The file tools whose `path` argument they change.
const WRITING_FILE_TOOLS: [&str; 2] = ["file_write", "file_str_replace"];

/// Why `tool` must not run with `args`: it would change an input the run may not change.
/// `None` when it may run (a person asked under `--approval ask` decides for themselves).
pub(crate) async fn refuse_up_front(
    ctx: &RunContext,
    step_id: Option<&str>,
    tool: &str,
    args: &Value,
) -> Result<Option<String>, StoreError> {
    if !WRITING_FILE_TOOLS.contains(&tool) || ctx.asks_for_approval() {
        return Ok(None);
    }
    let Some(path) = args.get("path").and_then(Value::as_str) else {
        return Ok(None);
    };
    let workspace = ctx.workspace.display().to_string();
    let refusal = {
        let state = ctx.inputs.state.lock().await;
        let Some(inputs) = state.as_ref() else {
            return Ok(None);
        };
        match inputs.input_named(&workspace, path) {
            Some(input) if input.moved_to.is_none() => match input.recorded.permit {
                Permit::Change => None,
                Permit::Move => Some((
                    input.recorded.path.clone(),
                    moved_only(&input.recorded.path),
                )),
                Permit::Read => Some((
                    input.recorded.path.clone(),
                    read_only(
                        &[input.recorded.path.as_str()],
                        inputs,
                        "this call was not run",
                    ),
                )),
            },
            _ => None,
        }
    };
    let refusal = match refusal {
        Some(r) => Some(r),
        None => drops_what_it_holds(ctx, path, tool, args).await,
    };
    let Some((path, message)) = refusal else {
        return Ok(None);
    };
    ctx.emit(EventKind::InputProtected {
        step_id: step_id.map(str::to_string),
        tool: tool.to_string(),
        path,
        action: InputAction::Refused,
    })
    .await?;
    Ok(Some(message))
}

/// After a call of `tool`: undoes every change to an input the run may not change, journals
/// it (`input_protected`) and returns what the model must read about it. `approved`: a person
/// approved this very call, so its changes stand.
pub(crate) async fn after_call(
    ctx: &RunContext,
    step_id: Option<&str>,
    tool: &str,
    approved: bool,
) -> Result<Option<String>, StoreError> {
    let Some(port) = ctx.inputs.port.clone() else {
        return Ok(None);
    };
    let mut state = ctx.inputs.state.lock().await;
    let Some(inputs) = state.as_mut() else {
        return Ok(None);
    };
    let found = examine(ctx, &port, inputs, approved).await;
    let outputs = inputs.outputs.clone();
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
    Ok(note_for_model(&found, &outputs))
}

/// The check of a resumed run, before it goes on: an interrupted call may have changed an
/// input.
pub(crate) async fn sweep(ctx: &RunContext) -> Result<(), StoreError> {
    after_call(ctx, None, "(before the run was resumed)", false)
        .await
        .map(|_| ())
}

/// Compares every protected input with what was last seen; restores what changed.
async fn examine(
    ctx: &RunContext,
    port: &Arc<dyn WorkspaceFiles>,
    inputs: &mut Inputs,
    approved: bool,
) -> Vec<(String, InputAction)> {
    let ws = ctx.workspace.as_path();
    let mut found = Vec::new();
    let mut listing: Option<Vec<FileFacts>> = None;
    let paths: Vec<String> = inputs
        .files
        .values()
        .filter(|i| i.recorded.permit != Permit::Change && i.moved_to.is_none())
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
        if now.is_none() && input.recorded.permit == Permit::Move {
            if listing.is_none() {
                listing = port.list(ws, usize::MAX).await.ok().map(|l| l.files);
            }
            if let Some(to) =
                moved_to(port, ws, &input, listing.as_deref().unwrap_or(&[]), inputs).await
            {
                if let Some(i) = inputs.files.get_mut(&path) {
                    i.moved_to = Some(to);
                }
                continue;
            }
        }
        if approved {
            give_up_protecting(inputs, &path, now);
            continue;
        }
        if input.recorded.copied {
            match port.restore(&ctx.run_id, ws, &path).await {
                Ok(()) => {
                    if let Ok(Some(f)) = port.stat(ws, &path).await {
                        set_seen(inputs, &path, f);
                    }
                    if !inputs.restored.contains(&path) {
                        inputs.restored.push(path.clone());
                    }
                    found.push((path, InputAction::Restored));
                    continue;
                }
                Err(e) => tracing::warn!(%path, error = %e, "cannot restore an input"),
            }
        }
        give_up_protecting(inputs, &path, now);
        found.push((path, InputAction::NotRestored));
    }
    found
}

/// Where the content of `input` (gone from its place) is now: a file that was not an input,
/// or was one and is gone too, with the same size and digest.
async fn moved_to(
    port: &Arc<dyn WorkspaceFiles>,
    ws: &std::path::Path,
    input: &Input,
    listing: &[FileFacts],
    inputs: &Inputs,
) -> Option<String> {
    let digest = input.recorded.digest.as_ref()?;
    for f in listing {
        let taken = inputs
            .files
            .values()
            .any(|i| i.moved_to.as_deref() == Some(&f.path));
        let protected_input = inputs
            .files
            .get(&f.path)
            .is_some_and(|i| i.recorded.permit != Permit::Change);
        if f.size != input.recorded.size || taken || protected_input {
            continue;
        }
        if port.digest(ws, &f.path).await.ok().flatten().as_ref() == Some(digest) {
            return Some(f.path.clone());
        }
    }
    None
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

/// The change stands (a person approved it, or it cannot be undone): the input is no longer
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
fn note_for_model(found: &[(String, InputAction)], outputs: &[String]) -> Option<String> {
    let restored: Vec<&str> = found
        .iter()
        .filter(|(_, a)| *a == InputAction::Restored)
        .map(|(p, _)| p.as_str())
        .collect();
    let lost: Vec<&str> = found
        .iter()
        .filter(|(_, a)| *a == InputAction::NotRestored)
        .map(|(p, _)| p.as_str())
        .collect();
    let mut notes = Vec::new();
    if !restored.is_empty() {
        notes.push(read_only_with(
            &restored,
            outputs,
            "the change this call made was undone",
        ));
    }
    if !lost.is_empty() {
        notes.push(format!(
            "Warning: {} existed before the run and this call changed it; the change could not \
             be undone. Do not change the task's input files.",
            lost.join(", ")
        ));
    }
    (!notes.is_empty()).then(|| notes.join("\n"))
}

/// The refusal of a change to read-only inputs `paths`.
fn read_only(paths: &[&str], inputs: &Inputs, what_happened: &str) -> String {
    read_only_with(paths, &inputs.outputs, what_happened)
}

fn read_only_with(paths: &[&str], outputs: &[String], what_happened: &str) -> String {
    let (names, verb) = match paths {
        [one] => ((*one).to_string(), "is"),
        many => (many.join(", "), "are"),
    };
    let instead = match outputs {
        [] => "write your result to a new file".to_string(),
        [one] => format!("write your result to {one}"),
        many => format!("write your results to {}", many.join(", ")),
    };
    format!(
        "Refused: {names} {verb} an input of this task (in the workspace before the run) and \
         the task does not ask to change it; {what_happened}. Read it, but {instead} instead."
    )
}

/// The refusal of a content change to an input the task asks to rename or move.
/// A file tool call that would drop what an input holds, when the task only asks to add to
/// it ("add dave as a new last line of names.txt"): a `file_write` (not appending) whose
/// content does not start with the file's text, a `file_str_replace` whose new text does
/// not keep the old. The eval's `backup_edit` wrote "dave" over the names it was to add to.
async fn drops_what_it_holds(
    ctx: &RunContext,
    path: &str,
    tool: &str,
    args: &Value,
) -> Option<(String, String)> {
    let port = ctx.inputs.port.clone()?;
    let workspace = ctx.workspace.display().to_string();
    let rel = super::state::relative_path(&workspace, path);
    let adds_only = mentions(&ctx.task, &[rel.as_str()])
        .into_iter()
        .any(|m| m.name == rel && m.added && m.intent == Intent::Write);
    if !adds_only {
        return None;
    }
    let keeps = match tool {
        "file_write" => {
            if args.get("append") == Some(&Value::Bool(true)) {
                return None;
            }
            let content = args.get("content")?.as_str()?;
            let held = port
                .head(&ctx.workspace, &rel, MAX_KEPT_BYTES)
                .await
                .ok()??;
            let held = String::from_utf8_lossy(&held);
            content.starts_with(held.trim_end())
        }
        _ => {
            let old = args.get("old")?.as_str()?;
            let new = args.get("new")?.as_str()?;
            new.contains(old)
        }
    };
    (!keeps).then(|| {
        (
            rel.clone(),
            format!(
                "Refused: the task asks to add to {rel}, not to replace what it holds; this \
                 call was not run. Call file_write with path {rel}, append=true and only the \
                 new text (e.g. the new last line)."
            ),
        )
    })
}

fn moved_only(path: &str) -> String {
    format!(
        "Refused: the task asks to rename or move {path}, not to change its content; this \
         call was not run. Move it as it is, e.g. with shell_exec `mv {path} NEW_NAME`."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_is_told_what_to_do_instead() {
        let found = vec![("data.txt".to_string(), InputAction::Restored)];
        let note = note_for_model(&found, &["total.txt".to_string()]).expect("a note");
        assert!(
            note.starts_with("Refused: data.txt is an input of this task"),
            "{note}"
        );
        assert!(
            note.contains("write your result to total.txt instead"),
            "{note}"
        );
        let note = note_for_model(&found, &[]).expect("a note");
        assert!(
            note.contains("write your result to a new file instead"),
            "{note}"
        );
        assert_eq!(note_for_model(&[], &[]), None);
    }
}
