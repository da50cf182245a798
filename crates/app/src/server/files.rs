//! A run's workspace files, as the HTTP API (`/v1/runs/{id}/files/...`) and the MCP
//! resources (`planwright://runs/{id}/files/...`) serve them: listed, and opened confined to
//! the workspace.

use std::path::{Component, Path, PathBuf};

use serde_json::{json, Value};

use super::clients::{Client, Scope};
use super::error::{store_error, unknown_run, ApiError};
use super::State;

/// Most files listed for one run.
const MAX_FILES: usize = 1000;

/// The workspace of a run known to the store or to this process, when `client` may read
/// it (another client's run is unknown: 404).
pub async fn workspace_of(
    state: &State,
    client: &Client,
    run_id: &str,
) -> Result<PathBuf, ApiError> {
    client.require(Scope::Read)?;
    if let Some(r) = state.store.get_run(run_id).await.map_err(store_error)? {
        return client
            .visible(Some(r), run_id)
            .map(|r| PathBuf::from(r.workspace));
    }
    if !client.is_admin() {
        return Err(unknown_run(run_id));
    }
    state
        .with_registry(|reg| reg.runs.get(run_id).map(|e| e.workspace.clone()))
        .flatten()
        .ok_or_else(|| unknown_run(run_id))
}

/// Largest file `/files` serves.
pub const MAX_DOWNLOAD_BYTES: u64 = 256 << 20;

/// A workspace file opened for download.
#[derive(Debug)]
pub struct ConfinedFile {
    pub name: String,
    pub file: std::fs::File,
    pub len: u64,
    /// Its first bytes are UTF-8 text.
    pub text: bool,
}

/// Opens `rel` inside `workspace` for download: relative paths only, no `..`, the resolved
/// file (symlinks followed) must still be inside the workspace, and it must be a regular
/// file with one link (a hard link made to a file outside the workspace is refused) of at
/// most [`MAX_DOWNLOAD_BYTES`]. The checks are made on the opened file itself.
pub fn open_confined(workspace: &Path, rel: &str) -> Result<ConfinedFile, ApiError> {
    use std::io::{Read, Seek};
    use std::os::unix::fs::MetadataExt;
    let rel_path = Path::new(rel);
    if rel.is_empty() {
        return Err(ApiError::BadRequest("no file path given".into()));
    }
    if rel_path.is_absolute()
        || rel_path
            .components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(ApiError::Forbidden(format!(
            "'{rel}' is outside the run's workspace"
        )));
    }
    let root = std::fs::canonicalize(workspace)
        .map_err(|_| ApiError::NotFound("the run's workspace does not exist".into()))?;
    let target = std::fs::canonicalize(root.join(rel_path))
        .map_err(|_| ApiError::NotFound(format!("no file '{rel}' in the workspace")))?;
    if !target.starts_with(&root) {
        return Err(ApiError::Forbidden(format!(
            "'{rel}' is outside the run's workspace"
        )));
    }
    let not_regular = || ApiError::NotFound(format!("'{rel}' is not a regular file"));
    if !std::fs::metadata(&target).is_ok_and(|m| m.file_type().is_file()) {
        return Err(not_regular());
    }
    // Non-blocking, so a file swapped for a FIFO meanwhile cannot hang the request.
    let mut file = {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
            .open(&target)
            .map_err(|_| ApiError::NotFound(format!("no file '{rel}' in the workspace")))?
    };
    let meta = file
        .metadata()
        .map_err(|e| ApiError::Internal(format!("cannot read '{rel}': {e}")))?;
    if !meta.file_type().is_file() {
        return Err(not_regular());
    }
    if meta.nlink() > 1 {
        return Err(ApiError::Forbidden(format!(
            "'{rel}' has {} hard links; files linked from elsewhere are not served",
            meta.nlink()
        )));
    }
    if meta.len() > MAX_DOWNLOAD_BYTES {
        return Err(ApiError::TooLarge(format!(
            "'{rel}' has {} bytes; downloads are limited to {} MiB",
            meta.len(),
            MAX_DOWNLOAD_BYTES >> 20
        )));
    }
    let mut head = Vec::with_capacity(8192);
    (&mut file)
        .take(8192)
        .read_to_end(&mut head)
        .and_then(|_| file.rewind())
        .map_err(|e| ApiError::Internal(format!("cannot read '{rel}': {e}")))?;
    // A multi-byte character cut at the end of the sample still counts as text.
    let text = match std::str::from_utf8(&head) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none(),
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "file".to_string());
    Ok(ConfinedFile {
        name,
        file,
        len: meta.len(),
        text,
    })
}

/// The workspace's files as `{path, bytes}`, sorted, symlinks left out.
pub fn list_files(workspace: &Path) -> Vec<Value> {
    let mut out: Vec<(String, u64)> = Vec::new();
    let mut stack = vec![workspace.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() {
                if let Ok(rel) = path.strip_prefix(workspace) {
                    let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
                    out.push((rel.to_string_lossy().to_string(), size));
                }
            }
            if out.len() >= MAX_FILES {
                break;
            }
        }
    }
    out.sort();
    out.into_iter()
        .map(|(path, bytes)| json!({"path": path, "bytes": bytes}))
        .collect()
}

/// [`list_files`] off the async threads.
pub async fn list_in(workspace: PathBuf) -> Vec<Value> {
    tokio::task::spawn_blocking(move || list_files(&workspace))
        .await
        .unwrap_or_default()
}
