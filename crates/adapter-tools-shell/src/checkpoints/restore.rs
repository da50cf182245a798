//! An undo: the workspace put back as a checkpoint recorded it (docs/checkpoints.md,
//! "Undo"). Only the run's changes are put back (the paths that differ between the target
//! and what the run left); one that changed after the run is a conflict, refused unless
//! forced. A checkpoint of the workspace as found is taken first (the undo can be undone),
//! the paths to change are journaled in `restore.json` (removed when done: one left behind
//! says an undo was cut short), and each is replaced whole (a new file renamed over the
//! old), so an interrupted undo leaves the old or the new version of each file and, run
//! again, finishes (what it already put back is as the target has it: no conflict).

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use domain::ports::{CheckpointError, ConflictReason, RestoreConflict, RestoreRequest, Restored};

use super::diff::same;
use super::store::{io_error, Entry, PendingRestore, RunStore};
use super::{scan, CheckpointLimits};

/// Refuses a recorded path that is absolute or climbs out of the workspace.
fn check_inside(rel: &str) -> Result<(), CheckpointError> {
    let plain = !rel.is_empty()
        && Path::new(rel)
            .components()
            .all(|c| matches!(c, Component::Normal(_)));
    if plain {
        Ok(())
    } else {
        Err(CheckpointError::Io(format!(
            "'{rel}' is not a path inside the workspace"
        )))
    }
}

/// Makes every folder above `rel` in `workspace` a real folder: a file or a symbolic link
/// in the way is removed (never followed out of the workspace).
fn real_parents(workspace: &Path, rel: &str) -> Result<PathBuf, CheckpointError> {
    check_inside(rel)?;
    let mut at = workspace.to_path_buf();
    let parts: Vec<&str> = rel.split('/').collect();
    let Some((name, folders)) = parts.split_last() else {
        return Err(CheckpointError::Io(format!("'{rel}' is not a path")));
    };
    for folder in folders {
        at.push(folder);
        match fs::symlink_metadata(&at) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                fs::remove_file(&at).map_err(|e| io_error("remove", &at, &e))?;
                fs::create_dir(&at).map_err(|e| io_error("create", &at, &e))?;
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                fs::create_dir(&at).map_err(|e| io_error("create", &at, &e))?;
            }
            Err(e) => return Err(io_error("look at", &at, &e)),
        }
    }
    Ok(at.join(name))
}

/// Removes whatever is at `path` (a folder with all it holds).
fn remove_any(path: &Path) -> Result<(), CheckpointError> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => {
            fs::remove_dir_all(path).map_err(|e| io_error("remove", path, &e))
        }
        Ok(_) => fs::remove_file(path).map_err(|e| io_error("remove", path, &e)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_error("look at", path, &e)),
    }
}

/// The staging name beside `to`.
fn staging_for(to: &Path) -> PathBuf {
    let name = to
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    to.with_file_name(format!(".{name}.planwright-undo"))
}

/// Puts `entry` at `rel`: a new file (or link) beside it, renamed over it.
fn put_back(
    store: &RunStore,
    workspace: &Path,
    rel: &str,
    entry: &Entry,
) -> Result<(), CheckpointError> {
    let to = real_parents(workspace, rel)?;
    if fs::symlink_metadata(&to).is_ok_and(|m| m.is_dir()) {
        remove_any(&to)?;
    }
    let staging = staging_for(&to);
    remove_any(&staging)?;
    match entry {
        Entry::File {
            digest, executable, ..
        } => {
            store.copy_object(digest, &staging)?;
            let mode = if *executable { 0o755 } else { 0o644 };
            fs::set_permissions(&staging, fs::Permissions::from_mode(mode))
                .map_err(|e| io_error("restore", &to, &e))?;
        }
        Entry::Link { target } => {
            std::os::unix::fs::symlink(target, &staging)
                .map_err(|e| io_error("restore", &to, &e))?;
        }
        Entry::NotKept { .. } => return Ok(()),
    }
    fs::rename(&staging, &to).map_err(|e| {
        let _ = fs::remove_file(&staging);
        io_error("restore", &to, &e)
    })
}

/// Removes `rel`, then the folders above it that it left empty.
fn take_away(workspace: &Path, rel: &str) -> Result<(), CheckpointError> {
    check_inside(rel)?;
    let path = workspace.join(rel);
    // Only the entry itself: a folder in the way of a parent is not looked into.
    match fs::symlink_metadata(&path) {
        Ok(meta) if meta.is_dir() => return Ok(()),
        Ok(_) => fs::remove_file(&path).map_err(|e| io_error("remove", &path, &e))?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io_error("look at", &path, &e)),
    }
    let mut dir = path.parent();
    while let Some(d) = dir {
        if d == workspace || !d.starts_with(workspace) || fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
    Ok(())
}

pub(crate) fn restore(
    store: &RunStore,
    workspace: &Path,
    request: &RestoreRequest,
    limits: &CheckpointLimits,
) -> Result<Restored, CheckpointError> {
    let target = store.load_manifest(&request.target)?;
    if !target.complete {
        return Err(CheckpointError::Incomplete(request.target.clone()));
    }
    let run_left = request
        .run_left
        .as_ref()
        .map(|id| store.load_manifest(id))
        .transpose()?;
    let before = scan::take(store, workspace, limits)?;
    let now = store.load_manifest(&before.id)?;
    let left = run_left.as_ref().unwrap_or(&now);
    let paths: BTreeSet<&String> = target.entries.keys().chain(left.entries.keys()).collect();
    let mut changes: Vec<(String, Option<Entry>)> = Vec::new();
    let mut conflicts = Vec::new();
    for path in paths {
        let (t, l, c) = (
            target.entries.get(path),
            left.entries.get(path),
            now.entries.get(path),
        );
        // Not the run's change, or already as the target has it (an undo cut short and
        // run again finds what it put back here).
        if same(t, l) || same(t, c) {
            continue;
        }
        if !same(c, l) {
            conflicts.push(RestoreConflict {
                path: path.clone(),
                reason: ConflictReason::ChangedAfterRun,
            });
        }
        if matches!(t, Some(Entry::NotKept { .. })) {
            conflicts.push(RestoreConflict {
                path: path.clone(),
                reason: ConflictReason::NotKept,
            });
            continue;
        }
        changes.push((path.clone(), t.cloned()));
    }
    if !conflicts.is_empty() && !request.force {
        return Err(CheckpointError::Conflicts {
            conflicts,
            before: before.id,
        });
    }
    store.begin_restore(&PendingRestore {
        target: request.target.clone(),
        paths: changes.iter().map(|(p, _)| p.clone()).collect(),
    })?;
    let (mut written, mut removed) = (Vec::new(), Vec::new());
    // Removals first: a file the run created may stand where the target has a folder.
    for (path, entry) in &changes {
        if entry.is_none() {
            take_away(workspace, path)?;
            removed.push(path.clone());
        }
    }
    for (path, entry) in &changes {
        if let Some(entry) = entry {
            put_back(store, workspace, path, entry)?;
            written.push(path.clone());
        }
    }
    store.end_restore()?;
    Ok(Restored {
        before,
        written,
        removed,
        forced: conflicts,
    })
}
