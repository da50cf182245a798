//! `planwright runs diff` and `runs undo`: what a run changed in its workspace, and putting
//! it back, from the run's checkpoints in `<runs root>/<run id>/checkpoints` (the runs root
//! beside the database, `Database::runs_root`, or beside a server run's workspace;
//! docs/checkpoints.md). The rules are the runner's (`runner::run_changes`), shared with
//! the HTTP API and the MCP tools.

use std::path::Path;
use std::sync::Arc;

use domain::ports::{RunRecord, RunStore, WorkspaceCheckpoints};
use runner::database::Database;
use runner::run_changes::{self, RunChangesError, UndoRequest};
use runner::RunSettings;

use crate::diff_text;
use crate::error::AppError;
use crate::terminal::print_stdout;

/// The checkpoints of `run` in `db`: under the runs root its workspace lies in when it is a
/// server's run (`<root>/<run id>/workspace`, its checkpoints beside it), else under the
/// database's runs root, where `planwright run` keeps them.
pub fn checkpoints_of(
    db: &Database,
    run: &RunRecord,
) -> Result<Arc<dyn WorkspaceCheckpoints>, AppError> {
    let workspace = Path::new(&run.workspace);
    let own_root = workspace
        .parent()
        .filter(|dir| {
            workspace.ends_with("workspace")
                && dir.file_name().is_some_and(|n| n == run.run_id.as_str())
                && dir.join("checkpoints").is_dir()
        })
        .and_then(Path::parent);
    let root = own_root.map_or_else(|| db.runs_root(), Path::to_path_buf);
    runner::wiring::checkpoint_store(&root, &RunSettings::default())
        .ok_or_else(|| AppError::Config(RunChangesError::Unsupported.to_string()))
}

fn app_error(e: RunChangesError) -> AppError {
    match e {
        RunChangesError::Store(_) | RunChangesError::RunStore(_) => AppError::Run(e.to_string()),
        RunChangesError::Conflicts(_)
        | RunChangesError::Live { .. }
        | RunChangesError::Held { .. } => AppError::Run(e.to_string()),
        RunChangesError::NoCheckpoints(_)
        | RunChangesError::StepNotStarted { .. }
        | RunChangesError::UnknownCheckpoint(_) => AppError::NotFound(e.to_string()),
        _ => AppError::Config(e.to_string()),
    }
}

/// The stored run, its plan and events.
async fn read(
    db: &Database,
    store: &dyn RunStore,
    run_id: &str,
) -> Result<
    (
        RunRecord,
        Option<domain::model::plan::Plan>,
        Vec<domain::model::event::Event>,
    ),
    AppError,
> {
    let store_err = |e: domain::StoreError| AppError::Run(format!("reading {db}: {e}"));
    let run = store
        .get_run(run_id)
        .await
        .map_err(store_err)?
        .ok_or_else(|| AppError::NotFound(format!("no run with id '{run_id}' in {db}")))?;
    let plan = store.latest_plan(run_id).await.map_err(store_err)?;
    let events = store.events(run_id, 0).await.map_err(store_err)?;
    Ok((run, plan, events))
}

pub async fn diff(
    db: &Database,
    store: &dyn RunStore,
    run_id: &str,
    step: Option<u32>,
    json: bool,
) -> Result<(), AppError> {
    let (run, plan, events) = read(db, store, run_id).await?;
    let checkpoints = checkpoints_of(db, &run)?;
    let diff = run_changes::diff(checkpoints.as_ref(), &run, plan.as_ref(), &events, step)
        .await
        .map_err(app_error)?;
    if json {
        print_stdout(&format!(
            "{}\n",
            runner::json::diff_json(run_id, step, &diff)
        ));
    } else {
        let colour = crate::terminal::get().colour_stdout;
        print_stdout(&diff_text::diff_text(&diff, colour));
    }
    Ok(())
}

pub async fn undo(
    db: &Database,
    store: &dyn RunStore,
    run_id: &str,
    request: UndoRequest,
    json: bool,
) -> Result<(), AppError> {
    let (run, plan, events) = read(db, store, run_id).await?;
    let checkpoints = checkpoints_of(db, &run)?;
    let restored = run_changes::undo(
        store,
        checkpoints.as_ref(),
        &run,
        plan.as_ref(),
        &events,
        &request,
    )
    .await
    .map_err(app_error)?;
    if json {
        print_stdout(&format!("{}\n", runner::json::undo_json(run_id, &restored)));
    } else {
        print_stdout(&diff_text::undo_text(run_id, &restored));
    }
    Ok(())
}
