//! An undo: the workspace put back as a checkpoint recorded it (docs/checkpoints.md,
//! "Undo"). Only the run's changes are put back (the paths that differ between the target
//! and what the run left); one that changed after the run is a conflict, refused unless
//! forced. A checkpoint of the workspace as found is taken first (the undo can be undone),
//! the paths to change are journaled in `restore.json` (removed when done: one left behind
//! says an undo was cut short), and each is replaced whole (a new file renamed over the
//! old), so an interrupted undo leaves the old or the new version of each file and, run
//! again, finishes (what it already put back is as the target has it: no conflict).

use std::collections::BTreeSet;
use std::ffi::{OsStr, OsString};
use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use domain::ports::{CheckpointError, ConflictReason, RestoreConflict, RestoreRequest, Restored};
use fs_beneath::Folder;

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

/// The folder and the name of recorded path `rel` (checked first).
fn parent_and_name(rel: &str) -> Result<(PathBuf, OsString), CheckpointError> {
    check_inside(rel)?;
    let path = Path::new(rel);
    let name = path
        .file_name()
        .ok_or_else(|| CheckpointError::Io(format!("'{rel}' is not a path")))?;
    let parent = path.parent().unwrap_or(Path::new("")).to_path_buf();
    Ok((parent, name.to_os_string()))
}

fn failed(what: &str, workspace: &Path, rel: &str, e: &io::Error) -> CheckpointError {
    io_error(what, &workspace.join(rel), e)
}

/// Puts `entry` at `rel`: a new file (or link) beside it, renamed over it. Every folder on
/// the way is made real (a file or a link in the way removed, never followed out of the
/// workspace), a folder standing at `rel` removed.
fn put_back(
    store: &RunStore,
    root: &Folder,
    workspace: &Path,
    rel: &str,
    entry: &Entry,
) -> Result<(), CheckpointError> {
    let (parent_rel, name) = parent_and_name(rel)?;
    let err = |what: &str, e: &io::Error| failed(what, workspace, rel, e);
    let parent = root
        .make_folders(&parent_rel)
        .map_err(|e| err("restore", &e))?;
    if parent.stat(Path::new(&name)).is_ok_and(|m| m.is_folder()) {
        parent.remove_all(&name).map_err(|e| err("remove", &e))?;
    }
    let staging = OsString::from(format!(".{}.planwright-undo", name.to_string_lossy()));
    let staging: &OsStr = &staging;
    parent.remove_all(staging).map_err(|e| err("restore", &e))?;
    let staged = match entry {
        Entry::File {
            digest,
            executable,
            mode,
            ..
        } => (|| {
            let mut file = parent
                .create_file(staging)
                .map_err(|e| err("restore", &e))?;
            store.copy_object(digest, &mut file)?;
            let mode = mode.unwrap_or(if *executable { 0o755 } else { 0o644 });
            file.set_permissions(fs::Permissions::from_mode(mode))
                .map_err(|e| err("restore", &e))
        })(),
        Entry::Link { target } => parent
            .symlink(OsStr::new(target), staging)
            .map_err(|e| err("restore", &e)),
        Entry::NotKept { .. } => return Ok(()),
    };
    let placed = staged.and_then(|()| {
        parent
            .rename(staging, &name)
            .map_err(|e| err("restore", &e))
    });
    if placed.is_err() {
        let _ = parent.remove_file(staging);
    }
    placed
}

/// Whether `e` says nothing is at the path (a link on the way is not followed: what lies
/// behind it is not in the workspace).
fn nothing_there(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::NotFound
        || e.kind() == io::ErrorKind::NotADirectory
        || fs_beneath::is_link(e)
}

/// Removes `rel`, then the folders above it that it left empty.
fn take_away(root: &Folder, workspace: &Path, rel: &str) -> Result<(), CheckpointError> {
    let (parent_rel, name) = parent_and_name(rel)?;
    let parent = match root.folder(&parent_rel) {
        Ok(parent) => parent,
        Err(e) if nothing_there(&e) => return Ok(()),
        Err(e) => return Err(failed("look at", workspace, rel, &e)),
    };
    // Only the entry itself: a folder in the way of a parent is not looked into.
    match parent.stat(Path::new(&name)) {
        Ok(meta) if meta.is_folder() => return Ok(()),
        Ok(_) => parent
            .remove_file(&name)
            .map_err(|e| failed("remove", workspace, rel, &e))?,
        Err(e) if nothing_there(&e) => return Ok(()),
        Err(e) => return Err(failed("look at", workspace, rel, &e)),
    }
    let mut folders: Vec<&OsStr> = fs_beneath::parts(&parent_rel).unwrap_or_default();
    while let Some(last) = folders.pop() {
        let above: PathBuf = folders.iter().collect();
        let removed = root
            .folder(&above)
            .and_then(|folder| folder.remove_dir(last));
        if removed.is_err() {
            break;
        }
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
    let root = Folder::open(workspace).map_err(|e| io_error("open", workspace, &e))?;
    // Not remembered: the run's last checkpoint in memory stays true (only ever a shortcut).
    let (before, _) = scan::take(store, workspace, limits, None)?;
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
            take_away(&root, workspace, path)?;
            removed.push(path.clone());
        }
    }
    for (path, entry) in &changes {
        if let Some(entry) = entry {
            put_back(store, &root, workspace, path, entry)?;
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
