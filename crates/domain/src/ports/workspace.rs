//! The workspace port: what the runtime sees of a run's workspace folder to protect the
//! files that were there before the run (its inputs, docs/security.md, "Input files"), to
//! show a step what the workspace holds, and to check a run's answer in a scratch copy of
//! the workspace as it started (docs/verification.md). The domain does no file I/O: it
//! lists, compares, restores and copies through [`WorkspaceFiles`].

use std::path::{Path, PathBuf};

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

/// A file put into a scratch folder ([`WorkspaceFiles::scratch`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScratchFile {
    /// Relative to the workspace.
    pub path: String,
    /// Taken from the copy kept of it when the run started; else from the workspace as it
    /// is now.
    pub from_copy: bool,
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
    /// Deletes every copy kept for `run_id`, and its scratch folders.
    async fn discard_copies(&self, run_id: &str) -> Result<(), WorkspaceError>;
    /// A fresh folder `name` for run `run_id`, out of the workspace's reach, holding
    /// `files` (an earlier folder of that name is replaced); where it is. The check of a
    /// run's answer runs a program there (docs/verification.md).
    async fn scratch(
        &self,
        _run_id: &str,
        _workspace: &Path,
        _name: &str,
        _files: &[ScratchFile],
    ) -> Result<PathBuf, WorkspaceError> {
        Err(WorkspaceError::Io(
            "this workspace cannot make scratch folders".to_string(),
        ))
    }
}
