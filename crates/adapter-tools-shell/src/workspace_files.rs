//! [`LocalWorkspaceFiles`]: the domain's [`WorkspaceFiles`] port on the local filesystem,
//! beside the file tools (docs/security.md, "Input files"). It lists a workspace's regular
//! files (symbolic links not followed; `.git` and `.planwright` folders left out), gives
//! their size, modification time, permissions and SHA-256 digest, and keeps copies of input
//! files for a run under `<copies root>/<run id>/inputs/`, a folder outside the workspace
//! (the bubblewrap sandbox binds only the workspace, so a sandboxed command cannot reach the
//! copies), from which a changed input is restored. Every path in the workspace is opened
//! beneath it without following a link at any component (`fs_beneath`, docs/security.md
//! "Links in the workspace"): a folder the model swapped for a link to the outside is seen
//! as the input gone, and the restore makes a real folder in its place.

use std::fs;
use std::io::{self, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use async_trait::async_trait;
use domain::ports::{FileFacts, Listing, ScratchFile, WorkspaceError, WorkspaceFiles};
use fs_beneath::{Folder, Kind, Meta};
use sha2::{Digest, Sha256};

/// Folders of a workspace that are not the user's files: version control and Planwright's
/// own run data.
const SKIPPED_FOLDERS: [&str; 2] = [".git", ".planwright"];

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
        self.copies_root
            .join(safe_component(run_id))
            .join("scratch")
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
    Ok(base.join(plain(rel)?))
}

/// `rel` as a relative path of plain names, refused when it is empty, absolute or climbs
/// out.
fn plain(rel: &str) -> Result<&Path, WorkspaceError> {
    let rel_path = Path::new(rel);
    let plain = rel_path
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if rel.is_empty() || !plain {
        return Err(WorkspaceError::Io(format!(
            "'{rel}' is not a path inside the workspace"
        )));
    }
    Ok(rel_path)
}

fn io(what: &str, path: &Path, e: &io::Error) -> WorkspaceError {
    WorkspaceError::Io(format!("cannot {what} {}: {e}", path.display()))
}

/// Whether `e` says there is no regular file at the path: nothing there, a link on the way
/// (never followed), a file where a folder should be, or not a regular file.
fn no_file_there(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::NotFound
        || e.kind() == io::ErrorKind::InvalidInput
        || e.kind() == io::ErrorKind::NotADirectory
        || fs_beneath::is_link(e)
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

fn facts_of(rel: String, meta: &Meta) -> FileFacts {
    FileFacts {
        path: rel,
        size: meta.size,
        modified_ns: meta.modified_ns,
        mode: Some(meta.mode),
    }
}

fn open_workspace(workspace: &Path) -> Result<Folder, WorkspaceError> {
    Folder::open(workspace).map_err(|e| io("open", workspace, &e))
}

/// The regular files under `root`, sorted, at most `limit`; each folder is opened from the
/// workspace's descriptor when its turn comes, never through a link.
pub(crate) fn list_files(root: &Path, limit: usize) -> Result<Listing, WorkspaceError> {
    let mut files = Vec::new();
    let mut truncated = false;
    let workspace = open_workspace(root)?;
    let mut stack = vec![String::new()];
    while let Some(prefix) = stack.pop() {
        let Ok(folder) = workspace.folder(Path::new(&prefix)) else {
            continue;
        };
        let mut entries = match folder.entries() {
            Ok(entries) => entries,
            Err(e) if prefix.is_empty() => return Err(io("list", root, &e)),
            Err(_) => continue,
        };
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        for entry in entries {
            let Some(name) = entry.name.to_str().map(str::to_string) else {
                continue; // not UTF-8: cannot be named to the model anyway
            };
            let rel = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}/{name}")
            };
            match entry.kind {
                Kind::Folder if !SKIPPED_FOLDERS.contains(&name.as_str()) => stack.push(rel),
                Kind::File => {
                    let Ok(meta) = folder.stat(Path::new(&name)) else {
                        continue;
                    };
                    if !meta.is_file() {
                        continue;
                    }
                    if files.len() >= limit {
                        truncated = true;
                        break;
                    }
                    files.push(facts_of(rel, &meta));
                }
                _ => {}
            }
        }
        if truncated {
            break;
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(Listing { files, truncated })
}

/// The regular file `rel` of `workspace`, open for reading; `None` when there is none (a
/// link on the way is not followed).
fn open_input(workspace: &Path, rel: &Path) -> Result<Option<(fs::File, Meta)>, WorkspaceError> {
    match open_workspace(workspace)?.open_file(rel) {
        Ok(opened) => Ok(Some(opened)),
        Err(e) if no_file_there(&e) => Ok(None),
        Err(e) => Err(io("read", &workspace.join(rel), &e)),
    }
}

/// The hex SHA-256 of what `file` holds from where it stands.
fn digest_of(file: &mut impl Read, path: &Path) -> Result<String, WorkspaceError> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = file.read(&mut buf).map_err(|e| io("read", path, &e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// The facts of the regular file `rel` (no link followed on the way); `None` when missing.
fn stat_file(workspace: &Path, rel: &str) -> Result<Option<FileFacts>, WorkspaceError> {
    let path = plain(rel)?;
    match open_workspace(workspace)?.stat(path) {
        Ok(meta) if meta.is_file() => Ok(Some(facts_of(rel.to_string(), &meta))),
        Ok(_) => Ok(None),
        Err(e) if no_file_there(&e) => Ok(None),
        Err(e) => Err(io("look at", &workspace.join(rel), &e)),
    }
}

/// Puts the content of `copy` back at `rel` in `workspace`, with the copy's permissions:
/// each folder on the way made real (a link there removed, never followed), whatever took
/// the input's place removed, the content written into a new file beside it and renamed
/// over it (a hard link to the input elsewhere keeps whatever was written through it).
fn put_back(copy: &Path, workspace: &Path, rel: &Path) -> Result<(), WorkspaceError> {
    let to = workspace.join(rel);
    let mut source = fs::File::open(copy).map_err(|e| io("read", copy, &e))?;
    let mode = source
        .metadata()
        .map_err(|e| io("read", copy, &e))?
        .permissions()
        .mode()
        & 0o7777;
    let names = fs_beneath::parts(rel).map_err(|e| io("restore", &to, &e))?;
    let Some((name, folders)) = names.split_last() else {
        return Err(WorkspaceError::Io(format!(
            "'{}' is not a file",
            rel.display()
        )));
    };
    let parent_rel: PathBuf = folders.iter().collect();
    let parent = open_workspace(workspace)?
        .make_folders(&parent_rel)
        .map_err(|e| io("restore", &to, &e))?;
    match parent.stat(Path::new(name)) {
        Ok(meta) if meta.kind != Kind::File => {
            parent.remove_all(name).map_err(|e| io("remove", &to, &e))?;
        }
        _ => {}
    }
    let staging =
        std::ffi::OsString::from(format!(".{}.planwright-restore", name.to_string_lossy()));
    let staging = staging.as_os_str();
    parent
        .remove_all(staging)
        .map_err(|e| io("restore", &to, &e))?;
    let written = (|| -> io::Result<()> {
        let mut file = parent.create_file(staging)?;
        io::copy(&mut source, &mut file)?;
        file.flush()?;
        file.set_permissions(fs::Permissions::from_mode(mode))?;
        parent.rename(staging, name)
    })();
    if let Err(e) = written {
        let _ = parent.remove_file(staging);
        return Err(io("restore", &to, &e));
    }
    Ok(())
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
        let (workspace, rel) = (workspace.to_path_buf(), path.to_string());
        blocking(move || stat_file(&workspace, &rel)).await
    }

    async fn digest(&self, workspace: &Path, path: &str) -> Result<Option<String>, WorkspaceError> {
        let workspace = workspace.to_path_buf();
        let rel = plain(path)?.to_path_buf();
        blocking(move || match open_input(&workspace, &rel)? {
            Some((mut file, _)) => digest_of(&mut file, &workspace.join(&rel)).map(Some),
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
        let workspace = workspace.to_path_buf();
        let rel = plain(path)?.to_path_buf();
        blocking(move || {
            let Some((file, _)) = open_input(&workspace, &rel)? else {
                return Ok(None);
            };
            let mut head = Vec::new();
            file.take(max_bytes as u64)
                .read_to_end(&mut head)
                .map_err(|e| io("read", &workspace.join(&rel), &e))?;
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
        let workspace = workspace.to_path_buf();
        let rel = plain(path)?.to_path_buf();
        let to = inside(&self.copies_of(run_id), path)?;
        blocking(move || {
            let from = workspace.join(&rel);
            let (mut source, meta) = open_input(&workspace, &rel)?.ok_or_else(|| {
                WorkspaceError::Io(format!("{} is not a regular file", from.display()))
            })?;
            if let Some(parent) = to.parent() {
                fs::create_dir_all(parent).map_err(|e| io("create", parent, &e))?;
            }
            // A copy kept before (read-only, maybe) is replaced, not written through.
            let _ = fs::remove_file(&to);
            let mut copy = fs::File::create(&to).map_err(|e| io("copy", &from, &e))?;
            let mut hasher = HashingWriter {
                inner: &mut copy,
                hasher: Sha256::new(),
            };
            io::copy(&mut source, &mut hasher).map_err(|e| io("copy", &from, &e))?;
            let digest = hasher
                .hasher
                .finalize()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            copy.set_permissions(fs::Permissions::from_mode(meta.mode))
                .map_err(|e| io("copy", &from, &e))?;
            Ok(digest)
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
        let workspace = workspace.to_path_buf();
        let rel = plain(path)?.to_path_buf();
        let name = path.to_string();
        blocking(move || {
            if !copy.is_file() {
                return Err(WorkspaceError::NoCopy(name));
            }
            put_back(&copy, &workspace, &rel)
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
        // A kept copy is Planwright's own file; a workspace file is opened beneath the
        // workspace without following a link (docs/security.md, "Links in the workspace").
        let sources: Vec<(Option<PathBuf>, PathBuf, PathBuf)> = files
            .iter()
            .map(|f| {
                let copy = if f.from_copy {
                    Some(inside(&self.copies_of(run_id), &f.path)?)
                } else {
                    None
                };
                Ok((copy, PathBuf::from(&f.path), inside(&dir, &f.path)?))
            })
            .collect::<Result<_, WorkspaceError>>()?;
        let workspace = workspace.to_path_buf();
        blocking(move || {
            match fs::remove_dir_all(&dir) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(io("remove", &dir, &e)),
            }
            fs::create_dir_all(&dir).map_err(|e| io("create", &dir, &e))?;
            for (copy, rel, to) in &sources {
                let mut source = match copy {
                    Some(copy) => fs::File::open(copy).map_err(|e| io("read", copy, &e))?,
                    None => match open_input(&workspace, rel)? {
                        Some((file, _)) => file,
                        None => {
                            return Err(WorkspaceError::Io(format!(
                                "{} is not a regular file",
                                rel.display()
                            )))
                        }
                    },
                };
                if let Some(parent) = to.parent() {
                    fs::create_dir_all(parent).map_err(|e| io("create", parent, &e))?;
                }
                let mut out = fs::File::create(to).map_err(|e| io("create", to, &e))?;
                io::copy(&mut source, &mut out).map_err(|e| io("copy", rel, &e))?;
            }
            Ok(dir)
        })
        .await
    }
}

/// Writes through to `inner` while hashing what passes.
struct HashingWriter<'a, W> {
    inner: &'a mut W,
    hasher: Sha256,
}

impl<W: Write> Write for HashingWriter<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
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
