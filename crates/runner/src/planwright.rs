//! [`Planwright`]: the runner as one value an embedder holds — a database, a model and the
//! command line's defaults (the tools its cargo features bring, the sandbox, input
//! protection, checkpoints, checked answers) — and [`Planwright::run`] to run a task with
//! them. What `planwright run` does, without the terminal. Whatever it should do otherwise
//! is set on [`RunSettings`] first, or on [`Planwright::runtime_mut`] after. A run's
//! events can be followed live ([`Planwright::events`]) and a run stopped
//! ([`Planwright::run_until`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use domain::{CancellationToken, Event, EventSink, RunOutcome, RunRequest, Runtime};
use tokio::sync::broadcast;

use crate::database::Database;
use crate::{RunSettings, RunnerError};

/// How many events a slow follower may fall behind before it misses some (it is told:
/// `RecvError::Lagged`); the runs never wait for it.
const EVENTS_BEHIND: usize = 4096;

/// A database, a model and the run defaults, ready to run tasks (see the module doc).
pub struct Planwright {
    runtime: Runtime,
    runs_root: PathBuf,
    events: broadcast::Sender<Event>,
}

impl Planwright {
    /// Opens `db` (migrating it) and wires the model and tools `settings` name: the
    /// OpenAI-compatible endpoint of `OPENAI_BASE_URL` / `OPENAI_API_KEY` or
    /// `settings.base_url`, else the embedded model, as the command line does.
    pub async fn open(db: &Database, settings: RunSettings) -> Result<Planwright, RunnerError> {
        let llm = crate::wiring::llm(&settings)?;
        let opened = db.open().await?;
        let runs_root = db.runs_root();
        let runtime = crate::wiring::runtime(llm.client, opened.store, &settings, &runs_root)?;
        Ok(Planwright::with_runtime(runtime, runs_root))
    }

    /// A runtime built elsewhere (its own model, tools and store), its runs' folders under
    /// `runs_root`, run the way [`Planwright::open`]'s are.
    pub fn with_runtime(mut runtime: Runtime, runs_root: PathBuf) -> Planwright {
        let (events, _) = broadcast::channel(EVENTS_BEHIND);
        runtime.sink = Arc::new(Forward {
            next: runtime.sink.clone(),
            events: events.clone(),
        });
        Planwright {
            runtime,
            runs_root,
            events,
        }
    }

    /// The runtime its runs use, to read.
    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// The runtime its runs use, to change (a user channel, the config). Its event sink
    /// forwards to [`Planwright::events`]; one set here replaces that.
    pub fn runtime_mut(&mut self) -> &mut Runtime {
        &mut self.runtime
    }

    /// Every event of this value's runs from now on, as they happen (each carries its
    /// run's id). A follower that falls far behind misses events and is told so; the runs
    /// never wait for it.
    pub fn events(&self) -> broadcast::Receiver<Event> {
        self.events.subscribe()
    }

    /// Runs `task` in `workspace` (created when missing), or in a new folder beside the
    /// database (`Database::runs_root`), to its end.
    pub async fn run(
        &self,
        task: &str,
        workspace: Option<&Path>,
    ) -> Result<RunOutcome, RunnerError> {
        self.run_until(task, workspace, CancellationToken::new())
            .await
    }

    /// [`Planwright::run`], stopped when `cancel` is: the run ends failed, "the run was
    /// cancelled" (its tool processes killed, its journal and input copies kept, so
    /// `planwright resume` can go on with it).
    pub async fn run_until(
        &self,
        task: &str,
        workspace: Option<&Path>,
        cancel: CancellationToken,
    ) -> Result<RunOutcome, RunnerError> {
        let run_id = self.runtime.new_run_id();
        let workspace = crate::workspace::prepare_workspace(workspace, &self.runs_root, &run_id)?;
        let request = RunRequest {
            run_id,
            task: task.to_string(),
            workspace,
        };
        self.runtime
            .run(request, cancel)
            .await
            .map_err(|e| match e {
                domain::Error::Config(m) => RunnerError::Config(m),
                other => RunnerError::Run(other.to_string()),
            })
    }
}

/// The runtime's sink: each event to the sink it had, then to [`Planwright::events`]'
/// followers (none is fine).
struct Forward {
    next: Arc<dyn EventSink>,
    events: broadcast::Sender<Event>,
}

impl EventSink for Forward {
    fn publish(&self, event: &Event) {
        self.next.publish(event);
        let _ = self.events.send(event.clone());
    }
}

/// What an embedder imports, from one place: `use runner::prelude::*;`.
pub mod prelude {
    pub use super::Planwright;
    pub use crate::database::Database;
    pub use crate::{RunSettings, RunnerError, SandboxMode};
    pub use domain::{Actions, CancellationToken, Event, Mode, RunOutcome, RunStatus, Runtime};
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::testing::replies::{call, done};
    use domain::testing::runs::runtime;
    use domain::testing::{MemoryStore, MemoryWorkspace, ScriptedLlm};
    use domain::{EventKind, Mode, RunConfig, RunStatus};
    use serde_json::json;

    fn planwright(ws: &MemoryWorkspace, root: &Path) -> Planwright {
        let llm = Arc::new(ScriptedLlm::new(vec![
            call(
                "code_run",
                json!({"language": "bash", "code": "echo hi > hi.txt"}),
            ),
            done("hi.txt holds hi"),
        ]));
        let config = RunConfig {
            mode: Mode::Direct,
            verification: false,
            ..RunConfig::default()
        };
        let rt = runtime(
            llm,
            Arc::new(ws.toolbox()),
            Arc::new(MemoryStore::new()),
            config,
        );
        Planwright::with_runtime(rt, root.to_path_buf())
    }

    #[tokio::test]
    async fn a_runs_events_are_followed_live() {
        let root = tempfile::tempdir().unwrap();
        let ws = MemoryWorkspace::new();
        let planwright = planwright(&ws, root.path());
        let mut events = planwright.events();
        let outcome = planwright.run("Write hi.txt", None).await.unwrap();
        assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
        let mut kinds = Vec::new();
        while let Ok(event) = events.try_recv() {
            assert_eq!(event.run_id, outcome.run_id);
            kinds.push(event.kind);
        }
        assert!(
            matches!(kinds.first(), Some(EventKind::RunStarted { .. })),
            "{kinds:?}"
        );
        assert!(
            matches!(kinds.last(), Some(EventKind::RunCompleted { .. })),
            "{kinds:?}"
        );
    }

    #[tokio::test]
    async fn a_run_stops_when_told() {
        let root = tempfile::tempdir().unwrap();
        let ws = MemoryWorkspace::new();
        let planwright = planwright(&ws, root.path());
        let cancel = CancellationToken::new();
        cancel.cancel();
        let outcome = planwright
            .run_until("Write hi.txt", None, cancel)
            .await
            .unwrap();
        assert_eq!(outcome.status, RunStatus::Failed);
        assert_eq!(outcome.error.as_deref(), Some("the run was cancelled"));
        assert_eq!(ws.read("hi.txt"), None);
    }
}
