//! `planwright runs`: list, show, follow and delete stored runs, show and undo what they
//! changed (`run_changes`).

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use domain::ports::RunStore;
use runner::database::Database;
use runner::liveness::Liveness;

use crate::cli::RunsCommand;
use crate::commands::run_changes;
use crate::error::AppError;
use crate::report;
use crate::terminal::print_stdout;
use runner::run_changes::UndoRequest;

pub async fn runs(db: &Database, command: RunsCommand) -> Result<ExitCode, AppError> {
    let store: Arc<dyn RunStore> = db.open().await?.store;
    let store_err = |e: domain::StoreError| AppError::Run(format!("reading {}: {e}", db));
    match command {
        RunsCommand::List { json } => {
            let runs = store.list_runs().await.map_err(store_err)?;
            if json {
                print_stdout(&format!("{}\n", runner::json::runs_list_json(&runs)));
            } else {
                print_stdout(&report::runs_list_text(&runs));
            }
        }
        RunsCommand::Show { run_id, json } => {
            let run = store
                .get_run(&run_id)
                .await
                .map_err(store_err)?
                .ok_or_else(|| {
                    AppError::NotFound(format!("no run with id '{run_id}' in {}", db))
                })?;
            let plan = store.latest_plan(&run_id).await.map_err(store_err)?;
            let events = store.events(&run_id, 0).await.map_err(store_err)?;
            let space_used = match run_changes::checkpoints_of(db, &run) {
                Ok(checkpoints) => runner::run_changes::space_used(checkpoints.as_ref(), &run_id)
                    .await
                    .ok(),
                Err(_) => None,
            };
            if json {
                let mut value = runner::json::run_show_json(&run, plan.as_ref(), &events);
                value["space_used"] = serde_json::json!(space_used);
                print_stdout(&format!("{value}\n"));
            } else {
                let mut text = report::run_show_text(&run, plan.as_ref(), &events);
                if let Some(bytes) = space_used.filter(|b| *b > 0) {
                    text.push_str(&format!("Checkpoints: {bytes} bytes on disk\n"));
                }
                print_stdout(&text);
            }
        }
        RunsCommand::Events {
            run_id,
            follow,
            json,
        } => {
            if store.get_run(&run_id).await.map_err(store_err)?.is_none() {
                return Err(AppError::NotFound(format!(
                    "no run with id '{run_id}' in {}",
                    db
                )));
            }
            let mut after = 0;
            let mut polls: u32 = 0;
            loop {
                let events = store.events(&run_id, after).await.map_err(store_err)?;
                let mut ended = false;
                for e in &events {
                    if json {
                        print_stdout(&format!(
                            "{}\n",
                            serde_json::to_string(e).unwrap_or_default()
                        ));
                    } else {
                        print_stdout(&report::event_line(e));
                    }
                    after = e.seq;
                    ended |= e.kind.is_final();
                }
                if !follow || ended {
                    break;
                }
                // A followed run that stopped without a final event (killed) ends the follow.
                polls += 1;
                if polls % 10 == 0 {
                    let run = store.get_run(&run_id).await.map_err(store_err)?;
                    if run.is_none_or(|r| Liveness::of(&r).is_interrupted()) {
                        break;
                    }
                }
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        }
        RunsCommand::Delete { run_id } => {
            let run = store
                .get_run(&run_id)
                .await
                .map_err(store_err)?
                .ok_or_else(|| {
                    AppError::NotFound(format!("no run with id '{run_id}' in {}", db))
                })?;
            if Liveness::of(&run).is_running() {
                return Err(AppError::Config(format!(
                    "run '{run_id}' is still running; stop it first"
                )));
            }
            store.delete_run(&run_id).await.map_err(store_err)?;
            if let Ok(checkpoints) = run_changes::checkpoints_of(db, &run) {
                if let Err(e) = checkpoints.discard(&run_id).await {
                    tracing::warn!(error = %e, "cannot delete the run's workspace checkpoints");
                }
            }
            let default_ws = db.runs_root().join(&run_id);
            let ws = Path::new(&run.workspace);
            let removed = match (
                std::fs::canonicalize(&default_ws),
                std::fs::canonicalize(ws),
            ) {
                (Ok(d), Ok(w)) if w.starts_with(&d) => std::fs::remove_dir_all(&d).is_ok(),
                _ => false,
            };
            let note = if removed { " and its workspace" } else { "" };
            print_stdout(&format!("deleted run {run_id}{note}\n"));
        }
        RunsCommand::Prune { older_than } => {
            let runs = store.list_runs().await.map_err(store_err)?;
            let pruned = prune(db, &runs, older_than).await?;
            print_stdout(&format!(
                "removed the checkpoints of {} run(s): {} bytes freed\n",
                pruned.runs, pruned.bytes
            ));
        }
        RunsCommand::Diff { run_id, step, json } => {
            run_changes::diff(db, store.as_ref(), &run_id, step, json).await?
        }
        RunsCommand::Undo {
            run_id,
            to_step,
            checkpoint,
            force,
            json,
        } => {
            let request = UndoRequest {
                to_step,
                checkpoint,
                force,
            };
            run_changes::undo(db, store.as_ref(), &run_id, request, json).await?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// What `runs prune` removed.
struct Pruned {
    runs: usize,
    bytes: u64,
}

/// Discards the checkpoints of the runs that ended more than `older_than` ago.
async fn prune(
    db: &Database,
    runs: &[domain::ports::RunRecord],
    older_than: std::time::Duration,
) -> Result<Pruned, AppError> {
    let age = chrono::Duration::from_std(older_than)
        .map_err(|e| AppError::Config(format!("--older-than is too large: {e}")))?;
    let cutoff = chrono::Utc::now() - age;
    let mut pruned = Pruned { runs: 0, bytes: 0 };
    for run in runs {
        let ended = matches!(
            run.status,
            domain::ports::RunStatus::Completed | domain::ports::RunStatus::Failed
        );
        if !ended || run.finished_at.is_none_or(|at| at > cutoff) {
            continue;
        }
        let checkpoints = run_changes::checkpoints_of(db, run)?;
        let bytes = checkpoints.space_used(&run.run_id).await.unwrap_or(0);
        if bytes == 0 {
            continue;
        }
        checkpoints
            .discard(&run.run_id)
            .await
            .map_err(|e| AppError::Run(format!("cannot prune run '{}': {e}", run.run_id)))?;
        pruned.runs += 1;
        pruned.bytes += bytes;
    }
    Ok(pruned)
}
