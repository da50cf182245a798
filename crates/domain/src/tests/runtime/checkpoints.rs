//! Workspace checkpoints around a run (docs/checkpoints.md): one `checkpoint_taken` event
//! before each attempt of a step and one at the run's end, none taken twice when a run is
//! resumed, and a failing checkpoint only a warning.

use std::path::Path;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::engine::config::RunConfig;
use crate::model::event::EventKind;
use crate::ports::checkpoints::{
    Checkpoint, CheckpointAt, CheckpointError, CheckpointId, DiffContent, FileChange, FileDiff,
    RestoreRequest, Restored, WorkspaceCheckpoints, WorkspaceDiff,
};
use crate::ports::llm::LlmError;
use crate::ports::RunStatus;
use crate::testing::replies::{acted, calls, create_plan, done, text};
use crate::testing::runs::{request, runtime, RUN_ID};
use crate::testing::{EchoToolbox, MemoryStore, ScriptedLlm};
use crate::tests::support::{assert_gap_free, base_config};
use crate::RunControl;

/// Counts the checkpoints asked for; fails every one when `failing`.
#[derive(Default)]
struct CountingCheckpoints {
    taken: Mutex<Vec<CheckpointAt>>,
    failing: bool,
    /// What `diff` answers; an error when `None`.
    diff: Option<WorkspaceDiff>,
}

impl CountingCheckpoints {
    fn taken(&self) -> Vec<CheckpointAt> {
        self.taken.lock().map(|t| t.clone()).unwrap_or_default()
    }
}

#[async_trait]
impl WorkspaceCheckpoints for CountingCheckpoints {
    async fn checkpoint(
        &self,
        _run_id: &str,
        _workspace: &Path,
        at: &CheckpointAt,
    ) -> Result<Checkpoint, CheckpointError> {
        if self.failing {
            return Err(CheckpointError::Io("disk full".into()));
        }
        let mut taken = self
            .taken
            .lock()
            .map_err(|_| CheckpointError::Io("poisoned".into()))?;
        taken.push(at.clone());
        Ok(Checkpoint {
            id: CheckpointId::new(format!("cp{}", taken.len())),
            files: 1,
            bytes: 3,
            stored_bytes: 3,
            left_out: Vec::new(),
            complete: true,
        })
    }
    async fn diff(
        &self,
        _: &str,
        _: &CheckpointId,
        _: &CheckpointId,
    ) -> Result<WorkspaceDiff, CheckpointError> {
        self.diff
            .clone()
            .ok_or_else(|| CheckpointError::Io("not in this test".into()))
    }
    async fn restore(
        &self,
        _: &str,
        _: &Path,
        _: &RestoreRequest,
    ) -> Result<Restored, CheckpointError> {
        Err(CheckpointError::Io("not in this test".into()))
    }
    async fn space_used(&self, _: &str) -> Result<u64, CheckpointError> {
        Ok(0)
    }
    async fn discard(&self, _: &str) -> Result<(), CheckpointError> {
        Ok(())
    }
}

/// (step id, attempt) of each `checkpoint_taken` event, in order.
fn logged(store: &MemoryStore) -> Vec<(Option<String>, u32)> {
    store
        .events_of(RUN_ID)
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::CheckpointTaken {
                step_id, attempt, ..
            } => Some((step_id, attempt)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn one_checkpoint_before_each_attempt_and_one_at_the_end() {
    let store = Arc::new(MemoryStore::new());
    let checkpoints = Arc::new(CountingCheckpoints::default());
    let llm = ScriptedLlm::new(vec![
        create_plan(&["one", "two"]),
        Err(LlmError::Transient("503".into())),
        acted("did one"),
        acted("did two"),
        text("summary"),
    ]);
    let mut rt = runtime(
        Arc::new(llm),
        Arc::new(EchoToolbox::new()),
        store.clone(),
        RunConfig {
            retries: 1,
            ..base_config()
        },
    );
    rt.workspace_checkpoints = Some(checkpoints.clone());
    let outcome = rt
        .run(request("make a file"), CancellationToken::new())
        .await
        .expect("an outcome");
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    let (one, two) = (
        outcome.plan.steps()[0].id.clone(),
        outcome.plan.steps()[1].id.clone(),
    );
    assert_eq!(
        logged(&store),
        [
            (Some(one.clone()), 1),
            (Some(one), 2),
            (Some(two), 1),
            (None, 0)
        ]
    );
    assert_eq!(checkpoints.taken().len(), 4);
    assert_eq!(checkpoints.taken().last(), Some(&CheckpointAt::RunEnd));
    // Each attempt's checkpoint comes right after it starts, before any tool call.
    let events = store.events_of(RUN_ID);
    assert_gap_free(&events);
    for (i, e) in events.iter().enumerate() {
        if let EventKind::StepStarted { .. } = e.kind {
            assert_eq!(events[i + 1].kind.name(), "checkpoint_taken");
        }
    }
}

#[tokio::test]
async fn without_the_port_no_checkpoint_is_logged() {
    let store = Arc::new(MemoryStore::new());
    let rt = runtime(
        Arc::new(ScriptedLlm::new(vec![
            create_plan(&["one"]),
            acted("did one"),
            text("summary"),
        ])),
        Arc::new(EchoToolbox::new()),
        store.clone(),
        base_config(),
    );
    let outcome = rt
        .run(request("make a file"), CancellationToken::new())
        .await
        .expect("an outcome");
    assert_eq!(outcome.status, RunStatus::Completed);
    assert!(logged(&store).is_empty());
}

#[tokio::test]
async fn a_failing_checkpoint_is_a_warning_and_the_run_goes_on() {
    let store = Arc::new(MemoryStore::new());
    let mut rt = runtime(
        Arc::new(ScriptedLlm::new(vec![
            create_plan(&["one"]),
            acted("did one"),
            text("summary"),
        ])),
        Arc::new(EchoToolbox::new()),
        store.clone(),
        base_config(),
    );
    rt.workspace_checkpoints = Some(Arc::new(CountingCheckpoints {
        failing: true,
        ..CountingCheckpoints::default()
    }));
    let outcome = rt
        .run(request("make a file"), CancellationToken::new())
        .await
        .expect("an outcome");
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    assert!(logged(&store).is_empty());
    let warnings: Vec<String> = store
        .events_of(RUN_ID)
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::Error { message, .. } if message.contains("checkpoint failed") => {
                Some(message)
            }
            _ => None,
        })
        .collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings[0].contains("disk full"), "{warnings:?}");
}

/// A run suspended in its first step's tool call and resumed: that attempt's checkpoint,
/// already in the log, is not taken again.
#[tokio::test]
async fn a_resumed_run_does_not_take_a_logged_checkpoint_again() {
    let store = Arc::new(MemoryStore::new());
    let checkpoints = Arc::new(CountingCheckpoints::default());
    let suspend = CancellationToken::new();
    let on_call = suspend.clone();
    let mut rt = runtime(
        Arc::new(ScriptedLlm::new(vec![
            create_plan(&["a", "b"]),
            calls(&[("shell_exec", json!({"command": "true"}))]),
        ])),
        Arc::new(EchoToolbox::new().on_call(move || on_call.cancel())),
        store.clone(),
        base_config(),
    );
    rt.workspace_checkpoints = Some(checkpoints.clone());
    let err = rt
        .run_with(
            request("make a file"),
            RunControl {
                cancel: CancellationToken::new(),
                suspend,
            },
        )
        .await
        .expect_err("a suspended run has no outcome");
    assert!(matches!(err, crate::Error::Suspended), "{err:?}");
    assert_eq!(logged(&store).len(), 1);
    let plan = store.plans_of(RUN_ID).last().cloned().expect("a plan");
    assert_eq!(
        plan.steps()[0].status(),
        crate::model::plan::StepStatus::InProgress,
        "step a is resumed in the same attempt"
    );

    let mut rt = runtime(
        Arc::new(ScriptedLlm::new(vec![
            done("did a"),
            acted("did b"),
            text("summary"),
        ])),
        Arc::new(EchoToolbox::new()),
        store.clone(),
        base_config(),
    );
    rt.workspace_checkpoints = Some(checkpoints.clone());
    let outcome = rt
        .resume(RUN_ID, CancellationToken::new())
        .await
        .expect("resumes");
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    let (a, b) = (
        outcome.plan.steps()[0].id.clone(),
        outcome.plan.steps()[1].id.clone(),
    );
    assert_eq!(
        logged(&store),
        [(Some(a), 1), (Some(b), 1), (None, 0)],
        "step a's first attempt was checkpointed once"
    );
    assert_eq!(checkpoints.taken().len(), 3);
    assert_gap_free(&store.events_of(RUN_ID));
}

/// The outcome's and the summary's created, changed and deleted files are the difference
/// between the run's first and run-end checkpoints, not what the model said.
#[tokio::test]
async fn the_files_the_run_changed_are_read_from_its_checkpoints() {
    let store = Arc::new(MemoryStore::new());
    let file = |path: &str, change| FileDiff {
        path: path.into(),
        change,
        content: DiffContent::Binary {
            old_size: None,
            new_size: None,
        },
    };
    let checkpoints = Arc::new(CountingCheckpoints {
        diff: Some(WorkspaceDiff {
            from: CheckpointId::new("cp1"),
            to: CheckpointId::new("cp2"),
            files: vec![
                file("data.csv", FileChange::Modified),
                file("new.txt", FileChange::Added),
                file("old.md", FileChange::Deleted),
            ],
        }),
        ..CountingCheckpoints::default()
    });
    let mut rt = runtime(
        Arc::new(ScriptedLlm::new(vec![
            create_plan(&["one"]),
            acted("did one"),
            text("summary"),
        ])),
        Arc::new(EchoToolbox::new()),
        store.clone(),
        base_config(),
    );
    rt.workspace_checkpoints = Some(checkpoints);
    let outcome = rt
        .run(request("make a file"), CancellationToken::new())
        .await
        .expect("an outcome");
    assert_eq!(outcome.files.created, ["new.txt"]);
    assert_eq!(outcome.files.changed, ["data.csv"]);
    assert_eq!(outcome.files.deleted, ["old.md"]);
    assert!(
        outcome
            .summary
            .contains("changed (existed before the run): data.csv"),
        "{}",
        outcome.summary
    );
}

/// [`EchoToolbox`] that says when the run's tools were closed (its shell sessions killed).
struct ClosingToolbox {
    inner: EchoToolbox,
    closed: Arc<std::sync::atomic::AtomicBool>,
}

#[async_trait]
impl crate::ports::Toolbox for ClosingToolbox {
    fn schemas(&self) -> Vec<crate::ports::llm::ToolSchema> {
        self.inner.schemas()
    }
    async fn call(
        &self,
        name: &str,
        args: serde_json::Value,
        ctx: &crate::ports::ToolContext,
    ) -> Result<crate::ports::ToolOutput, crate::ports::ToolError> {
        self.inner.call(name, args, ctx).await
    }
    async fn close_run(&self, _run_id: &str) {
        self.closed.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Records, for each checkpoint, whether the run's tools were closed when it was taken.
struct WatchingCheckpoints {
    closed: Arc<std::sync::atomic::AtomicBool>,
    seen: Mutex<Vec<(CheckpointAt, bool)>>,
    inner: CountingCheckpoints,
}

#[async_trait]
impl WorkspaceCheckpoints for WatchingCheckpoints {
    async fn checkpoint(
        &self,
        run_id: &str,
        workspace: &Path,
        at: &CheckpointAt,
    ) -> Result<Checkpoint, CheckpointError> {
        let closed = self.closed.load(std::sync::atomic::Ordering::SeqCst);
        if let Ok(mut seen) = self.seen.lock() {
            seen.push((at.clone(), closed));
        }
        self.inner.checkpoint(run_id, workspace, at).await
    }
    async fn diff(
        &self,
        run_id: &str,
        from: &CheckpointId,
        to: &CheckpointId,
    ) -> Result<WorkspaceDiff, CheckpointError> {
        self.inner.diff(run_id, from, to).await
    }
    async fn restore(
        &self,
        run_id: &str,
        workspace: &Path,
        request: &RestoreRequest,
    ) -> Result<Restored, CheckpointError> {
        self.inner.restore(run_id, workspace, request).await
    }
    async fn space_used(&self, run_id: &str) -> Result<u64, CheckpointError> {
        self.inner.space_used(run_id).await
    }
    async fn discard(&self, run_id: &str) -> Result<(), CheckpointError> {
        self.inner.discard(run_id).await
    }
}

/// Issue 41 (Low): the run-end checkpoint was taken while a shell session's command still
/// ran, so what it wrote afterwards showed as a change after the run and the undo reported
/// false conflicts. The run's tools are closed (sessions killed and reaped) first.
#[tokio::test]
async fn the_run_end_checkpoint_is_taken_once_the_runs_tools_are_closed() {
    let store = Arc::new(MemoryStore::new());
    let closed = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let checkpoints = Arc::new(WatchingCheckpoints {
        closed: closed.clone(),
        seen: Mutex::new(Vec::new()),
        inner: CountingCheckpoints::default(),
    });
    let llm = ScriptedLlm::new(vec![
        create_plan(&["one"]),
        acted("did one"),
        text("summary"),
    ]);
    let tools = ClosingToolbox {
        inner: EchoToolbox::new(),
        closed: closed.clone(),
    };
    let mut rt = runtime(Arc::new(llm), Arc::new(tools), store.clone(), base_config());
    rt.workspace_checkpoints = Some(checkpoints.clone());
    let outcome = rt
        .run(request("make a file"), CancellationToken::new())
        .await
        .expect("an outcome");
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    let seen = checkpoints
        .seen
        .lock()
        .map(|s| s.clone())
        .unwrap_or_default();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert!(
        matches!(&seen[0], (CheckpointAt::Step { .. }, false)),
        "{seen:?}"
    );
    assert_eq!(seen[1], (CheckpointAt::RunEnd, true), "{seen:?}");
}
