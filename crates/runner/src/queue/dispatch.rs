//! The server's side of the durable work queue (docs/durability.md, "The work queue").
//!
//! ```text
//! POST /v1/runs ─▶ WorkQueue::enqueue (status queued, in the store) ─▶ answer 201/202
//!      dispatch(): while a slot is free ─▶ WorkQueue::claim (leased to this process)
//!                  ─▶ Runtime::run_queued (queued) | Runtime::resume_with (interrupted)
//! ```
//!
//! `dispatch` runs after every enqueue, after every run ends, once at start-up and on a
//! timer (runs whose owner died elsewhere come back when their lease expires). Shutdown
//! suspends the runs at their next safe point and gives their leases up, so the next server
//! on the same store goes on with them.

use std::sync::Arc;
use tracing::Instrument;

use chrono::Utc;
use domain::model::event::Event;
use domain::model::names::Named;
use domain::ports::{LeaseClaim, LeaseOutcome, RunMessage, RunRecord, RunStatus, StoreError};
use domain::{Mode, RunControl};
use serde_json::{json, Value};
use tokio::sync::{broadcast, OwnedSemaphorePermit};
use tokio_util::sync::CancellationToken;

use super::{BroadcastSink, Entry, Phase, QueueRunner, Registry, EVENT_CHANNEL};
use crate::mailbox::MailboxReader;
use crate::RunSettings;

/// The queue runner as its tasks share it.
type State = Arc<QueueRunner>;

/// What a client asked for beyond the task, kept with the queued run: the mode by the
/// domain's name ([`Named`]), which is also what the command line reads.
pub fn queue_request(opts: &RunSettings) -> Value {
    json!({"mode": opts.mode.name(), "model": opts.model})
}

/// The options of a claimed run: the server's, with the mode and model its client chose.
fn options_of(state: &State, record: &RunRecord) -> Result<RunSettings, String> {
    let mut opts = state.opts.clone();
    let request = record.queue_request.clone().unwrap_or(Value::Null);
    if let Some(mode) = requested_mode(&request)? {
        opts.mode = mode;
    }
    if let Some(model) = request.get("model").and_then(Value::as_str) {
        opts.model = model.to_string();
    }
    Ok(opts)
}

/// The mode a queued run's request names, if any. Queued runs stored before the mode was
/// the domain's name ([`Named`]) used clap's spelling of the same names, so they read alike.
fn requested_mode(request: &Value) -> Result<Option<Mode>, String> {
    request
        .get("mode")
        .and_then(Value::as_str)
        .map(|mode| Mode::from_name(mode).map_err(|e| format!("the queued run asks for an {e}")))
        .transpose()
}

/// The live channel of `run_id`, registering the run (as queued) when this process did not
/// know it yet (it was queued before a restart, or by another server).
pub fn channel_for(state: &State, record: &RunRecord) -> Option<broadcast::Sender<Event>> {
    state
        .with_registry(|reg| entry_for(reg, record).events.clone())
        .flatten()
}

/// The registry's entry of `record`, created (queued, with a live channel) when missing.
fn entry_for<'a>(reg: &'a mut Registry, record: &RunRecord) -> &'a mut Entry {
    reg.runs
        .entry(record.run_id.clone())
        .or_insert_with(|| Entry {
            workspace: record.workspace.clone().into(),
            cancel: CancellationToken::new(),
            events: Some(broadcast::channel(EVENT_CHANNEL).0),
            phase: Phase::Queued,
        })
}

/// Starts queued (and interrupted queue) runs while slots are free.
pub async fn dispatch(state: &State) {
    while !state.shutdown.is_cancelled() {
        let Ok(permit) = state.slots.clone().try_acquire_owned() else {
            return;
        };
        let now = Utc::now();
        let claimed = state
            .queue
            .claim(&state.lease.owner, now, state.lease.until(now))
            .await;
        match claimed {
            Ok(Some(record)) => {
                crate::metrics::claimed(record.status != RunStatus::Queued);
                start(state, record, permit)
            }
            Ok(None) => return,
            Err(e) => {
                tracing::error!(error = %e, "cannot claim queued runs");
                return;
            }
        }
    }
}

/// Takes over the queue runs whose owner is provably gone (a server of this host that was
/// killed): at start-up, without waiting for their leases to expire.
pub async fn adopt_orphans(state: &State) {
    let runs = match state.store.list_runs().await {
        Ok(runs) => runs,
        Err(e) => {
            tracing::error!(error = %e, "cannot list runs to adopt");
            return;
        }
    };
    for run in runs.iter().rev() {
        let live = matches!(
            run.status,
            RunStatus::Queued | RunStatus::Running | RunStatus::Waiting
        );
        let Some(stale) = crate::liveness::stale_owner(run) else {
            continue;
        };
        if !live || run.queue_request.is_none() {
            continue;
        }
        let now = Utc::now();
        let claim = LeaseClaim {
            owner: state.lease.owner.clone(),
            now,
            until: state.lease.until(now),
            stale_owner: Some(stale),
        };
        match state.store.acquire_lease(&run.run_id, &claim).await {
            // Given up at once: `dispatch` claims it like any other free run, in order.
            Ok(LeaseOutcome::Acquired) => {
                tracing::info!(run_id = %run.run_id, "adopting a run of a server that stopped");
                let _ = state
                    .store
                    .release_lease(&run.run_id, &state.lease.owner)
                    .await;
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(run_id = %run.run_id, error = %e, "cannot adopt run"),
        }
    }
}

/// Runs a claimed run on its own task; when it ends, fills the freed slot.
fn start(state: &State, record: RunRecord, permit: OwnedSemaphorePermit) {
    let (events, cancel) = state
        .with_registry(|reg| {
            let entry = entry_for(reg, &record);
            entry.phase = Phase::Active;
            (entry.events.clone(), entry.cancel.clone())
        })
        .unwrap_or_default();
    let state = state.clone();
    state.user.hold_slot(&record.run_id, permit);
    tokio::spawn(async move {
        let run_id = record.run_id.clone();
        let result = execute(&state, record, events, cancel).await;
        state.user.free_slot(&run_id);
        state.with_registry(|reg| match result {
            // The store has the run's outcome (or, suspended, its state to resume from).
            Ok(()) => {
                reg.runs.remove(&run_id);
            }
            Err(e) => {
                tracing::warn!(run_id = %run_id, error = %e, "the run ended without an outcome");
                if let Some(entry) = reg.runs.get_mut(&run_id) {
                    entry.phase = Phase::Errored(e);
                    entry.events = None;
                }
            }
        });
        Box::pin(dispatch(&state)).await;
    });
}

/// Refuses a stored workspace that does not lie under the configured root (a database
/// written by someone else could name any folder; docs/security.md).
fn under_root(root: &std::path::Path, workspace: &str) -> Result<(), String> {
    let refused = || {
        format!(
            "the run's workspace {workspace} does not lie under this process's workspace root \
             {}; it is not used (docs/security.md)",
            root.display()
        )
    };
    let Ok(root) = std::fs::canonicalize(root) else {
        return Err(refused());
    };
    match std::fs::canonicalize(workspace) {
        Ok(ws) if ws.starts_with(&root) && ws != root => Ok(()),
        Ok(_) => Err(refused()),
        // Missing: said by the reachability check next, unless it names another place.
        Err(_) if std::path::Path::new(workspace).starts_with(&root) => Ok(()),
        Err(_) => Err(refused()),
    }
}

async fn execute(
    state: &State,
    record: RunRecord,
    events: Option<broadcast::Sender<Event>>,
    cancel: CancellationToken,
) -> Result<(), String> {
    let run_id = record.run_id.clone();
    if let Err(reason) = under_root(&state.workspace_root, &record.workspace) {
        give_up(state, &run_id, &reason).await;
        return Err(reason);
    }
    if !std::path::Path::new(&record.workspace).is_dir() {
        let reason = format!(
            "the run's workspace {} cannot be reached from worker {}: every worker needs the \
             server's --workspace-root at the same path (the same host, or a shared \
             filesystem; docs/scaling.md)",
            record.workspace, state.lease.owner
        );
        give_up(state, &run_id, &reason).await;
        return Err(reason);
    }
    let prepared = options_of(state, &record).and_then(|opts| {
        let llm = if opts.model == state.opts.model {
            state.llm.clone()
        } else {
            crate::wiring::llm(&opts)
                .map_err(|e| format!("cannot use model '{}': {e}", opts.model))?
                .client
        };
        crate::wiring::runtime(llm, state.store.clone(), &opts, &state.workspace_root)
            .map_err(|e| e.to_string())
    });
    let mut runtime = match prepared {
        Ok(rt) => rt,
        Err(e) => {
            give_up(state, &run_id, &e).await;
            return Err(e);
        }
    };
    if let Some(tx) = events {
        runtime.sink = Arc::new(BroadcastSink(tx));
    }
    // Metric labels name only the model this process was configured with and the tools
    // its runs are offered: a client's made-up model counts as `other`.
    let known = crate::metrics::KnownLabels::of(&state.opts.model, &runtime);
    runtime.sink = Arc::new(crate::metrics::MetricsSink::new(
        runtime.sink.clone(),
        &runtime.config.trace,
        runtime.config.mode.to_string(),
        known,
    ));
    runtime.user = state.user.clone();
    // The server's lease settings, so the claim made above is this runtime's own lease.
    runtime.config.lease = state.lease.clone();
    let control = RunControl {
        cancel,
        suspend: state.shutdown.clone(),
    };
    tracing::info!(run_id = %run_id, status = record.status.as_str(), "run starting");
    let watching = CancellationToken::new();
    let reader = MailboxReader {
        mailbox: state.mailbox.clone(),
        changes: state.changes.clone(),
        run_id: run_id.clone(),
        owner: state.lease.owner.clone(),
    };
    let user = state.user.clone();
    let answered = run_id.clone();
    tokio::spawn(reader.run(
        control.cancel.clone(),
        move |message: &RunMessage| match message {
            RunMessage::Answer { text } => user.reply(&answered, text.clone()).is_ok(),
            RunMessage::Approval { call_id, decision } => {
                user.decide(&answered, call_id, *decision).is_ok()
            }
            RunMessage::Cancel => false,
        },
        watching.clone(),
    ));
    let _stop_watching = watching.drop_guard();
    // Under the caller's trace when it sent one (kept in the queue request).
    let span = crate::telemetry::context::queued_run_span(record.queue_request.as_ref());
    let outcome = async {
        if record.status == RunStatus::Queued {
            runtime.run_queued(&run_id, control).await
        } else {
            // Claimed above: the lease is this process's already.
            runtime.resume_with(&run_id, control, None).await
        }
    }
    .instrument(span)
    .await;
    let reason = match outcome {
        Ok(_) | Err(domain::Error::Suspended | domain::Error::LeaseLost) => return Ok(()),
        // The database went away (restarted, connection cut): the journal holds everything
        // up to the failure. The run stays as it is and is resumed (here or by another
        // worker) once its lease is released or expires; failing it would lose it.
        Err(domain::Error::Store(StoreError::Unavailable(e))) => {
            tracing::warn!(run_id = %run_id, error = %e, "the database is unavailable; the run will be resumed");
            let _ = state.store.release_lease(&run_id, &state.lease.owner).await;
            return Ok(());
        }
        Err(e) => format!("the run could not go on: {e}"),
    };
    // Ended without an outcome: say so in the store too, or the queue would take it up
    // again as interrupted.
    give_up(state, &run_id, &reason).await;
    Err(reason)
}

/// Records a claimed run that ended without an outcome (it cannot be started, or its store
/// failed) as `failed` with `reason`, and gives its lease up.
async fn give_up(state: &State, run_id: &str, reason: &str) {
    match state.store.get_run(run_id).await {
        Ok(Some(mut record)) => {
            record.status = RunStatus::Failed;
            record.error = Some(reason.to_string());
            record.finished_at = Some(Utc::now());
            if let Err(e) = state.store.update_run(&record).await {
                tracing::error!(run_id, error = %e, "cannot record the run as failed");
            }
        }
        Ok(None) => {}
        Err(e) => tracing::error!(run_id, error = %e, "cannot record the run as failed"),
    }
    let _ = state.store.release_lease(run_id, &state.lease.owner).await;
}

#[cfg(test)]
mod tests {
    use super::{requested_mode, under_root};
    use domain::model::names::Named;
    use domain::Mode;
    use serde_json::json;

    /// Issue 30: a queued run keeps its mode by the domain's name, and the runs queued
    /// before (by clap's names of the same modes) still read.
    #[test]
    fn a_queued_runs_mode_is_the_domains_name_and_old_rows_read() {
        for mode in Mode::all() {
            let request = json!({"mode": mode.name(), "model": "m"});
            assert_eq!(requested_mode(&request), Ok(Some(*mode)));
        }
        for (stored, mode) in [
            ("flow", Mode::Flow),
            ("plan-act", Mode::PlanAct),
            ("todo", Mode::Todo),
            ("dag", Mode::Dag),
            ("auto", Mode::Auto),
            ("direct", Mode::Direct),
        ] {
            assert_eq!(requested_mode(&json!({"mode": stored})), Ok(Some(mode)));
        }
        assert_eq!(requested_mode(&json!({"model": "m"})), Ok(None));
        let err = requested_mode(&json!({"mode": "plan_act"})).unwrap_err();
        assert!(err.contains("unknown mode 'plan_act'"), "{err}");
    }

    /// Issue 29: a database written by someone else named `~/.ssh` as a run's workspace.
    #[test]
    fn a_workspace_outside_the_root_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("runs");
        let inside = root.join("run_1").join("workspace");
        std::fs::create_dir_all(&inside).unwrap();
        let elsewhere = dir.path().join("home").join(".ssh");
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, root.join("link")).unwrap();
        assert_eq!(under_root(&root, &inside.display().to_string()), Ok(()));
        for bad in [
            elsewhere.clone(),
            root.clone(),
            root.join("link"),
            root.join("run_1").join("..").join("..").join("home"),
        ] {
            let err = under_root(&root, &bad.display().to_string()).unwrap_err();
            assert!(err.contains("does not lie under"), "{bad:?}: {err}");
        }
        // Not created yet, but under the root: left to the reachability check.
        assert_eq!(
            under_root(&root, &root.join("run_2").display().to_string()),
            Ok(())
        );
    }
}
