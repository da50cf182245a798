//! Taking a checkpoint: a walk of the workspace (symbolic links recorded as links, never
//! followed; `.git`, `.planwright` and the ignore list left out), each regular file's
//! content put in the store unless the index says its size and time did not change since
//! the last checkpoint, within the per-file and per-checkpoint caps (docs/checkpoints.md).
//! The index is trusted without looking in the store (10,000 files: 10,000 lookups fewer):
//! the store only ever adds objects, and discarding a run's checkpoints removes the index
//! with them.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use domain::ports::{Checkpoint, CheckpointError, LeftOut, LeftOutReason};

use super::store::{io_error, Entry, Index, IndexEntry, Manifest, RunStore};
use super::CheckpointLimits;
use crate::workspace_files::SKIPPED_FOLDERS;

/// A cached digest is trusted only for a file last changed this long before the previous
/// checkpoint started (a file changed within the same tick of a coarse clock is read again).
const RACY_NS: u64 = 2_000_000_000;

fn nanos(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

fn modified_ns(meta: &fs::Metadata) -> u64 {
    meta.modified().map(nanos).unwrap_or(0)
}

fn executable(meta: &fs::Metadata) -> bool {
    meta.permissions().mode() & 0o111 != 0
}

/// Whether `rel` (named `name`) is left out by `patterns`: `NAME/` a folder of that name
/// anywhere, `NAME` a file or folder of that name anywhere, `a/b` (with or without a final
/// `/`) that path from the workspace's top.
pub(crate) fn ignored(patterns: &[String], rel: &str, name: &str, is_dir: bool) -> bool {
    if SKIPPED_FOLDERS.contains(&name) && is_dir {
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
    File(fs::Metadata),
    Link(String),
    LeftOut(LeftOutReason),
}

/// The paths under `workspace` (sorted), minus the ignored ones.
fn walk(workspace: &Path, ignore: &[String]) -> Result<Vec<(String, Found)>, CheckpointError> {
    let mut found = Vec::new();
    let mut stack = vec![(workspace.to_path_buf(), String::new())];
    while let Some((dir, prefix)) = stack.pop() {
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if prefix.is_empty() => return Err(io_error("list", &dir, &e)),
            Err(_) => {
                found.push((prefix, Found::LeftOut(LeftOutReason::Unreadable)));
                continue;
            }
        };
        for entry in entries.filter_map(Result::ok) {
            let os_name = entry.file_name();
            let Some(name) = os_name.to_str() else {
                let rel = format!("{prefix}/{}", os_name.to_string_lossy());
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
            // The kind comes with the listing; only files need their metadata (read
            // relative to the open folder, links not followed).
            let Ok(kind) = entry.file_type() else {
                found.push((rel, Found::LeftOut(LeftOutReason::Unreadable)));
                continue;
            };
            if ignored(ignore, &rel, name, kind.is_dir()) {
                continue;
            }
            if kind.is_dir() {
                stack.push((entry.path(), rel));
            } else if kind.is_file() {
                match entry.metadata() {
                    Ok(meta) => found.push((rel, Found::File(meta))),
                    Err(_) => found.push((rel, Found::LeftOut(LeftOutReason::Unreadable))),
                }
            } else if kind.is_symlink() {
                match fs::read_link(entry.path()) {
                    Ok(target) => match target.to_str() {
                        Some(t) => found.push((rel, Found::Link(t.to_string()))),
                        None => found.push((rel, Found::LeftOut(LeftOutReason::NameNotUtf8))),
                    },
                    Err(_) => found.push((rel, Found::LeftOut(LeftOutReason::Unreadable))),
                }
            } else {
                found.push((rel, Found::LeftOut(LeftOutReason::Special)));
            }
        }
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(found)
}

/// How reading one file into the store went.
enum Kept {
    /// In the store (`added` bytes new).
    Stored {
        digest: String,
        added: u64,
    },
    NotKept(LeftOutReason),
}

/// Reads `path` into the store, at most `budget` new bytes; read again once when it
/// changed meanwhile.
fn keep_file(store: &RunStore, path: &Path, meta: &fs::Metadata, budget: u64) -> Kept {
    let mut before = (meta.len(), modified_ns(meta));
    for _ in 0..2 {
        let mut incoming = match store.incoming() {
            Ok(i) => i,
            Err(_) => return Kept::NotKept(LeftOutReason::NotStored),
        };
        let mut file = match fs::File::open(path) {
            Ok(f) => f,
            Err(_) => {
                store.drop_incoming(incoming);
                return Kept::NotKept(LeftOutReason::Unreadable);
            }
        };
        let mut buf = vec![0u8; 64 * 1024];
        let copied: Result<(), (LeftOutReason, io::Error)> = loop {
            match file.read(&mut buf) {
                Ok(0) => break Ok(()),
                Ok(n) => {
                    if let Err(e) = incoming.write(&buf[..n]) {
                        break Err((LeftOutReason::NotStored, e));
                    }
                }
                Err(e) => break Err((LeftOutReason::Unreadable, e)),
            }
        };
        if let Err((reason, e)) = copied {
            tracing::warn!(path = %path.display(), error = %e, "a file was not checkpointed");
            store.drop_incoming(incoming);
            return Kept::NotKept(reason);
        }
        let after = fs::symlink_metadata(path)
            .map(|m| (m.len(), modified_ns(&m)))
            .unwrap_or((u64::MAX, 0));
        if after != before || incoming.written != before.0 {
            store.drop_incoming(incoming);
            before = after;
            continue;
        }
        let digest = match incoming.finish() {
            Ok(d) => d,
            Err(_) => {
                store.drop_incoming(incoming);
                return Kept::NotKept(LeftOutReason::NotStored);
            }
        };
        if !store.has_object(&digest) && incoming.written > budget {
            store.drop_incoming(incoming);
            return Kept::NotKept(LeftOutReason::TooLarge);
        }
        return match store.admit(incoming, &digest) {
            Ok(added) => Kept::Stored { digest, added },
            Err(e) => {
                tracing::warn!(error = %e, "a file was not checkpointed");
                Kept::NotKept(LeftOutReason::NotStored)
            }
        };
    }
    Kept::NotKept(LeftOutReason::Unstable)
}

/// Takes a checkpoint of `workspace` into `store`; the manifest and the index are written.
pub(crate) fn take(
    store: &RunStore,
    workspace: &Path,
    limits: &CheckpointLimits,
) -> Result<Checkpoint, CheckpointError> {
    let started = nanos(SystemTime::now());
    let previous = store.load_index();
    let mut index = Index {
        taken_ns: started,
        files: BTreeMap::new(),
    };
    let mut entries = BTreeMap::new();
    let mut left_out = Vec::new();
    let mut stored_bytes = 0u64;
    let mut bytes = 0u64;
    for (rel, found) in walk(workspace, &limits.ignore)? {
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
        let (size, mtime, exec) = (meta.len(), modified_ns(&meta), executable(&meta));
        bytes += size;
        let cached = previous.files.get(&rel).filter(|c| {
            c.size == size
                && c.modified_ns == mtime
                && c.executable == exec
                && mtime.saturating_add(RACY_NS) < previous.taken_ns
        });
        let kept = match cached {
            Some(c) => Kept::Stored {
                digest: c.digest.clone(),
                added: 0,
            },
            None if size > limits.max_file_bytes => Kept::NotKept(LeftOutReason::TooLarge),
            None => keep_file(
                store,
                &workspace.join(&rel),
                &meta,
                limits.max_checkpoint_bytes.saturating_sub(stored_bytes),
            ),
        };
        match kept {
            Kept::Stored { digest, added } => {
                stored_bytes += added;
                index.files.insert(
                    rel.clone(),
                    IndexEntry {
                        size,
                        modified_ns: mtime,
                        executable: exec,
                        digest: digest.clone(),
                    },
                );
                entries.insert(
                    rel,
                    Entry::File {
                        digest,
                        size,
                        executable: exec,
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
                        size,
                        modified_ns: mtime,
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
    let id = store.save_manifest(&manifest)?;
    if let Err(e) = store.save_index(&index) {
        // The next checkpoint reads every file again; this one stands.
        tracing::warn!(error = %e, "the checkpoint index was not saved");
    }
    Ok(Checkpoint {
        id,
        files,
        bytes,
        stored_bytes,
        left_out,
        complete,
    })
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
        assert!(ignored(&[], "a/.git", ".git", true));
        assert!(ignored(&[], ".planwright", ".planwright", true));
        assert!(!ignored(&[], ".git", ".git", false));
        // No globbing: a pattern is a name or a path.
        assert!(!ignored(&p, "a.tmp", "a.tmp", false));
    }
}
