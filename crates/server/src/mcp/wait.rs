//! Waiting for a run to settle (end, or stop for an answer) while it is followed in the
//! store, reporting its plan's progress as MCP progress notifications.

use std::time::Duration;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::Peer;
use rmcp::RoleServer;
use serde_json::Value;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use domain::model::event::Event;
use domain::ports::{Change, RunStatus};

use super::super::error::{store_error, unknown_run, ApiError};
use super::super::{runs, Phase, State};
use runner::service::{Caller, Scope};

/// How long a wait goes without reading the store when nothing wakes it (the store is the
/// truth; its change feed is only the fast path).
const STORE_POLL: Duration = Duration::from_millis(500);

/// Where a client wants its progress notifications: the peer and its `progressToken`.
pub struct ProgressTarget {
    pub peer: Peer<RoleServer>,
    pub token: ProgressToken,
}

/// What was last reported, to send a notification only when something moved.
struct Reported {
    target: ProgressTarget,
    last: Option<(usize, usize, String)>,
    progress: f64,
}

impl Reported {
    /// Steps settled of all steps, and the step under way.
    async fn report(&mut self, done: usize, total: usize, message: String) {
        let now = (done, total, message);
        if self.last.as_ref() == Some(&now) {
            return;
        }
        // Progress must grow: a re-plan that drops settled steps does not move it back.
        self.progress = self.progress.max(now.0 as f64);
        let param = ProgressNotificationParam::new(self.target.token.clone(), self.progress)
            .with_total(now.1.max(now.0) as f64)
            .with_message(now.2.clone());
        if let Err(e) = self.target.peer.notify_progress(param).await {
            tracing::debug!(error = %e, "cannot send a progress notification");
        }
        self.last = Some(now);
    }
}

/// Waits until `run_id` ended or waits for an answer (or `stop` fires: the client cancelled
/// its request; the run goes on), then shows it as [`runs::show`] does.
pub async fn until_settled(
    state: &State,
    client: &Caller,
    run_id: &str,
    stop: &CancellationToken,
    progress: Option<ProgressTarget>,
) -> Result<Value, ApiError> {
    // Another client's run is unknown before anything of it is shown or waited on.
    client.require(Scope::Read)?;
    runs::visible(state, client, run_id).await?;
    let mut reported = progress.map(|target| Reported {
        target,
        last: None,
        progress: 0.0,
    });
    // A run executed here wakes the wait at each event; the store is read either way.
    let mut live = state
        .with_registry(|r| {
            r.runs
                .get(run_id)
                .and_then(|e| e.events.as_ref().map(broadcast::Sender::subscribe))
        })
        .flatten();
    loop {
        // Watching before reading: what is appended meanwhile wakes the watch.
        let mut appended = state.changes.watch(run_id, Change::Events);
        let glance = glance(state, run_id).await?;
        if let Some(r) = reported.as_mut() {
            r.report(glance.done, glance.total, glance.message.clone())
                .await;
        }
        if glance.settled {
            return runs::show(&*state.service, client, run_id).await;
        }
        tokio::select! {
            _ = appended.changed(STORE_POLL) => {}
            () = next_event(&mut live) => {}
            () = stop.cancelled() => {
                return Err(ApiError::Conflict(format!(
                    "the wait was cancelled; run '{run_id}' goes on (get_run shows it)"
                )))
            }
        }
    }
}

/// Returns at the run's next live event (or when its channel closes, then never again);
/// never without a channel.
async fn next_event(live: &mut Option<broadcast::Receiver<Event>>) {
    let Some(rx) = live.as_mut() else {
        return std::future::pending().await;
    };
    if let Err(broadcast::error::RecvError::Closed) = rx.recv().await {
        *live = None;
    }
}

/// Where a run stands, read cheaply (record and latest plan, not the event log).
struct Glance {
    settled: bool,
    done: usize,
    total: usize,
    message: String,
}

async fn glance(state: &State, run_id: &str) -> Result<Glance, ApiError> {
    let Some(run) = state.store.get_run(run_id).await.map_err(store_error)? else {
        return Err(unknown_run(run_id));
    };
    let liveness = runner::liveness::Liveness::of(&run);
    // A run executed here waits when its question is pending here (the store may still say
    // `waiting` just after an answer); one executed elsewhere when the store says so.
    let local = state
        .with_registry(|r| r.runs.get(run_id).is_some_and(|e| e.phase == Phase::Active))
        .unwrap_or(false);
    let asks = if local {
        state.user.question(run_id).is_some() || state.user.approval(run_id).is_some()
    } else {
        run.status == RunStatus::Waiting
    };
    let settled = matches!(run.status, RunStatus::Completed | RunStatus::Failed)
        || liveness.is_interrupted()
        || asks
        || runs::errored(state, run_id).is_some();
    let plan = state.store.latest_plan(run_id).await.map_err(store_error)?;
    let Some(plan) = plan else {
        let message = match run.status {
            RunStatus::Queued => "queued",
            _ => "planning",
        };
        return Ok(Glance {
            settled,
            done: 0,
            total: 0,
            message: message.to_string(),
        });
    };
    let steps = plan.steps();
    let done = steps.iter().filter(|s| s.status().is_terminal()).count();
    let current = steps
        .iter()
        .enumerate()
        .find(|(_, s)| !s.status().is_terminal());
    let message = match current {
        _ if settled => format!(
            "{}: {done} of {} steps settled",
            liveness.shown(),
            steps.len()
        ),
        Some((i, s)) => format!("step {} of {}: {}", i + 1, steps.len(), s.description),
        None => "summarising".to_string(),
    };
    Ok(Glance {
        settled,
        done,
        total: steps.len(),
        message,
    })
}
