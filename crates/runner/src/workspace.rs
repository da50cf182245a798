//! Where runs' workspaces live: the given folder, or `<root>/<run_id>/workspace` under the
//! runs' root (beside the database for `planwright run`: `Database::runs_root`; the
//! servers' `--workspace-root`), created when missing and recorded as an absolute path.

use std::path::{Path, PathBuf};

use crate::RunnerError;

/// The servers' runs root unless told otherwise (`--workspace-root`), and that of `planwright
/// run` with the default database: `<root>/<run_id>/workspace`.
pub const DEFAULT_WORKSPACE_ROOT: &str = ".planwright/runs";

/// The run's workspace: `given`, or `<runs_root>/<run_id>/workspace`; created when missing
/// and returned as an absolute path. The runs root, which keeps the run's input copies and
/// checkpoints either way, is guarded first: a state folder it lies in is created and
/// marked as Planwright's, or refused when copied or committed (`state_folder::guard`).
pub fn prepare_workspace(
    given: Option<&Path>,
    runs_root: &Path,
    run_id: &str,
) -> Result<PathBuf, RunnerError> {
    crate::state_folder::guard(runs_root)?;
    let dir = match given {
        Some(d) => d.to_path_buf(),
        None => run_workspace(runs_root, run_id),
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
