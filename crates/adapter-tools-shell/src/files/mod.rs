//! The file tools: `file_read`, `file_write`, `file_str_replace` and `file_list`.
//!
//! All of them resolve their `path` with [`crate::workspace::resolve_in`] and do their
//! filesystem work on tokio's blocking threads.

use std::io;
use std::path::{Path, PathBuf};

use domain::ToolError;

use crate::workspace;

mod list;
mod read;
mod str_replace;
mod write;

pub use list::{FileListArgs, FileListTool};
pub use read::{FileReadArgs, FileReadTool};
pub use str_replace::{FileStrReplaceArgs, FileStrReplaceTool};
pub use write::{FileWriteArgs, FileWriteTool};

pub(crate) const DEFAULT_MAX_READ_BYTES: usize = 256 * 1024;
pub(crate) const DEFAULT_LIST_DEPTH: usize = 3;
pub(crate) const DEFAULT_LIST_ENTRIES: usize = 500;

/// A path argument resolved inside the workspace.
#[derive(Debug, Clone)]
struct Target {
    /// Absolute path inside the canonical workspace.
    path: PathBuf,
    /// The same, relative to the workspace (`.` for the root): for messages and attachments.
    rel: String,
    /// The canonical workspace.
    root: PathBuf,
}

impl Target {
    fn resolve(workspace: &Path, user_path: &str) -> Result<Target, ToolError> {
        let root = workspace::canonical_workspace(workspace)?;
        let path = workspace::resolve_in(&root, user_path)?;
        let rel = workspace::relative(&root, &path);
        Ok(Target { path, rel, root })
    }

    /// Refuses a target that is, or lies in, one of the `read_only` paths (a relative one:
    /// in this workspace; resolved like the target: a missing file by its folder) found
    /// inside the workspace. A workspace
    /// that itself lies in one (the default `./.planwright/runs/R/workspace` inside the
    /// project's state folder) is the run's own, not protected state.
    fn refuse_read_only(&self, read_only: &[PathBuf]) -> Result<(), ToolError> {
        for protected in read_only {
            let protected = &self.root.join(protected);
            let resolved = std::fs::canonicalize(protected).ok().or_else(|| {
                let parent = std::fs::canonicalize(protected.parent()?).ok()?;
                Some(parent.join(protected.file_name()?))
            });
            let inside = |p: &PathBuf| p.starts_with(&self.root) && *p != self.root;
            if resolved.is_some_and(|p| inside(&p) && self.path.starts_with(&p)) {
                return Err(ToolError::Refused(format!(
                    "'{}' is Planwright's own configuration or state, or version control, and \
                     is read-only to tools",
                    self.rel
                )));
            }
        }
        Ok(())
    }
}

/// Runs blocking filesystem work off the async worker threads.
async fn blocking<T, F>(work: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, ToolError> + Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ToolError::Failed(format!("the file operation was aborted: {e}")))?
}

/// An I/O error about `rel`, in words a model can act on.
fn io_error(action: &str, rel: &str, error: &io::Error) -> ToolError {
    let reason = match error.kind() {
        io::ErrorKind::NotFound => "it does not exist".to_string(),
        io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => error.to_string(),
    };
    ToolError::Failed(format!("cannot {action} '{rel}': {reason}"))
}

/// Whether `bytes` look like binary data rather than text.
fn looks_binary(bytes: &[u8]) -> bool {
    bytes.contains(&0)
}

fn binary_message(rel: &str, size: u64) -> ToolError {
    ToolError::Failed(format!(
        "'{rel}' is a binary file ({size} bytes), not UTF-8 text, so it is not shown; use \
         shell_exec (e.g. `file {rel}` or `xxd {rel} | head`) to inspect it"
    ))
}
