//! [`LocalCheckpoints`]: the domain's `WorkspaceCheckpoints` port on the local filesystem
//! (docs/checkpoints.md). Each run's checkpoints live in `<runs root>/<run id>/checkpoints/`,
//! beside the copies of its inputs (`workspace_files.rs`) and out of the workspace: the
//! bubblewrap sandbox binds only the workspace, so the run's commands cannot change them.
//!
//! A content-addressed store of its own (SHA-256, the digest the input copies already use),
//! not git: no `git` binary needed, the user's own `.git` never touched, and the caps,
//! the ignore list and the "changed, too large to keep" record are simple to hold to.
//! `store.rs` is the layout on disk, `scan.rs` takes a checkpoint, `diff.rs` compares two,
//! `restore.rs` undoes. Every path of the workspace is opened beneath it without following
//! a link at any component (`fs_beneath`, docs/security.md "Links in the workspace").

mod diff;
mod digest;
mod pack;
mod recent;
mod restore;
mod scan;
mod store;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use domain::ports::{
    Checkpoint, CheckpointAt, CheckpointError, CheckpointId, RestoreRequest, Restored,
    WorkspaceCheckpoints, WorkspaceDiff,
};

use self::recent::RecentRuns;
use self::store::RunStore;
use crate::workspace_files::safe_component;

/// What a checkpoint keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointLimits {
    /// A file bigger than this is recorded (size, time) but its content not kept
    /// (default 16 MiB).
    pub max_file_bytes: u64,
    /// New bytes one checkpoint may add to the store; files past it are recorded as too
    /// large (default 256 MiB).
    pub max_checkpoint_bytes: u64,
    /// Left out besides `.planwright` folders and the object stores of `.git`, `.hg` and
    /// `.svn` (their config, hooks and refs are recorded): `NAME/` a folder of that name
    /// anywhere, `NAME` a file or folder of that name anywhere, `a/b` that path
    /// (default `target/`, `node_modules/`).
    pub ignore: Vec<String>,
    /// Text longer than this is not diffed (default 1 MiB).
    pub max_diff_bytes: u64,
}

impl Default for CheckpointLimits {
    fn default() -> Self {
        CheckpointLimits {
            max_file_bytes: 16 * 1024 * 1024,
            max_checkpoint_bytes: 256 * 1024 * 1024,
            ignore: vec!["target/".into(), "node_modules/".into()],
            max_diff_bytes: 1024 * 1024,
        }
    }
}

/// The port on the local filesystem; run R's checkpoints live in `runs_root/R/checkpoints`.
#[derive(Debug, Clone)]
pub struct LocalCheckpoints {
    runs_root: PathBuf,
    limits: CheckpointLimits,
    /// One checkpoint, diff or undo at a time in this process.
    lock: Arc<tokio::sync::Mutex<()>>,
    /// The last checkpoint of the runs checkpointed most recently (`recent.rs`).
    recent: RecentRuns,
}

impl LocalCheckpoints {
    pub fn new(runs_root: impl Into<PathBuf>) -> LocalCheckpoints {
        LocalCheckpoints {
            runs_root: runs_root.into(),
            limits: CheckpointLimits::default(),
            lock: Arc::new(tokio::sync::Mutex::new(())),
            recent: RecentRuns::default(),
        }
    }

    pub fn with_limits(mut self, limits: CheckpointLimits) -> LocalCheckpoints {
        self.limits = limits;
        self
    }

    /// Where run `run_id`'s checkpoints are kept.
    pub fn folder_of(&self, run_id: &str) -> PathBuf {
        self.runs_root
            .join(safe_component(run_id))
            .join("checkpoints")
    }

    fn store_of(&self, run_id: &str) -> RunStore {
        RunStore::new(self.folder_of(run_id))
    }

    /// Runs `work` off the async threads, one at a time.
    async fn blocking<T, F>(&self, work: F) -> Result<T, CheckpointError>
    where
        T: Send + 'static,
        F: FnOnce() -> Result<T, CheckpointError> + Send + 'static,
    {
        let lock = Arc::clone(&self.lock);
        // Taken on the blocking thread: a caller that stops waiting does not let another
        // start while this work still runs.
        tokio::task::spawn_blocking(move || {
            let _one = lock.blocking_lock();
            work()
        })
        .await
        .map_err(|e| CheckpointError::Io(format!("the checkpoint work was aborted: {e}")))?
    }
}

#[async_trait]
impl WorkspaceCheckpoints for LocalCheckpoints {
    async fn checkpoint(
        &self,
        run_id: &str,
        workspace: &Path,
        at: &CheckpointAt,
    ) -> Result<Checkpoint, CheckpointError> {
        let (store, workspace, limits) = (
            self.store_of(run_id),
            workspace.to_path_buf(),
            self.limits.clone(),
        );
        let (recent, run) = (self.recent.clone(), run_id.to_string());
        let at = at.clone();
        let taken = self
            .blocking(move || {
                let (taken, now) = scan::take(&store, &workspace, &limits, recent.take(&run))?;
                recent.keep(&run, now);
                Ok(taken)
            })
            .await?;
        tracing::debug!(?at, checkpoint = %taken.id, stored = taken.stored_bytes, "checkpoint");
        Ok(taken)
    }

    async fn diff(
        &self,
        run_id: &str,
        from: &CheckpointId,
        to: &CheckpointId,
    ) -> Result<WorkspaceDiff, CheckpointError> {
        let (store, from, to) = (self.store_of(run_id), from.clone(), to.clone());
        let max = self.limits.max_diff_bytes;
        self.blocking(move || {
            let (old, new) = (store.load_manifest(&from)?, store.load_manifest(&to)?);
            diff::between(&store, (&from, &old), (&to, &new), max)
        })
        .await
    }

    async fn restore(
        &self,
        run_id: &str,
        workspace: &Path,
        request: &RestoreRequest,
    ) -> Result<Restored, CheckpointError> {
        let (store, workspace, limits) = (
            self.store_of(run_id),
            workspace.to_path_buf(),
            self.limits.clone(),
        );
        let request = request.clone();
        self.blocking(move || restore::restore(&store, &workspace, &request, &limits))
            .await
    }

    async fn space_used(&self, run_id: &str) -> Result<u64, CheckpointError> {
        let store = self.store_of(run_id);
        self.blocking(move || store.space_used()).await
    }

    async fn discard(&self, run_id: &str) -> Result<(), CheckpointError> {
        self.recent.take(run_id);
        let store = self.store_of(run_id);
        self.blocking(move || store.discard()).await
    }
}
