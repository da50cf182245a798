//! What a run changed in its workspace, read from its checkpoints (docs/checkpoints.md):
//! the diff of the whole run or of one step ([`diff`]), the undo ([`undo`]), the space the
//! checkpoints take ([`space_used`]). One place for the rules (which checkpoints a step
//! lies between, that a live run is not undone), so that `planwright runs diff/undo`, the
//! HTTP API and the MCP tools answer alike.

use domain::model::event::Event;
use domain::model::plan::Plan;
use domain::ports::{
    CheckpointError, CheckpointId, CheckpointLog, LeaseClaim, LeaseOutcome, LoggedCheckpoint,
    RestoreConflict, RestoreRequest, Restored, RunRecord, RunStatus, RunStore,
    WorkspaceCheckpoints, WorkspaceDiff,
};

use crate::liveness::Liveness;
use crate::service_error::RunServiceError;

/// Why a run's changes cannot be shown or undone.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunChangesError {
    /// This build keeps no checkpoints (no shell tools).
    #[error(
        "this planwright was built without the shell tools: it keeps no workspace checkpoints"
    )]
    Unsupported,
    /// The run's log lists no checkpoint.
    #[error(
        "run '{0}' has no workspace checkpoint (it ran with --checkpoints=false, before \
         checkpoints were recorded, or has not started a step yet)"
    )]
    NoCheckpoints(String),
    /// `--step N` names no step of the run's plan.
    #[error("run '{run_id}' has no such step (index {step} from 0): its plan has {steps} step(s)")]
    StepOutOfRange {
        run_id: String,
        step: u32,
        steps: usize,
    },
    /// The step never started: nothing was recorded before it.
    #[error("that step (index {step} from 0) of run '{run_id}' never started: there is no checkpoint before it")]
    StepNotStarted { run_id: String, step: u32 },
    /// An undo of a run that is queued, running or waiting.
    #[error(
        "run '{run_id}' is {status}: cancel it first (`planwright runs` cannot undo a live run)"
    )]
    Live { run_id: String, status: String },
    /// Another process took the run (a resume, a worker, another undo) since it was read.
    #[error(
        "run '{run_id}' is held by {owner} (a resume, a worker or another undo): nothing was \
         changed; try again once it is done"
    )]
    Held { run_id: String, owner: String },
    /// The run store failed while the run was held for the undo.
    #[error("the run store failed: {0}")]
    RunStore(String),
    /// The undo would overwrite changes made after the run; nothing was changed.
    #[error(
        "the undo would overwrite files changed after the run ended: {}; nothing was changed \
         (pass --force to overwrite them)",
        conflict_list(.0)
    )]
    Conflicts(Vec<RestoreConflict>),
    /// The checkpoint to restore is not whole.
    #[error("{0}")]
    Incomplete(String),
    /// No checkpoint of that id in this run.
    #[error("{0}")]
    UnknownCheckpoint(String),
    /// The checkpoint store failed.
    #[error("the workspace checkpoints failed: {0}")]
    Store(String),
}

/// The conflicting paths, each as shown to a person (control characters escaped: a name
/// cannot reach the terminal as an escape sequence nor split the message).
fn conflict_list(conflicts: &[RestoreConflict]) -> String {
    conflicts
        .iter()
        .map(|c| {
            let path = domain::ports::shown_path(&c.path);
            match c.reason {
                domain::ports::ConflictReason::ChangedAfterRun => path.into_owned(),
                domain::ports::ConflictReason::NotKept => format!("{path} (content not kept)"),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

impl From<CheckpointError> for RunChangesError {
    fn from(e: CheckpointError) -> RunChangesError {
        match e {
            CheckpointError::Conflicts { conflicts, .. } => RunChangesError::Conflicts(conflicts),
            e @ CheckpointError::Incomplete(_) => RunChangesError::Incomplete(e.to_string()),
            e @ CheckpointError::NotFound(_) => RunChangesError::UnknownCheckpoint(e.to_string()),
            CheckpointError::Io(m) => RunChangesError::Store(m),
        }
    }
}

impl From<RunChangesError> for RunServiceError {
    fn from(e: RunChangesError) -> RunServiceError {
        let message = e.to_string();
        match e {
            RunChangesError::StepOutOfRange { .. } => RunServiceError::BadRequest(message),
            RunChangesError::NoCheckpoints(_)
            | RunChangesError::StepNotStarted { .. }
            | RunChangesError::UnknownCheckpoint(_) => RunServiceError::NotFound(message),
            RunChangesError::Live { .. }
            | RunChangesError::Held { .. }
            | RunChangesError::Conflicts(_)
            | RunChangesError::Incomplete(_) => RunServiceError::Conflict(message),
            RunChangesError::Unsupported => RunServiceError::BadRequest(message),
            RunChangesError::Store(_) | RunChangesError::RunStore(_) => {
                tracing::error!(error = %message, "checkpoint failure");
                RunServiceError::Internal(message)
            }
        }
    }
}

/// What an undo asks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UndoRequest {
    /// Back to before this step (its index in the plan, from 0); `None`: before the run.
    pub to_step: Option<u32>,
    /// Back to this checkpoint of the run (the `before` of an earlier undo: undoes that
    /// undo); every path that differs from it is put back. Wins over `to_step`.
    pub checkpoint: Option<String>,
    /// Overwrite files changed after the run instead of refusing.
    pub force: bool,
}

/// The id of step `step` (its index in `plan`).
fn step_id(run: &RunRecord, plan: Option<&Plan>, step: u32) -> Result<String, RunChangesError> {
    let steps = plan.map(|p| p.steps()).unwrap_or_default();
    steps
        .get(step as usize)
        .map(|s| s.id.clone())
        .ok_or_else(|| RunChangesError::StepOutOfRange {
            run_id: run.run_id.clone(),
            step,
            steps: steps.len(),
        })
}

/// The checkpoints the run's log lists; refuses a run with none.
fn log_of(run: &RunRecord, events: &[Event]) -> Result<CheckpointLog, RunChangesError> {
    let log = CheckpointLog::from_events(events);
    if log.checkpoints.is_empty() {
        return Err(RunChangesError::NoCheckpoints(run.run_id.clone()));
    }
    Ok(log)
}

/// What the run changed (from its first checkpoint to what it left), or what step `step`
/// changed (from before it to the next checkpoint; with steps run in parallel that holds
/// what the others changed meanwhile).
pub async fn diff(
    checkpoints: &dyn WorkspaceCheckpoints,
    run: &RunRecord,
    plan: Option<&Plan>,
    events: &[Event],
    step: Option<u32>,
) -> Result<WorkspaceDiff, RunChangesError> {
    let log = log_of(run, events)?;
    let (from, to): (&LoggedCheckpoint, &LoggedCheckpoint) = match step {
        None => (first(run, &log)?, last(run, &log)?),
        Some(n) => {
            let id = step_id(run, plan, n)?;
            let not_started = || RunChangesError::StepNotStarted {
                run_id: run.run_id.clone(),
                step: n,
            };
            let before = log.before_step(&id).ok_or_else(not_started)?;
            // A step still under way (or cut short): up to the last checkpoint.
            let after = log
                .after_step(&id)
                .or(log.run_end())
                .ok_or_else(not_started)?;
            (before, after)
        }
    };
    Ok(checkpoints.diff(&run.run_id, &from.id, &to.id).await?)
}

fn first<'a>(
    run: &RunRecord,
    log: &'a CheckpointLog,
) -> Result<&'a LoggedCheckpoint, RunChangesError> {
    log.run_start()
        .ok_or_else(|| RunChangesError::NoCheckpoints(run.run_id.clone()))
}

fn last<'a>(
    run: &RunRecord,
    log: &'a CheckpointLog,
) -> Result<&'a LoggedCheckpoint, RunChangesError> {
    log.run_end()
        .ok_or_else(|| RunChangesError::NoCheckpoints(run.run_id.clone()))
}

/// How long an undo holds its run at most; a crashed undo's hold is taken over at once on
/// its host ([`crate::owner::is_gone`]), elsewhere when it expires.
const UNDO_HOLD: chrono::Duration = chrono::Duration::minutes(10);

/// Puts the run's workspace back as it was before step `to_step` (default: before the
/// run). Refuses a live run, and (unless `force`) files changed after the run ended; the
/// undo takes a checkpoint first ([`Restored::before`]), so it can itself be undone. While
/// it restores, the run's lease is held (as [`crate::owner::role_owner_id`] `undo`), so no
/// resume, worker or second undo starts on the workspace meanwhile; one that got there
/// since `run` was read makes it refuse ([`RunChangesError::Held`]).
pub async fn undo(
    store: &dyn RunStore,
    checkpoints: &dyn WorkspaceCheckpoints,
    run: &RunRecord,
    plan: Option<&Plan>,
    events: &[Event],
    request: &UndoRequest,
) -> Result<Restored, RunChangesError> {
    let liveness = Liveness::of(run);
    let live = matches!(
        liveness,
        Liveness::Stored(RunStatus::Queued | RunStatus::Running | RunStatus::Waiting)
    );
    if live {
        return Err(RunChangesError::Live {
            run_id: run.run_id.clone(),
            status: liveness.shown().to_string(),
        });
    }
    let log = log_of(run, events)?;
    let restore = match (&request.checkpoint, request.to_step) {
        (Some(id), _) => RestoreRequest {
            target: CheckpointId::new(id.trim()),
            run_left: None,
            force: request.force,
        },
        (None, step) => {
            let target = match step {
                None => first(run, &log)?,
                Some(n) => {
                    let id = step_id(run, plan, n)?;
                    log.before_step(&id)
                        .ok_or_else(|| RunChangesError::StepNotStarted {
                            run_id: run.run_id.clone(),
                            step: n,
                        })?
                }
            };
            RestoreRequest {
                target: target.id.clone(),
                run_left: Some(last(run, &log)?.id.clone()),
                force: request.force,
            }
        }
    };
    let workspace = std::path::Path::new(&run.workspace);
    let holder = hold(store, run).await?;
    let restored = checkpoints.restore(&run.run_id, workspace, &restore).await;
    if let Err(e) = store.release_lease(&run.run_id, &holder).await {
        // The hold expires by itself; the restore's outcome is what the caller needs.
        tracing::warn!(run_id = %run.run_id, error = %e, "could not release the undo's hold");
    }
    Ok(restored?)
}

/// Takes `run`'s lease for an undo: granted when free, expired, or held by a process of
/// this host that is gone; refused when anyone else holds it.
async fn hold(store: &dyn RunStore, run: &RunRecord) -> Result<String, RunChangesError> {
    let owner = crate::owner::role_owner_id("undo");
    let now = chrono::Utc::now();
    let claim = LeaseClaim {
        owner: owner.clone(),
        now,
        until: now + UNDO_HOLD,
        stale_owner: run
            .lease
            .as_ref()
            .map(|lease| lease.owner.clone())
            .filter(|owner| crate::owner::is_gone(owner)),
    };
    match store.acquire_lease(&run.run_id, &claim).await {
        Ok(LeaseOutcome::Acquired) => Ok(owner),
        Ok(LeaseOutcome::Held(lease)) => Err(RunChangesError::Held {
            run_id: run.run_id.clone(),
            owner: lease.owner,
        }),
        Ok(LeaseOutcome::Unknown) => Err(RunChangesError::RunStore(format!(
            "run '{}' is no longer in the store",
            run.run_id
        ))),
        Err(e) => Err(RunChangesError::RunStore(e.to_string())),
    }
}

/// Bytes the run's checkpoints take on disk (0 when it has none).
pub async fn space_used(
    checkpoints: &dyn WorkspaceCheckpoints,
    run_id: &str,
) -> Result<u64, RunChangesError> {
    Ok(checkpoints.space_used(run_id).await?)
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::{Arc, Mutex};

    use async_trait::async_trait;
    use domain::model::event::EventKind;
    use domain::ports::{Checkpoint, CheckpointAt, Lease};
    use domain::MemoryStore;

    use super::*;

    /// Records what it is asked; diffs are empty, restores write nothing. With `probe`, each
    /// restore first tries to take the run's lease as a worker would, and keeps the answer.
    #[derive(Default)]
    struct Recording {
        diffs: Mutex<Vec<(String, String)>>,
        restores: Mutex<Vec<RestoreRequest>>,
        probe: Option<Arc<MemoryStore>>,
        probed: Mutex<Vec<LeaseOutcome>>,
    }

    #[async_trait]
    impl WorkspaceCheckpoints for Recording {
        async fn checkpoint(
            &self,
            _: &str,
            _: &Path,
            _: &CheckpointAt,
        ) -> Result<Checkpoint, CheckpointError> {
            Err(CheckpointError::Io("not here".into()))
        }
        async fn diff(
            &self,
            _: &str,
            from: &CheckpointId,
            to: &CheckpointId,
        ) -> Result<WorkspaceDiff, CheckpointError> {
            self.diffs
                .lock()
                .unwrap()
                .push((from.to_string(), to.to_string()));
            Ok(WorkspaceDiff {
                from: from.clone(),
                to: to.clone(),
                files: Vec::new(),
            })
        }
        async fn restore(
            &self,
            _: &str,
            _: &Path,
            request: &RestoreRequest,
        ) -> Result<Restored, CheckpointError> {
            if let Some(store) = &self.probe {
                let outcome = store.acquire_lease("r", &claim("worker")).await.unwrap();
                self.probed.lock().unwrap().push(outcome);
            }
            self.restores.lock().unwrap().push(request.clone());
            Ok(Restored {
                before: Checkpoint {
                    id: CheckpointId::new("undo"),
                    files: 0,
                    bytes: 0,
                    stored_bytes: 0,
                    left_out: Vec::new(),
                    complete: true,
                },
                written: Vec::new(),
                removed: Vec::new(),
                forced: Vec::new(),
            })
        }
        async fn space_used(&self, _: &str) -> Result<u64, CheckpointError> {
            Ok(0)
        }
        async fn discard(&self, _: &str) -> Result<(), CheckpointError> {
            Ok(())
        }
    }

    fn record(status: RunStatus, lease: Option<Lease>) -> RunRecord {
        RunRecord {
            run_id: "r".into(),
            task: "t".into(),
            mode: "dag".into(),
            status,
            workspace: "/nowhere".into(),
            created_at: chrono::Utc::now(),
            finished_at: None,
            summary: None,
            error: None,
            usage: Default::default(),
            lease,
            queue_request: None,
            client: None,
        }
    }

    /// A store holding `run`.
    async fn stored(run: &RunRecord) -> MemoryStore {
        let store = MemoryStore::new();
        store.create_run(run).await.unwrap();
        store
    }

    /// `undo` of `run` as read from a store holding it so.
    async fn undo_of(
        cp: &Recording,
        run: &RunRecord,
        plan: &Plan,
        events: &[Event],
        request: &UndoRequest,
    ) -> Result<Restored, RunChangesError> {
        undo(&stored(run).await, cp, run, Some(plan), events, request).await
    }

    /// A five-minute lease claim by `owner`.
    fn claim(owner: &str) -> LeaseClaim {
        let now = chrono::Utc::now();
        LeaseClaim {
            owner: owner.into(),
            now,
            until: now + chrono::Duration::minutes(5),
            stale_owner: None,
        }
    }

    fn taken(seq: u64, step: Option<&str>, id: &str) -> Event {
        Event {
            run_id: "r".into(),
            seq,
            at: chrono::Utc::now(),
            kind: EventKind::CheckpointTaken {
                step_id: step.map(str::to_string),
                attempt: u32::from(step.is_some()),
                checkpoint: CheckpointId::new(id),
                files: 1,
                stored_bytes: 0,
                left_out: Vec::new(),
                incomplete: false,
            },
        }
    }

    fn plan() -> Plan {
        Plan::from_texts(
            "p",
            "P",
            "g",
            &["one".to_string(), "two".to_string(), "three".to_string()],
        )
        .unwrap()
    }

    fn events(plan: &Plan) -> Vec<Event> {
        let ids: Vec<&str> = plan.steps().iter().map(|s| s.id.as_str()).collect();
        vec![
            taken(1, Some(ids[0]), "c0"),
            taken(2, Some(ids[1]), "c1"),
            taken(3, None, "end"),
        ]
    }

    #[tokio::test]
    async fn a_step_lies_between_its_checkpoint_and_the_next() {
        let (cp, plan) = (Recording::default(), plan());
        let run = record(RunStatus::Completed, None);
        let events = events(&plan);
        diff(&cp, &run, Some(&plan), &events, None).await.unwrap();
        diff(&cp, &run, Some(&plan), &events, Some(0))
            .await
            .unwrap();
        diff(&cp, &run, Some(&plan), &events, Some(1))
            .await
            .unwrap();
        assert_eq!(
            *cp.diffs.lock().unwrap(),
            [
                ("c0".to_string(), "end".to_string()),
                ("c0".into(), "c1".into()),
                ("c1".into(), "end".into())
            ]
        );
        let out_of_range = diff(&cp, &run, Some(&plan), &events, Some(3)).await;
        assert!(
            matches!(
                out_of_range,
                Err(RunChangesError::StepOutOfRange { steps: 3, .. })
            ),
            "{out_of_range:?}"
        );
        let never = diff(&cp, &run, Some(&plan), &events, Some(2)).await;
        assert!(
            matches!(never, Err(RunChangesError::StepNotStarted { step: 2, .. })),
            "{never:?}"
        );
        let none = diff(&cp, &run, Some(&plan), &[], None).await;
        assert!(
            matches!(none, Err(RunChangesError::NoCheckpoints(_))),
            "{none:?}"
        );
    }

    #[tokio::test]
    async fn an_undo_puts_back_the_runs_changes_and_refuses_a_live_run() {
        let (cp, plan) = (Recording::default(), plan());
        let events = events(&plan);
        let ended = record(RunStatus::Failed, None);
        undo_of(&cp, &ended, &plan, &events, &UndoRequest::default())
            .await
            .unwrap();
        let to_two = UndoRequest {
            to_step: Some(1),
            force: true,
            ..UndoRequest::default()
        };
        undo_of(&cp, &ended, &plan, &events, &to_two).await.unwrap();
        let redo = UndoRequest {
            checkpoint: Some("undo".into()),
            ..UndoRequest::default()
        };
        undo_of(&cp, &ended, &plan, &events, &redo).await.unwrap();
        let asked: Vec<(String, Option<String>, bool)> = cp
            .restores
            .lock()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r.target.to_string(),
                    r.run_left.as_ref().map(|c| c.to_string()),
                    r.force,
                )
            })
            .collect();
        assert_eq!(
            asked,
            [
                ("c0".to_string(), Some("end".to_string()), false),
                ("c1".into(), Some("end".into()), true),
                ("undo".into(), None, false)
            ]
        );

        let lease = Lease {
            owner: crate::owner::owner_id().to_string(),
            until: chrono::Utc::now() + chrono::Duration::minutes(5),
        };
        for live in [
            record(RunStatus::Queued, None),
            record(RunStatus::Running, Some(lease.clone())),
            record(RunStatus::Waiting, Some(lease)),
        ] {
            let refused = undo_of(&cp, &live, &plan, &events, &UndoRequest::default()).await;
            assert!(
                matches!(refused, Err(RunChangesError::Live { .. })),
                "{refused:?}"
            );
            assert!(refused.unwrap_err().to_string().contains("cancel it first"));
        }
        assert_eq!(
            cp.restores.lock().unwrap().len(),
            3,
            "nothing more restored"
        );
        // An interrupted run (nobody holds it) may be undone.
        let interrupted = record(RunStatus::Running, None);
        undo_of(&cp, &interrupted, &plan, &events, &UndoRequest::default())
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn an_undo_holds_the_run_while_it_restores_and_gives_it_back() {
        let plan = plan();
        let events = events(&plan);
        let ended = record(RunStatus::Failed, None);
        let store = Arc::new(stored(&ended).await);
        let cp = Recording {
            probe: Some(store.clone()),
            ..Recording::default()
        };
        undo(
            store.as_ref(),
            &cp,
            &ended,
            Some(&plan),
            &events,
            &UndoRequest::default(),
        )
        .await
        .unwrap();
        match cp.probed.lock().unwrap().as_slice() {
            [LeaseOutcome::Held(lease)] => {
                assert_eq!(lease.owner, crate::owner::role_owner_id("undo"));
            }
            other => panic!("a worker took the run during the undo: {other:?}"),
        }
        let after = store.get_run("r").await.unwrap().unwrap();
        assert_eq!(after.lease, None, "the hold is given back");
        assert_eq!(after.status, RunStatus::Failed);
    }

    #[tokio::test]
    async fn an_undo_refuses_a_run_taken_since_it_was_read() {
        let (cp, plan) = (Recording::default(), plan());
        let events = events(&plan);
        // Read as cancelled and free; a resume on another host took it since.
        let read = record(RunStatus::Failed, None);
        let store = stored(&read).await;
        let resume = "elsewhere/1/1/deadbeef";
        assert_eq!(
            store.acquire_lease("r", &claim(resume)).await.unwrap(),
            LeaseOutcome::Acquired
        );
        let refused = undo(
            &store,
            &cp,
            &read,
            Some(&plan),
            &events,
            &UndoRequest::default(),
        )
        .await;
        match &refused {
            Err(RunChangesError::Held { owner, .. }) => assert_eq!(owner, resume),
            other => panic!("{other:?}"),
        }
        assert!(refused
            .unwrap_err()
            .to_string()
            .contains("nothing was changed"));
        assert!(cp.restores.lock().unwrap().is_empty(), "nothing restored");
        let lease = store.get_run("r").await.unwrap().unwrap().lease.unwrap();
        assert_eq!(lease.owner, resume, "the resume keeps the run");
    }

    /// Issue 41 (Low): the undo's conflict message printed file names raw: an escape
    /// sequence reached the terminal, a newline split the message.
    #[test]
    fn conflict_messages_show_file_names_escaped() {
        let conflicts = vec![
            RestoreConflict {
                path: "a\nfake: line\x1b[2J.txt".into(),
                reason: domain::ports::ConflictReason::ChangedAfterRun,
            },
            RestoreConflict {
                path: "big\x1b]0;title\x07.bin".into(),
                reason: domain::ports::ConflictReason::NotKept,
            },
        ];
        let message = RunChangesError::Conflicts(conflicts.clone()).to_string();
        assert!(
            !message.contains('\n') && !message.contains('\u{1b}'),
            "{message:?}"
        );
        assert!(
            message.contains(
                "a\\nfake: line\\x1b[2J.txt, big\\x1b]0;title\\x07.bin (content not kept)"
            ),
            "{message}"
        );
        let from_port = CheckpointError::Conflicts {
            conflicts,
            before: CheckpointId::new("c0"),
        }
        .to_string();
        assert!(
            !from_port.contains('\n') && !from_port.contains('\u{1b}'),
            "{from_port:?}"
        );
    }
}
