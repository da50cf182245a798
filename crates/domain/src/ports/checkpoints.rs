//! The workspace checkpoints port: the state of a run's workspace recorded before each step
//! (and each retry) and when the run ends, so every change a run made, whatever made it,
//! can be shown ([`WorkspaceDiff`]) and undone ([`WorkspaceCheckpoints::restore`])
//! (docs/checkpoints.md). The domain does no file I/O: it takes checkpoints through
//! [`WorkspaceCheckpoints`] and journals their ids (`checkpoint_taken` events);
//! [`CheckpointLog`] reads them back from a run's events. The data types live in
//! `model/checkpoints.rs` and are re-exported here.

use std::path::Path;

use async_trait::async_trait;
use thiserror::Error;

pub use crate::model::checkpoints::*;
use crate::model::event::{Event, EventKind};

/// A checkpoint operation that failed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CheckpointError {
    #[error("no checkpoint {0} in this run")]
    NotFound(CheckpointId),
    /// The checkpoint could not keep everything: it cannot be restored.
    #[error(
        "checkpoint {0} is incomplete (the store could not keep every file): it cannot be restored"
    )]
    Incomplete(CheckpointId),
    /// An undo that would overwrite changes made after the run, or could not put every path
    /// back; nothing was changed.
    #[error("the undo would overwrite changes made after the run or cannot restore some files: {}", conflict_list(.conflicts))]
    Conflicts {
        conflicts: Vec<RestoreConflict>,
        /// The checkpoint of the workspace as it was found.
        before: CheckpointId,
    },
    #[error("{0}")]
    Io(String),
}

fn conflict_list(conflicts: &[RestoreConflict]) -> String {
    conflicts
        .iter()
        .map(|c| match c.reason {
            ConflictReason::ChangedAfterRun => {
                format!("{} (changed after the run)", shown_path(&c.path))
            }
            ConflictReason::NotKept => format!("{} (content not kept)", shown_path(&c.path)),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Records, compares and restores a run's workspace. Paths are relative to `workspace`,
/// `/`-separated; an implementation keeps its checkpoints out of the workspace (where the
/// run's tools cannot change them) and never follows a path out of it.
#[async_trait]
pub trait WorkspaceCheckpoints: Send + Sync {
    /// Records the workspace as it is now for run `run_id`; what did not change since the
    /// run's previous checkpoint costs no new storage.
    async fn checkpoint(
        &self,
        run_id: &str,
        workspace: &Path,
        at: &CheckpointAt,
    ) -> Result<Checkpoint, CheckpointError>;

    /// What changed from checkpoint `from` to checkpoint `to` of run `run_id`.
    async fn diff(
        &self,
        run_id: &str,
        from: &CheckpointId,
        to: &CheckpointId,
    ) -> Result<WorkspaceDiff, CheckpointError>;

    /// Puts the workspace back as `request.target` recorded it (see [`RestoreRequest`]):
    /// first a [`CheckpointAt::BeforeRestore`] checkpoint, then each path replaced whole
    /// (never half-written), journaled so an interrupted restore, run again, finishes.
    /// Refuses ([`CheckpointError::Conflicts`], nothing changed) when a path changed after
    /// the run or cannot be put back, unless `force`.
    async fn restore(
        &self,
        run_id: &str,
        workspace: &Path,
        request: &RestoreRequest,
    ) -> Result<Restored, CheckpointError>;

    /// Bytes the checkpoints of `run_id` take on disk.
    async fn space_used(&self, run_id: &str) -> Result<u64, CheckpointError>;

    /// Deletes every checkpoint of `run_id`.
    async fn discard(&self, run_id: &str) -> Result<(), CheckpointError>;
}

/// One `checkpoint_taken` event of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoggedCheckpoint {
    pub seq: u64,
    /// `None`: taken when the run ended.
    pub step_id: Option<String>,
    pub attempt: u32,
    pub id: CheckpointId,
    pub complete: bool,
}

/// The checkpoints a run's event log lists, in the order they were taken: what `runs diff`
/// and `runs undo` pick from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CheckpointLog {
    pub checkpoints: Vec<LoggedCheckpoint>,
}

impl CheckpointLog {
    pub fn from_events(events: &[Event]) -> CheckpointLog {
        let checkpoints = events
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::CheckpointTaken {
                    step_id,
                    attempt,
                    checkpoint,
                    incomplete,
                    ..
                } => Some(LoggedCheckpoint {
                    seq: e.seq,
                    step_id: step_id.clone(),
                    attempt: *attempt,
                    id: checkpoint.clone(),
                    complete: !incomplete,
                }),
                _ => None,
            })
            .collect();
        CheckpointLog { checkpoints }
    }

    /// The first checkpoint: the workspace before the run changed anything.
    pub fn run_start(&self) -> Option<&LoggedCheckpoint> {
        self.checkpoints.first()
    }

    /// What the run left: its run-end checkpoint, else (a run that did not end) its last.
    pub fn run_end(&self) -> Option<&LoggedCheckpoint> {
        self.checkpoints
            .iter()
            .rev()
            .find(|c| c.step_id.is_none())
            .or_else(|| self.checkpoints.last())
    }

    /// The workspace before step `step_id`'s first attempt.
    pub fn before_step(&self, step_id: &str) -> Option<&LoggedCheckpoint> {
        self.checkpoints
            .iter()
            .find(|c| c.step_id.as_deref() == Some(step_id))
    }

    /// The workspace after step `step_id`: the first checkpoint taken after its last
    /// attempt's (another step's, or the run end's). With steps run in parallel it also
    /// holds what the others changed meanwhile.
    pub fn after_step(&self, step_id: &str) -> Option<&LoggedCheckpoint> {
        let last = self
            .checkpoints
            .iter()
            .rposition(|c| c.step_id.as_deref() == Some(step_id))?;
        self.checkpoints[last + 1..]
            .iter()
            .find(|c| c.step_id.as_deref() != Some(step_id))
    }

    /// Whether a checkpoint was taken before attempt `attempt` of `step_id`.
    pub fn has(&self, step_id: Option<&str>, attempt: u32) -> bool {
        self.checkpoints
            .iter()
            .any(|c| c.step_id.as_deref() == step_id && c.attempt == attempt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taken(seq: u64, step: Option<&str>, attempt: u32, id: &str) -> Event {
        Event {
            run_id: "r".into(),
            seq,
            at: chrono::Utc::now(),
            kind: EventKind::CheckpointTaken {
                step_id: step.map(str::to_string),
                attempt,
                checkpoint: CheckpointId::new(id),
                files: 1,
                stored_bytes: 0,
                left_out: Vec::new(),
                incomplete: false,
            },
        }
    }

    #[test]
    fn the_log_finds_the_checkpoints_around_a_step_and_the_run() {
        let log = CheckpointLog::from_events(&[
            taken(1, Some("s1"), 1, "a"),
            taken(2, Some("s1"), 2, "b"),
            taken(3, Some("s2"), 1, "c"),
            taken(4, None, 0, "d"),
        ]);
        assert_eq!(log.run_start().unwrap().id.as_str(), "a");
        assert_eq!(log.run_end().unwrap().id.as_str(), "d");
        assert_eq!(log.before_step("s1").unwrap().id.as_str(), "a");
        assert_eq!(log.after_step("s1").unwrap().id.as_str(), "c");
        assert_eq!(log.after_step("s2").unwrap().id.as_str(), "d");
        assert!(log.has(Some("s1"), 2));
        assert!(!log.has(Some("s2"), 2));
        assert!(log.has(None, 0));
        let unfinished = CheckpointLog::from_events(&[taken(1, Some("s1"), 1, "a")]);
        assert_eq!(unfinished.run_end().unwrap().id.as_str(), "a");
        assert_eq!(unfinished.after_step("s1"), None);
    }

    #[test]
    fn the_event_keeps_its_json_shape() {
        let json = serde_json::to_value(taken(1, Some("s1"), 2, "abc")).unwrap();
        assert_eq!(json["type"], "checkpoint_taken");
        assert_eq!(json["checkpoint"], "abc");
        assert_eq!(json["attempt"], 2);
        assert!(json.get("incomplete").is_none());
        assert!(json.get("left_out").is_none());
        let end = serde_json::to_value(taken(2, None, 0, "d")).unwrap();
        assert!(end.get("step_id").is_none());
        assert!(end.get("attempt").is_none());
        let back: Event = serde_json::from_value(json).unwrap();
        assert_eq!(CheckpointLog::from_events(&[back]).checkpoints.len(), 1);
    }
}
