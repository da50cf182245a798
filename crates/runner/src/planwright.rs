//! [`Planwright`]: the runner as one value an embedder holds — a database, a model and the
//! command line's defaults (the tools its cargo features bring, the sandbox, input
//! protection, checkpoints, checked answers) — and [`Planwright::run`] to run a task with
//! them. What `planwright run` does, without the terminal. Whatever it should do otherwise
//! is set on [`RunSettings`] first, or on [`Planwright::runtime_mut`] after.

use std::path::{Path, PathBuf};

use domain::{CancellationToken, RunOutcome, RunRequest, Runtime};

use crate::database::Database;
use crate::{RunSettings, RunnerError};

/// A database, a model and the run defaults, ready to run tasks (see the module doc).
pub struct Planwright {
    runtime: Runtime,
    runs_root: PathBuf,
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
        Ok(Planwright { runtime, runs_root })
    }

    /// The runtime its runs use, to read.
    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// The runtime its runs use, to change (an event sink, a user channel, the config).
    pub fn runtime_mut(&mut self) -> &mut Runtime {
        &mut self.runtime
    }

    /// Runs `task` in `workspace` (created when missing), or in a new folder beside the
    /// database (`Database::runs_root`), to its end.
    pub async fn run(
        &self,
        task: &str,
        workspace: Option<&Path>,
    ) -> Result<RunOutcome, RunnerError> {
        let run_id = self.runtime.new_run_id();
        let workspace = crate::workspace::prepare_workspace(workspace, &self.runs_root, &run_id)?;
        let request = RunRequest {
            run_id,
            task: task.to_string(),
            workspace,
        };
        self.runtime
            .run(request, CancellationToken::new())
            .await
            .map_err(|e| match e {
                domain::Error::Config(m) => RunnerError::Config(m),
                other => RunnerError::Run(other.to_string()),
            })
    }
}

/// What an embedder imports, from one place: `use runner::prelude::*;`.
pub mod prelude {
    pub use super::Planwright;
    pub use crate::database::Database;
    pub use crate::{Provider, RunSettings, RunnerError, SandboxMode};
    pub use domain::{Actions, Mode, RunOutcome, RunStatus, Runtime};
}
