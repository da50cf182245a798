//! Taking a checkpoint: a walk of the workspace, each folder and each file opened beneath
//! the workspace without following a link at any component (`fs_beneath`): a folder
//! swapped for a link to the host between the listing and the reading is never read
//! through (docs/security.md, "Links in the workspace"). Symbolic links are recorded as links; `.planwright` and the
//! ignore list are left out, and so are the object stores of `.git`, `.hg` and `.svn`
//! (their config, hooks and refs are recorded). Each regular file's content is put in the
//! store unless the index says its size, time and permissions did not change since the
//! last checkpoint, within the per-file and per-checkpoint caps (docs/checkpoints.md). The
//! index is trusted without looking in the store (10,000 files: 10,000 lookups fewer): the
//! store only ever adds objects, and discarding a run's checkpoints removes the index with
//! them.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use domain::ports::{Checkpoint, CheckpointError, LeftOut, LeftOutReason};
use fs_beneath::{Folder, Kind, Meta};

use super::digest;
use super::pack::PACKED_BYTES;
use super::recent::Recent;
use super::store::{io_error, Entry, Index, IndexEntry, Manifest, RunStore};
use super::CheckpointLimits;
use crate::sandbox::VCS_FOLDERS;

/// A cached digest is trusted only for a file last changed this long before the previous
/// checkpoint started (a file changed within the same tick of a coarse clock is read again).
const RACY_NS: u64 = 2_000_000_000;

/// Files up to this size are read whole into memory and hashed before anything is written
/// (a content the store has costs no write at all), then go into the checkpoint's pack.
const IN_MEMORY_BYTES: u64 = PACKED_BYTES;

/// Planwright's own state folder: never recorded.
const STATE_FOLDER: &str = ".planwright";

/// Version-control folders and the stores inside them that are left out: large, and only
/// ever added to (a new object runs nothing); what can run code or redirect the user's next
/// command (config, hooks, refs, `info/`, submodules' config) is recorded, shown and undone.
const VCS_STORES: [(&str, &[&str]); 3] = [
    (VCS_FOLDERS[0], &["objects", "lfs"]),
    (VCS_FOLDERS[1], &["store", "cache"]),
    (VCS_FOLDERS[2], &["pristine", "tmp"]),
];

fn nanos(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

fn executable(mode: u32) -> bool {
    mode & 0o111 != 0
}

/// Whether folder `name` at `rel` is a content store inside a version-control folder.
fn vcs_store(rel: &str, name: &str) -> bool {
    let mut above: Vec<&str> = rel.split('/').collect();
    above.pop();
    VCS_STORES
        .iter()
        .any(|(vcs, stores)| stores.contains(&name) && above.contains(vcs))
}

/// Whether `rel` (named `name`) is left out: `.planwright` and the version-control stores
/// always; else by `patterns`: `NAME/` a folder of that name anywhere, `NAME` a file or
/// folder of that name anywhere, `a/b` (with or without a final `/`) that path from the
/// workspace's top.
pub(crate) fn ignored(patterns: &[String], rel: &str, name: &str, is_dir: bool) -> bool {
    if is_dir && (name == STATE_FOLDER || vcs_store(rel, name)) {
        return true;
    }
    patterns.iter().any(|p| {
        let (p, dir_only) = match p.strip_suffix('/') {
            Some(p) => (p, true),
            None => (p.as_str(), false),
        };
        if dir_only && !is_dir {
            return false;
        }
        if p.contains('/') {
            rel == p.trim_start_matches('/')
        } else {
            name == p
        }
    })
}

/// What the walk found of one path.
enum Found {
    File(Meta),
    Link(String),
    LeftOut(LeftOutReason),
}

/// What `name` in `folder` is now, a link read as a link (the listing said otherwise a
/// moment ago: it was swapped meanwhile).
fn look_again(folder: &Folder, name: &str) -> Found {
    match folder.stat(Path::new(name)) {
        Ok(meta) if meta.kind == Kind::Link => link_of(folder, name),
        Ok(meta) if meta.is_file() => Found::File(meta),
        Ok(meta) if meta.kind == Kind::Special => Found::LeftOut(LeftOutReason::Special),
        _ => Found::LeftOut(LeftOutReason::Unstable),
    }
}

fn link_of(folder: &Folder, name: &str) -> Found {
    match folder.read_link(std::ffi::OsStr::new(name)) {
        Ok(target) => match target.to_str() {
            Some(t) => Found::Link(t.to_string()),
            None => Found::LeftOut(LeftOutReason::NameNotUtf8),
        },
        Err(_) => Found::LeftOut(LeftOutReason::Unreadable),
    }
}

/// What `rel` is now (its folder could not be opened: it was swapped meanwhile).
fn look_again_at(root: &Folder, rel: &str) -> Found {
    let (parent, name) = rel.rsplit_once('/').unwrap_or(("", rel));
    match root.folder(Path::new(parent)) {
        Ok(parent) => look_again(&parent, name),
        Err(_) => Found::LeftOut(LeftOutReason::Unstable),
    }
}

/// The paths under `root` (sorted), minus the ignored ones. Each folder is opened from the
/// workspace's descriptor when its turn comes (never through a link), so a wide tree does
/// not hold a descriptor per folder waiting.
fn walk(root: &Folder, ignore: &[String]) -> Result<Vec<(String, Found)>, CheckpointError> {
    let mut found = Vec::new();
    let mut stack = vec![String::new()];
    while let Some(prefix) = stack.pop() {
        let folder = match root.folder(Path::new(&prefix)) {
            Ok(folder) => folder,
            Err(e) if prefix.is_empty() => {
                return Err(CheckpointError::Io(format!(
                    "cannot open the workspace: {e}"
                )))
            }
            Err(_) => {
                let again = look_again_at(root, &prefix);
                found.push((prefix, again));
                continue;
            }
        };
        let entries = match folder.entries() {
            Ok(entries) => entries,
            Err(e) if prefix.is_empty() => {
                return Err(CheckpointError::Io(format!(
                    "cannot list the workspace: {e}"
                )))
            }
            Err(_) => {
                found.push((prefix, Found::LeftOut(LeftOutReason::Unreadable)));
                continue;
            }
        };
        for entry in entries {
            let Some(name) = entry.name.to_str() else {
                let rel = format!("{prefix}/{}", entry.name.to_string_lossy());
                found.push((
                    rel.trim_start_matches('/').to_string(),
                    Found::LeftOut(LeftOutReason::NameNotUtf8),
                ));
                continue;
            };
            let rel = if prefix.is_empty() {
                name.to_string()
            } else {
                format!("{prefix}/{name}")
            };
            if ignored(ignore, &rel, name, entry.kind == Kind::Folder) {
                continue;
            }
            match entry.kind {
                Kind::Folder => stack.push(rel),
                Kind::File => match folder.stat(Path::new(name)) {
                    Ok(meta) if meta.is_file() => found.push((rel, Found::File(meta))),
                    Ok(_) => found.push((rel, look_again(&folder, name))),
                    Err(_) => found.push((rel, Found::LeftOut(LeftOutReason::Unreadable))),
                },
                Kind::Link => found.push((rel, link_of(&folder, name))),
                Kind::Special => found.push((rel, Found::LeftOut(LeftOutReason::Special))),
            }
        }
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(found)
}

/// How reading one file into the store went.
enum Kept {
    /// In the store (`added` bytes new), as the file was when `meta` was taken.
    Stored {
        digest: String,
        added: u64,
        meta: Meta,
    },
    NotKept(LeftOutReason),
}

/// Whether two looks at a file saw the same version of it.
fn same_version(a: &Meta, b: &Meta) -> bool {
    (a.size, a.modified_ns, a.mode) == (b.size, b.modified_ns, b.mode)
}

/// Reads `rel` (opened beneath `root`, no link followed) into the store, at most `budget`
/// new bytes; read again once when it changed while it was read.
fn keep_file(store: &RunStore, root: &Folder, rel: &str, budget: u64) -> Kept {
    for _ in 0..2 {
        let (mut file, before) = match root.open_file(Path::new(rel)) {
            Ok(opened) => opened,
            // Swapped for a link or a folder since the walk: not read through.
            Err(e) if fs_beneath::is_link(&e) => return Kept::NotKept(LeftOutReason::Unstable),
            Err(_) => return Kept::NotKept(LeftOutReason::Unreadable),
        };
        let kept = if before.size <= IN_MEMORY_BYTES {
            keep_small(store, &mut file, &before, budget)
        } else {
            keep_large(store, &mut file, &before, budget)
        };
        match kept {
            Some(kept) => return kept,
            None => continue,
        }
    }
    Kept::NotKept(LeftOutReason::Unstable)
}

/// The facts of `file` now, to tell whether it changed while it was read.
fn now_of(file: &std::fs::File) -> Option<Meta> {
    Meta::of_open(file).ok()
}

/// A small file read whole, hashed, then written only when the store lacks it; `None`
/// when it changed while it was read.
fn keep_small(
    store: &RunStore,
    file: &mut std::fs::File,
    before: &Meta,
    budget: u64,
) -> Option<Kept> {
    let mut bytes = Vec::with_capacity(usize::try_from(before.size).unwrap_or(0));
    if let Err(e) = file.read_to_end(&mut bytes) {
        tracing::warn!(error = %e, "a file was not checkpointed");
        return Some(Kept::NotKept(LeftOutReason::Unreadable));
    }
    let after = now_of(file)?;
    if !same_version(before, &after) || bytes.len() as u64 != before.size {
        return None;
    }
    let digest = digest::of(&bytes);
    if store.has_object(&digest, bytes.len() as u64) {
        return Some(Kept::Stored {
            digest,
            added: 0,
            meta: after,
        });
    }
    if bytes.len() as u64 > budget {
        return Some(Kept::NotKept(LeftOutReason::TooLarge));
    }
    Some(match store.put_object(&digest, &bytes) {
        Ok(added) => Kept::Stored {
            digest,
            added,
            meta: after,
        },
        Err(e) => {
            tracing::warn!(error = %e, "a file was not checkpointed");
            Kept::NotKept(LeftOutReason::NotStored)
        }
    })
}

/// A large file streamed into the store while it is hashed; `None` when it changed while
/// it was read.
fn keep_large(
    store: &RunStore,
    file: &mut std::fs::File,
    before: &Meta,
    budget: u64,
) -> Option<Kept> {
    let Ok(mut incoming) = store.incoming() else {
        return Some(Kept::NotKept(LeftOutReason::NotStored));
    };
    let mut buf = vec![0u8; 64 * 1024];
    let copied: Result<(), LeftOutReason> = loop {
        match file.read(&mut buf) {
            Ok(0) => break Ok(()),
            Ok(n) => {
                if let Err(e) = incoming.write(&buf[..n]) {
                    tracing::warn!(error = %e, "a file was not checkpointed");
                    break Err(LeftOutReason::NotStored);
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "a file was not checkpointed");
                break Err(LeftOutReason::Unreadable);
            }
        }
    };
    if let Err(reason) = copied {
        store.drop_incoming(incoming);
        return Some(Kept::NotKept(reason));
    }
    let after = now_of(file);
    let unchanged = after
        .as_ref()
        .is_some_and(|a| same_version(before, a) && incoming.written == before.size);
    let (Some(after), true) = (after, unchanged) else {
        store.drop_incoming(incoming);
        return None;
    };
    let Ok(digest) = incoming.finish() else {
        store.drop_incoming(incoming);
        return Some(Kept::NotKept(LeftOutReason::NotStored));
    };
    if !store.has_object(&digest, incoming.written) && incoming.written > budget {
        store.drop_incoming(incoming);
        return Some(Kept::NotKept(LeftOutReason::TooLarge));
    }
    Some(match store.admit(incoming, &digest) {
        Ok(added) => Kept::Stored {
            digest,
            added,
            meta: after,
        },
        Err(e) => {
            tracing::warn!(error = %e, "a file was not checkpointed");
            Kept::NotKept(LeftOutReason::NotStored)
        }
    })
}

/// Takes a checkpoint of `workspace` into `store`; the manifest and the index are written.
/// `recent`: the run's previous checkpoint as this process remembers it (`recent.rs`);
/// the checkpoint taken comes back to be remembered in its place.
pub(crate) fn take(
    store: &RunStore,
    workspace: &Path,
    limits: &CheckpointLimits,
    recent: Option<Recent>,
) -> Result<(Checkpoint, Recent), CheckpointError> {
    let started = nanos(SystemTime::now());
    // The previous checkpoint as this process remembers it (while its manifest is still on
    // disk), else as the disk has it.
    let (previous, known) = match recent.filter(|r| store.has_manifest(&r.id)) {
        Some(recent) => (recent.index, recent.listings),
        None => (store.load_index(), BTreeMap::new()),
    };
    let mut index = Index {
        taken_ns: started,
        files: BTreeMap::new(),
    };
    let root = Folder::open(workspace).map_err(|e| io_error("open", workspace, &e))?;
    let mut entries = BTreeMap::new();
    let mut left_out = Vec::new();
    let mut stored_bytes = 0u64;
    let mut bytes = 0u64;
    for (rel, found) in walk(&root, &limits.ignore)? {
        let meta = match found {
            Found::Link(target) => {
                entries.insert(rel, Entry::Link { target });
                continue;
            }
            Found::LeftOut(reason) => {
                left_out.push(LeftOut { path: rel, reason });
                continue;
            }
            Found::File(meta) => meta,
        };
        bytes += meta.size;
        let cached = previous.files.get(&rel).filter(|c| {
            c.size == meta.size
                && c.modified_ns == meta.modified_ns
                && c.mode == Some(meta.mode)
                && meta.modified_ns.saturating_add(RACY_NS) < previous.taken_ns
        });
        let kept = match cached {
            Some(c) => Kept::Stored {
                digest: c.digest.clone(),
                added: 0,
                meta,
            },
            None if meta.size > limits.max_file_bytes => Kept::NotKept(LeftOutReason::TooLarge),
            None => keep_file(
                store,
                &root,
                &rel,
                limits.max_checkpoint_bytes.saturating_sub(stored_bytes),
            ),
        };
        match kept {
            Kept::Stored {
                digest,
                added,
                meta,
            } => {
                stored_bytes += added;
                index.files.insert(
                    rel.clone(),
                    IndexEntry {
                        size: meta.size,
                        modified_ns: meta.modified_ns,
                        executable: executable(meta.mode),
                        mode: Some(meta.mode),
                        digest: digest.clone(),
                    },
                );
                entries.insert(
                    rel,
                    Entry::File {
                        digest,
                        size: meta.size,
                        executable: executable(meta.mode),
                        mode: Some(meta.mode),
                    },
                );
            }
            Kept::NotKept(reason) => {
                left_out.push(LeftOut {
                    path: rel.clone(),
                    reason,
                });
                entries.insert(
                    rel,
                    Entry::NotKept {
                        size: meta.size,
                        modified_ns: meta.modified_ns,
                        reason,
                    },
                );
            }
        }
    }
    let complete = !left_out
        .iter()
        .any(|l| l.reason == LeftOutReason::NotStored);
    let files = entries.len() as u64;
    let manifest = Manifest::new(entries, left_out.clone(), complete);
    let (id, listings) = store.save_manifest(&manifest, known)?;
    // Unchanged, the index on disk stands: its older time only makes a file changed just
    // before it be read once more by a later process.
    if index.files != previous.files {
        if let Err(e) = store.save_index(&index) {
            // The next checkpoint reads every file again; this one stands.
            tracing::warn!(error = %e, "the checkpoint index was not saved");
        }
    }
    let recent = Recent {
        id: id.clone(),
        index,
        listings,
    };
    let taken = Checkpoint {
        id,
        files,
        bytes,
        stored_bytes,
        left_out,
        complete,
    };
    Ok((taken, recent))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ignore_patterns_match_names_folders_and_paths() {
        let p: Vec<String> = [
            "target/",
            "node_modules/",
            "build/out",
            "*.tmp",
            "secret.txt",
        ]
        .map(String::from)
        .to_vec();
        assert!(ignored(&p, "target", "target", true));
        assert!(ignored(&p, "a/target", "target", true));
        assert!(!ignored(&p, "target", "target", false));
        assert!(ignored(&p, "web/node_modules", "node_modules", true));
        assert!(ignored(&p, "build/out", "out", true));
        assert!(!ignored(&p, "x/build/out", "out", true));
        assert!(ignored(&p, "a/secret.txt", "secret.txt", false));
        assert!(ignored(&[], ".planwright", ".planwright", true));
        assert!(ignored(&[], "a/.planwright", ".planwright", true));
        // Version control: recorded, but not its object stores.
        assert!(!ignored(&[], ".git", ".git", true));
        assert!(!ignored(&[], ".git/hooks", "hooks", true));
        assert!(!ignored(&[], ".git/config", "config", false));
        assert!(ignored(&[], ".git/objects", "objects", true));
        assert!(ignored(&[], ".git/lfs", "lfs", true));
        assert!(ignored(&[], ".git/modules/sub/objects", "objects", true));
        assert!(ignored(&[], "a/.hg/store", "store", true));
        assert!(ignored(&[], ".svn/pristine", "pristine", true));
        assert!(
            !ignored(&[], "src/objects", "objects", true),
            "not inside .git"
        );
        assert!(!ignored(&[], "objects", "objects", true));
        assert!(!ignored(&[], ".git/objects", "objects", false), "a file");
        // No globbing: a pattern is a name or a path.
        assert!(!ignored(&p, "a.tmp", "a.tmp", false));
    }
}
