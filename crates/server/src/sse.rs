//! `GET /v1/runs/{id}/events`: every event of a run as Server-Sent Events.
//!
//! The handler subscribes to the run's live channel first, then replays the store after
//! `Last-Event-ID` (or `?after=`), then follows the channel, skipping what it already sent.
//! A listener that lags behind re-reads the gap from the store: the run is never slowed.
//! The stream ends after the run's final event (`run_completed` / `run_failed`).

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::{Path as UrlPath, Query, State as Ext};
use axum::http::HeaderMap;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use domain::model::event::Event;
use futures_util::stream::Stream;
use serde::Deserialize;
use tokio::sync::{broadcast, mpsc};

use domain::ports::{Change, RunStatus};

use super::error::ApiError;
use super::runs::QUEUED_CANCEL;
use super::{Phase, State};
use runner::service::{Caller, Scope};

/// Frames buffered per connection before the producer waits for the client.
const CONNECTION_BUFFER: usize = 64;
/// How long the producer waits for a client whose buffer is full before dropping it (it
/// reconnects with `Last-Event-ID` and misses nothing).
const SLOW_CLIENT: Duration = Duration::from_secs(30);

#[derive(Debug, Deserialize)]
pub struct EventsQuery {
    /// Replay after this sequence number (same as `Last-Event-ID`).
    #[serde(default)]
    after: Option<u64>,
}

/// How long a stream waits for a live event (or, for a run executed elsewhere, for the
/// store to say it changed) before it reads the store: the store is the truth, the live
/// channel only the fast path of runs this process executes.
const STORE_POLL: Duration = Duration::from_millis(500);

pub async fn events(
    Ext(state): Ext<State>,
    Extension(client): Extension<Caller>,
    UrlPath(run_id): UrlPath<String>,
    Query(query): Query<EventsQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    client.require(Scope::Read)?;
    // Another client's run is unknown (404), whether or not this process executes it.
    if !client.is_admin() {
        super::runs::visible(&state, &client, &run_id).await?;
    }
    let last_event_id = match headers.get("last-event-id") {
        Some(v) => Some(
            v.to_str()
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok())
                .ok_or_else(|| {
                    ApiError::BadRequest("Last-Event-ID must be an event sequence number".into())
                })?,
        ),
        None => None,
    };
    let after = last_event_id.or(query.after).unwrap_or(0);
    // Subscribe before reading the store so that nothing falls between the two.
    let live = state
        .with_registry(|reg| {
            reg.runs.get(&run_id).map(|e| {
                (
                    e.events.as_ref().map(broadcast::Sender::subscribe),
                    e.phase.clone(),
                )
            })
        })
        .flatten();
    let (rx, phase) = match live {
        Some((rx, phase)) => (rx, Some(phase)),
        None => {
            let record = state
                .store
                .get_run(&run_id)
                .await
                .map_err(super::error::store_error)?
                .ok_or_else(|| ApiError::NotFound(format!("no run with id '{run_id}'")))?;
            match record.status {
                // Queued before this process started: follow it from its first event.
                RunStatus::Queued => (
                    super::dispatch::channel_for(&state.runner, &record).map(|tx| tx.subscribe()),
                    Some(Phase::Queued),
                ),
                RunStatus::Failed if record.error.as_deref() == Some(QUEUED_CANCEL) => {
                    (None, Some(Phase::Cancelled))
                }
                // Running in another process (a worker, another server): followed in the
                // store.
                RunStatus::Running | RunStatus::Waiting => (None, Some(Phase::Elsewhere)),
                _ => (None, None),
            }
        }
    };
    let (tx, out) = mpsc::channel::<SseEvent>(CONNECTION_BUFFER);
    tokio::spawn(produce(state, run_id, rx, phase, after, tx));
    let stream = receiver_stream(out);
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response())
}

fn receiver_stream(
    mut rx: mpsc::Receiver<SseEvent>,
) -> impl Stream<Item = Result<SseEvent, Infallible>> {
    futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx).map(|o| o.map(Ok)))
}

fn frame(e: &Event) -> SseEvent {
    let data = serde_json::to_string(e).unwrap_or_else(|_| "{}".to_string());
    SseEvent::default()
        .id(e.seq.to_string())
        .event(e.kind.name())
        .data(data)
}

/// What the producer should do after sending a batch.
enum Next {
    Continue,
    /// The final event went out, or the client left.
    Stop,
}

struct Producer {
    state: State,
    run_id: String,
    last: u64,
    out: mpsc::Sender<SseEvent>,
}

impl Producer {
    async fn send(&mut self, e: &Event) -> Next {
        if e.seq <= self.last {
            return Next::Continue;
        }
        match tokio::time::timeout(SLOW_CLIENT, self.out.send(frame(e))).await {
            Ok(Ok(())) => {}
            // The client left.
            Ok(Err(_)) => return Next::Stop,
            Err(_) => {
                tracing::info!(run_id = %self.run_id, seq = e.seq, "dropping an event stream client that fell behind");
                return Next::Stop;
            }
        }
        self.last = e.seq;
        if e.kind.is_final() {
            Next::Stop
        } else {
            Next::Continue
        }
    }

    /// A closing `run_cancelled` / `run_error` event (not a domain event: no id) for a run
    /// that was cancelled while queued or stopped without a final event.
    async fn explain(&mut self, phase: Option<Phase>) {
        let (kind, message) = match phase {
            Some(Phase::Cancelled) => (
                "run_cancelled",
                "the run was cancelled before it started".to_string(),
            ),
            Some(Phase::Errored(m)) => ("run_error", m),
            _ => return,
        };
        let data = serde_json::json!({"run_id": self.run_id, "message": message}).to_string();
        let _ = self
            .out
            .send(SseEvent::default().event(kind).data(data))
            .await;
    }

    /// Follows a run that another process executes through the store, until its final
    /// event or until the client goes away.
    async fn follow_store(&mut self) {
        let mut appended = self.state.changes.watch(&self.run_id, Change::Events);
        loop {
            // Watching before reading: what is appended meanwhile wakes the watch.
            if let Next::Stop = self.catch_up().await {
                return;
            }
            tokio::select! {
                _ = appended.changed(STORE_POLL) => {}
                _ = self.out.closed() => return,
            }
        }
    }

    /// Sends what the store has after the last event sent.
    async fn catch_up(&mut self) -> Next {
        let events =
            match self.state.store.events(&self.run_id, self.last).await {
                Ok(ev) => ev,
                Err(e) => {
                    tracing::error!(run_id = %self.run_id, error = %e, "cannot replay events");
                    let _ = self
                    .out
                    .send(SseEvent::default().event("stream_error").data(
                        serde_json::json!({"error": super::error::store_error(e).to_string()})
                            .to_string(),
                    ))
                    .await;
                    return Next::Stop;
                }
            };
        for e in &events {
            if let Next::Stop = self.send(e).await {
                return Next::Stop;
            }
        }
        Next::Continue
    }
}

async fn produce(
    state: State,
    run_id: String,
    rx: Option<broadcast::Receiver<Event>>,
    phase: Option<Phase>,
    after: u64,
    out: mpsc::Sender<SseEvent>,
) {
    let mut p = Producer {
        state,
        run_id,
        last: after,
        out,
    };
    if phase == Some(Phase::Elsewhere) {
        p.follow_store().await;
        return;
    }
    if let Next::Stop = p.catch_up().await {
        return;
    }
    let Some(mut rx) = rx else {
        // A finished run (replayed), or one that never ran or stopped short: say why.
        p.explain(phase).await;
        return;
    };
    loop {
        let next = tokio::select! {
            // Quiet for a while: the run may be running in another process (queued here,
            // claimed by a worker), whose events only the store has.
            _ = tokio::time::sleep(STORE_POLL) => p.catch_up().await,
            r = rx.recv() => match r {
                Ok(e) if e.seq > p.last + 1 => p.catch_up().await,
                Ok(e) => p.send(&e).await,
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    tracing::debug!(run_id = %p.run_id, skipped = n, "listener lagged; replaying from the store");
                    p.catch_up().await
                }
                Err(broadcast::error::RecvError::Closed) => {
                    // Nothing more will be published: send what the store has, then why
                    // the run stopped when it stopped without a final event.
                    if let Next::Continue = p.catch_up().await {
                        let phase = p
                            .state
                            .with_registry(|reg| reg.runs.get(&p.run_id).map(|e| e.phase.clone()))
                            .flatten();
                        p.explain(phase).await;
                    }
                    Next::Stop
                }
            },
            _ = p.out.closed() => Next::Stop,
        };
        if let Next::Stop = next {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use domain::model::event::{EventKind, RunUsage};
    use domain::ports::RunStore;
    use domain::testing::runs::run_record;
    use domain::testing::MemoryStore;

    use super::*;

    /// A store holding run `run_1`, its event log empty.
    async fn store_with_a_run() -> Arc<MemoryStore> {
        let store = Arc::new(MemoryStore::new());
        store
            .create_run(&run_record("run_1"))
            .await
            .expect("create run");
        store
    }

    use super::super::test_state as state;

    fn event(seq: u64, last: u64) -> Event {
        Event {
            run_id: "run_1".into(),
            seq,
            at: chrono::Utc::now(),
            kind: if seq == last {
                EventKind::RunCompleted {
                    summary: "done".into(),
                    usage: RunUsage::default(),
                }
            } else {
                EventKind::Message {
                    step_id: None,
                    text: format!("event {seq}"),
                }
            },
        }
    }

    /// A client that stops reading is dropped after `SLOW_CLIENT` instead of holding the
    /// producer (and its buffered frames) forever.
    #[tokio::test(start_paused = true)]
    async fn a_client_that_stops_reading_is_dropped() {
        let store = store_with_a_run().await;
        for seq in 1..=100 {
            store.append_event(&event(seq, 1000)).await.expect("append");
        }
        let (out_tx, out_rx) = mpsc::channel(4);
        let producer = tokio::spawn(produce(
            state(store),
            "run_1".into(),
            None,
            Some(Phase::Active),
            0,
            out_tx,
        ));
        producer.await.expect("the producer gives up on the client");
        assert!(out_rx.len() <= 4, "only the client's buffer was filled");
    }

    /// A client that reads nothing while a run publishes far more than the live channel
    /// holds: publishing never waits, and the client still gets every event exactly once.
    #[tokio::test]
    async fn a_lagging_listener_catches_up_from_the_store_without_slowing_the_run() {
        let store = store_with_a_run().await;
        let (tx, rx) = broadcast::channel::<Event>(8);
        let (out_tx, mut out_rx) = mpsc::channel(4);
        let producer = tokio::spawn(produce(
            state(store.clone()),
            "run_1".into(),
            Some(rx),
            Some(Phase::Active),
            0,
            out_tx,
        ));
        let total = 500;
        let started = std::time::Instant::now();
        for seq in 1..=total {
            let e = event(seq, total);
            store.append_event(&e).await.expect("append");
            let _ = tx.send(e);
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        drop(tx);
        let mut got = 0;
        while let Some(_frame) = out_rx.recv().await {
            got += 1;
        }
        assert_eq!(got, total);
        producer.await.expect("producer ends");
    }
}
