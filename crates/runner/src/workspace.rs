//! Where runs' workspaces live: the given folder, or `<root>/<run_id>/workspace` under the
//! runs' root (`./.planwright/runs` unless told otherwise), created when missing and recorded
//! as an absolute path.

use std::path::{Path, PathBuf};

use crate::RunnerError;

/// Where runs' workspaces live unless told otherwise: `<root>/<run_id>/workspace`.
pub const DEFAULT_WORKSPACE_ROOT: &str = ".planwright/runs";

/// The run's workspace: `given`, or `./.planwright/runs/<run_id>/workspace` (in a guarded
/// state folder); created when missing and returned as an absolute path.
pub fn prepare_workspace(given: Option<&Path>, run_id: &str) -> Result<PathBuf, RunnerError> {
    let dir = match given {
        Some(d) => d.to_path_buf(),
        None => {
            let dir = run_workspace(Path::new(DEFAULT_WORKSPACE_ROOT), run_id);
            crate::state_folder::guard(&dir)?;
            dir
        }
    };
    create_workspace(&dir)
}

/// The workspace of `run_id` under `root`.
pub fn run_workspace(root: &Path, run_id: &str) -> PathBuf {
    root.join(run_id).join("workspace")
}

/// Creates `dir` (and its parents); returns its absolute path, as runs record it.
pub fn create_workspace(dir: &Path) -> Result<PathBuf, RunnerError> {
    std::fs::create_dir_all(dir).map_err(|e| {
        RunnerError::Config(format!("cannot create workspace {}: {e}", dir.display()))
    })?;
    std::fs::canonicalize(dir).map_err(|e| {
        RunnerError::Config(format!("cannot resolve workspace {}: {e}", dir.display()))
    })
}
