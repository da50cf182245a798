//! Waiting for a run to settle (end, or stop for an answer) while its events are followed
//! (the runner's `RunService`), reporting its plan's progress as MCP progress notifications.

use std::time::Duration;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::Peer;
use rmcp::RoleServer;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::super::error::ApiError;
use super::super::{runs, State};
use runner::service::{Caller, RunFeed};

/// How long a wait goes without reading the run's progress when nothing wakes it.
const PROGRESS_POLL: Duration = Duration::from_millis(500);

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
/// its request; the run goes on), then shows it as [`runs::show`] does. The run's event
/// feed wakes the wait at each event; its progress is read again then, and at least every
/// [`PROGRESS_POLL`] (a lease that expires says nothing in the feed).
pub async fn until_settled(
    state: &State,
    client: &Caller,
    run_id: &str,
    stop: &CancellationToken,
    progress: Option<ProgressTarget>,
) -> Result<Value, ApiError> {
    let mut reported = progress.map(|target| Reported {
        target,
        last: None,
        progress: 0.0,
    });
    // Another client's run is unknown before anything of it is shown or waited on.
    let mut feed = Some(state.service.follow(client, run_id, 0).await?);
    loop {
        let now = state.service.progress(client, run_id).await?;
        if let Some(r) = reported.as_mut() {
            r.report(now.done, now.total, now.message.clone()).await;
        }
        if now.settled {
            return runs::show(&*state.service, client, run_id).await;
        }
        tokio::select! {
            () = tokio::time::sleep(PROGRESS_POLL) => {}
            () = next_item(&mut feed) => {}
            () = stop.cancelled() => {
                return Err(ApiError::Conflict(format!(
                    "the wait was cancelled; run '{run_id}' goes on (get_run shows it)"
                )))
            }
        }
    }
}

/// Returns at the feed's next item, having taken every item already there too (or when it
/// ends, then never again): the feed starts with the run's whole stored log, and the wait
/// reads the run's progress once per wake, not once per stored event.
async fn next_item(feed: &mut Option<RunFeed>) {
    let Some(items) = feed.as_mut() else {
        return std::future::pending().await;
    };
    if items.next().await.is_none() || items.skip_ready() {
        *feed = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::FutureExt as _;
    use runner::service::{FeedItem, RunStopped};

    #[tokio::test]
    async fn one_wake_takes_every_item_already_there() {
        let (tx, rx) = tokio::sync::mpsc::channel(2000);
        for _ in 0..1000 {
            tx.send(FeedItem::Stopped(RunStopped::CancelledBeforeStart))
                .await
                .unwrap();
        }
        let mut feed = Some(RunFeed::new(rx));
        next_item(&mut feed).await;
        let items = feed.as_mut().expect("the feed goes on");
        assert!(
            items.next().now_or_never().is_none(),
            "all 1000 stored items were taken in one wake"
        );
        tx.send(FeedItem::Stopped(RunStopped::CancelledBeforeStart))
            .await
            .unwrap();
        drop(tx);
        next_item(&mut feed).await;
        assert!(feed.is_none(), "the feed ended");
    }
}
