//! The workspace port: what the runtime sees of a run's workspace folder to protect the
//! files that were there before the run (its inputs) and to ground completion in the files
//! the run really left (docs/security.md, "Input files"). The domain does no file I/O: it
//! lists, compares and restores through [`WorkspaceFiles`].

use std::path::Path;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// One regular file of a workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileFacts {
    /// Relative to the workspace, `/`-separated.
    pub path: String,
    pub size: u64,
    /// Last modification, nanoseconds since the Unix epoch (0 when unknown).
    pub modified_ns: u64,
    /// Its permission bits (`0o7777`), when the workspace has them: a `chmod` changes
    /// neither size nor time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<u32>,
}

/// The files of a workspace, as far as a listing went.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Listing {
    pub files: Vec<FileFacts>,
    /// More files than the listing's limit: the rest were not listed.
    pub truncated: bool,
}

/// A workspace file operation that failed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum WorkspaceError {
    /// No copy of this file was kept for the run.
    #[error("no copy of '{0}' was kept")]
    NoCopy(String),
    #[error("{0}")]
    Io(String),
}

/// What the runtime reads and restores in a run's workspace. Paths are relative to
/// `workspace`, `/`-separated; an implementation must not follow them out of it.
#[async_trait]
pub trait WorkspaceFiles: Send + Sync {
    /// The regular files under `workspace`, at most `limit` of them (symbolic links, and the
    /// `.git` and `.planwright` folders, are left out), sorted by path.
    async fn list(&self, workspace: &Path, limit: usize) -> Result<Listing, WorkspaceError>;
    /// The facts of file `path`; `None` when it does not exist or is not a regular file.
    async fn stat(&self, workspace: &Path, path: &str)
        -> Result<Option<FileFacts>, WorkspaceError>;
    /// A digest of the content of `path` (equal digests: equal content); `None` when missing.
    async fn digest(&self, workspace: &Path, path: &str) -> Result<Option<String>, WorkspaceError>;
    /// The first `max_bytes` bytes of `path`; `None` when missing.
    async fn head(
        &self,
        workspace: &Path,
        path: &str,
        max_bytes: usize,
    ) -> Result<Option<Vec<u8>>, WorkspaceError>;
    /// Keeps a copy of `path` for run `run_id`, out of the workspace's reach; returns the
    /// digest of what was copied.
    async fn keep_copy(
        &self,
        run_id: &str,
        workspace: &Path,
        path: &str,
    ) -> Result<String, WorkspaceError>;
    /// Puts the kept copy of `path` back in place, with the permissions it had (its folders
    /// made again if needed; never written through a symbolic link).
    async fn restore(
        &self,
        run_id: &str,
        workspace: &Path,
        path: &str,
    ) -> Result<(), WorkspaceError>;
    /// Deletes every copy kept for `run_id`.
    async fn discard_copies(&self, run_id: &str) -> Result<(), WorkspaceError>;
}
