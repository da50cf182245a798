//! [`LocalWorkspaceFiles`]: the domain's [`WorkspaceFiles`] port on the local filesystem,
//! beside the file tools (docs/security.md, "Input files"). It lists a workspace's regular
//! files (symbolic links not followed; `.git` and `.planwright` folders left out), gives
//! their size, modification time and SHA-256 digest, and keeps copies of input files for a
//! run under `<copies root>/<run id>/inputs/`, a folder outside the workspace (the bubblewrap
//! sandbox binds only the workspace, so a sandboxed command cannot reach the copies), from
//! which a changed input is restored. Every path is checked to stay inside the workspace.

use std::fs;
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

use async_trait::async_trait;
use domain::ports::{FileFacts, Listing, ScratchFile, WorkspaceError, WorkspaceFiles};
use sha2::{Digest, Sha256};

/// Folders of a workspace that are not the user's files: version control and Planwright's
/// own run data.
pub(crate) const SKIPPED_FOLDERS: [&str; 2] = [".git", ".planwright"];

/// The port on the local filesystem; copies live under `copies_root`.
#[derive(Debug, Clone)]
pub struct LocalWorkspaceFiles {
    copies_root: PathBuf,
}

impl LocalWorkspaceFiles {
    /// Copies of run `R`'s inputs go to `copies_root/R/inputs/` (created when needed).
    pub fn new(copies_root: impl Into<PathBuf>) -> LocalWorkspaceFiles {
        LocalWorkspaceFiles {
            copies_root: copies_root.into(),
        }
    }

    /// Where the copies of `run_id`'s inputs are kept.
    pub fn copies_of(&self, run_id: &str) -> PathBuf {
        self.copies_root.join(safe_component(run_id)).join("inputs")
    }

    /// Where `run_id`'s scratch folders are made (docs/verification.md).
    pub fn scratch_of(&self, run_id: &str) -> PathBuf {
        self.copies_root.join(safe_component(run_id)).join("scratch")
    }
}

/// `run_id` usable as one folder name.
pub(crate) fn safe_component(run_id: &str) -> String {
    run_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect::<String>()
        .trim_start_matches('.')
        .to_string()
}

/// `rel` under `base`, refused when it is absolute or climbs out.
pub(crate) fn inside(base: &Path, rel: &str) -> Result<PathBuf, WorkspaceError> {
    let rel_path = Path::new(rel);
    let plain = rel_path
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if rel.is_empty() || !plain {
        return Err(WorkspaceError::Io(format!(
            "'{rel}' is not a path inside the workspace"
        )));
    }
    Ok(base.join(rel_path))
}

fn io(what: &str, path: &Path, e: &io::Error) -> WorkspaceError {
    WorkspaceError::Io(format!("cannot {what} {}: {e}", path.display()))
}

/// Runs filesystem work off the async threads.
async fn blocking<T, F>(work: F) -> Result<T, WorkspaceError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, WorkspaceError> + Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| WorkspaceError::Io(format!("the file operation was aborted: {e}")))?
}

fn facts_of(rel: String, meta: &fs::Metadata) -> FileFacts {
    let modified_ns = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
    FileFacts {
        path: rel,
        size: meta.len(),
        modified_ns,
    }
}

/// The regular files under `root`, sorted, at most `limit`.
pub(crate) fn list_files(root: &Path, limit: usize) -> Result<Listing, WorkspaceError> {
    let mut files = Vec::new();
    let mut truncated = false;
    let mut stack = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, prefix)) = stack.pop() {
        let mut entries: Vec<fs::DirEntry> = fs::read_dir(&dir)
            .map_err(|e| io("list", &dir, &e))?
            .filter_map(Result::ok)
            .collect();
        entries.sort_by_key(fs::DirEntry::file_name);
        for entry in entries {
            let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                continue; // not UTF-8: cannot be named to the model anyway
            };
            let rel = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}/{name}")
            };
            let Ok(meta) = fs::symlink_metadata(entry.path()) else {
                continue;
            };
            if meta.is_dir() {
                if !SKIPPED_FOLDERS.contains(&name.as_str()) {
                    stack.push((entry.path(), rel));
                }
            } else if meta.is_file() {
                if files.len() >= limit {
                    truncated = true;
                    break;
                }
                files.push(facts_of(rel, &meta));
            }
        }
        if truncated {
            break;
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(Listing { files, truncated })
}

/// The hex SHA-256 of the file at `path`; `None` when it is missing.
fn digest_of(path: &Path) -> Result<Option<String>, WorkspaceError> {
    let mut file = match fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io("read", path, &e)),
    };
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = file.read(&mut buf).map_err(|e| io("read", path, &e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(Some(
        hasher
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect(),
    ))
}

/// The facts of a regular file (symbolic links not followed); `None` when missing.
fn stat_file(path: &Path, rel: &str) -> Result<Option<FileFacts>, WorkspaceError> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() => Ok(Some(facts_of(rel.to_string(), &meta))),
        Ok(_) => Ok(None),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io("look at", path, &e)),
    }
}

#[async_trait]
impl WorkspaceFiles for LocalWorkspaceFiles {
    async fn list(&self, workspace: &Path, limit: usize) -> Result<Listing, WorkspaceError> {
        let root = workspace.to_path_buf();
        blocking(move || list_files(&root, limit)).await
    }

    async fn stat(
        &self,
        workspace: &Path,
        path: &str,
    ) -> Result<Option<FileFacts>, WorkspaceError> {
        let full = inside(workspace, path)?;
        let rel = path.to_string();
        blocking(move || stat_file(&full, &rel)).await
    }

    async fn digest(&self, workspace: &Path, path: &str) -> Result<Option<String>, WorkspaceError> {
        let full = inside(workspace, path)?;
        blocking(move || match stat_file(&full, "")? {
            Some(_) => digest_of(&full),
            None => Ok(None),
        })
        .await
    }

    async fn head(
        &self,
        workspace: &Path,
        path: &str,
        max_bytes: usize,
    ) -> Result<Option<Vec<u8>>, WorkspaceError> {
        let full = inside(workspace, path)?;
        blocking(move || {
            if stat_file(&full, "")?.is_none() {
                return Ok(None);
            }
            let file = fs::File::open(&full).map_err(|e| io("read", &full, &e))?;
            let mut head = Vec::new();
            file.take(max_bytes as u64)
                .read_to_end(&mut head)
                .map_err(|e| io("read", &full, &e))?;
            Ok(Some(head))
        })
        .await
    }

    async fn keep_copy(
        &self,
        run_id: &str,
        workspace: &Path,
        path: &str,
    ) -> Result<String, WorkspaceError> {
        let from = inside(workspace, path)?;
        let to = inside(&self.copies_of(run_id), path)?;
        blocking(move || {
            if let Some(parent) = to.parent() {
                fs::create_dir_all(parent).map_err(|e| io("create", parent, &e))?;
            }
            fs::copy(&from, &to).map_err(|e| io("copy", &from, &e))?;
            digest_of(&to)?.ok_or_else(|| WorkspaceError::Io(format!("{} vanished", to.display())))
        })
        .await
    }

    async fn restore(
        &self,
        run_id: &str,
        workspace: &Path,
        path: &str,
    ) -> Result<(), WorkspaceError> {
        let copy = inside(&self.copies_of(run_id), path)?;
        let to = inside(workspace, path)?;
        let rel = path.to_string();
        blocking(move || {
            if !copy.is_file() {
                return Err(WorkspaceError::NoCopy(rel));
            }
            // Whatever took the input's place (a folder, a link) goes first.
            match fs::symlink_metadata(&to) {
                Ok(meta) if meta.is_dir() => {
                    fs::remove_dir_all(&to).map_err(|e| io("remove", &to, &e))?;
                }
                Ok(meta) if !meta.is_file() => {
                    fs::remove_file(&to).map_err(|e| io("remove", &to, &e))?;
                }
                _ => {}
            }
            if let Some(parent) = to.parent() {
                fs::create_dir_all(parent).map_err(|e| io("create", parent, &e))?;
            }
            // Into a new file, then renamed over: a hard link to the input elsewhere keeps
            // whatever was written through it, the input gets its own content back.
            let staging = to.with_file_name(format!(
                ".{}.planwright-restore",
                to.file_name().and_then(|n| n.to_str()).unwrap_or("input")
            ));
            fs::copy(&copy, &staging).map_err(|e| io("restore", &to, &e))?;
            fs::rename(&staging, &to).map_err(|e| io("restore", &to, &e))
        })
        .await
    }

    async fn discard_copies(&self, run_id: &str) -> Result<(), WorkspaceError> {
        let dir = self.copies_of(run_id);
        let scratch = self.scratch_of(run_id);
        blocking(move || {
            for dir in [&dir, &scratch] {
                match fs::remove_dir_all(dir) {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(e) => return Err(io("remove", dir, &e)),
                }
            }
            // The run's folder too, when nothing else (its workspace) is in it.
            if let Some(run_dir) = dir.parent() {
                let _ = fs::remove_dir(run_dir);
            }
            Ok(())
        })
        .await
    }

    async fn scratch(
        &self,
        run_id: &str,
        workspace: &Path,
        name: &str,
        files: &[ScratchFile],
    ) -> Result<PathBuf, WorkspaceError> {
        let dir = inside(&self.scratch_of(run_id), &safe_component(name))?;
        let sources: Vec<(PathBuf, PathBuf)> = files
            .iter()
            .map(|f| {
                let from = if f.from_copy {
                    inside(&self.copies_of(run_id), &f.path)?
                } else {
                    inside(workspace, &f.path)?
                };
                Ok((from, inside(&dir, &f.path)?))
            })
            .collect::<Result<_, WorkspaceError>>()?;
        blocking(move || {
            match fs::remove_dir_all(&dir) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(io("remove", &dir, &e)),
            }
            fs::create_dir_all(&dir).map_err(|e| io("create", &dir, &e))?;
            for (from, to) in &sources {
                if stat_file(from, "")?.is_none() {
                    return Err(WorkspaceError::Io(format!(
                        "{} is not a regular file",
                        from.display()
                    )));
                }
                if let Some(parent) = to.parent() {
                    fs::create_dir_all(parent).map_err(|e| io("create", parent, &e))?;
                }
                fs::copy(from, to).map_err(|e| io("copy", from, &e))?;
            }
            Ok(dir)
        })
        .await
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_make_one_folder_name() {
        assert_eq!(safe_component("run_1"), "run_1");
        assert_eq!(safe_component("../x"), "_x");
        assert_eq!(safe_component("a/b"), "a_b");
    }

    #[test]
    fn paths_must_stay_inside() {
        let base = Path::new("/w");
        assert_eq!(inside(base, "a/b.txt").unwrap(), Path::new("/w/a/b.txt"));
        for bad in ["", "/etc/passwd", "../x", "a/../../x"] {
            assert!(inside(base, bad).is_err(), "{bad}");
        }
    }
}
