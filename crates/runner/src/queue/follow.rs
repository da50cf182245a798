//! Following a run's events (`RunService::follow`): subscribe to the run's live channel
//! first, replay the store after the given sequence number, then follow the channel,
//! skipping what was already sent. A follower that lags behind re-reads the gap from the
//! store: the run is never slowed. A run executed by another process is followed in the
//! store. The feed ends after the run's final event (`run_completed` / `run_failed`), or
//! with why the run stopped without one (docs/scaling.md).

use std::time::Duration;

use tokio::sync::{broadcast, mpsc};

use domain::model::event::Event;
use domain::ports::{Change, RunStatus};

use super::{dispatch, Phase, QueueRunner};
use crate::service::{
    store_error, unknown_run, Caller, FeedItem, RunFeed, RunServiceError, RunStopped, Scope,
    QUEUED_CANCEL,
};

type State = std::sync::Arc<QueueRunner>;

/// Items buffered per follower before the producer waits for it.
const FOLLOWER_BUFFER: usize = 64;
/// How long the producer waits for a follower whose buffer is full before dropping it (an
/// SSE client reconnects with `Last-Event-ID` and misses nothing).
const SLOW_FOLLOWER: Duration = Duration::from_secs(30);

/// How long a feed waits for a live event (or, for a run executed elsewhere, for the store
/// to say it changed) before it reads the store: the store is the truth, the live channel
/// only the fast path of runs this process executes.
pub(crate) const STORE_POLL: Duration = Duration::from_millis(500);

/// The feed of `run_id`'s events after sequence number `after`, for `caller`.
pub(crate) async fn follow(
    state: &State,
    caller: &Caller,
    run_id: &str,
    after: u64,
) -> Result<RunFeed, RunServiceError> {
    caller.require(Scope::Read)?;
    // Another client's run is unknown, whether or not this process executes it.
    if !caller.is_admin() {
        state.visible(caller, run_id).await?;
    }
    // Subscribe before reading the store so that nothing falls between the two.
    let live = state
        .with_registry(|reg| {
            reg.runs.get(run_id).map(|e| {
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
                .get_run(run_id)
                .await
                .map_err(store_error)?
                .ok_or_else(|| unknown_run(run_id))?;
            match record.status {
                // Queued before this process started: follow it from its first event.
                RunStatus::Queued => (
                    dispatch::channel_for(state, &record).map(|tx| tx.subscribe()),
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
    let (tx, out) = mpsc::channel::<FeedItem>(FOLLOWER_BUFFER);
    tokio::spawn(produce(
        state.clone(),
        run_id.to_string(),
        rx,
        phase,
        after,
        tx,
    ));
    Ok(RunFeed::new(out))
}

/// What the producer should do after sending a batch.
enum Next {
    Continue,
    /// The final event went out, or the follower left.
    Stop,
}

struct Producer {
    state: State,
    run_id: String,
    last: u64,
    out: mpsc::Sender<FeedItem>,
}

impl Producer {
    async fn send(&mut self, e: &Event) -> Next {
        if e.seq <= self.last {
            return Next::Continue;
        }
        match tokio::time::timeout(
            SLOW_FOLLOWER,
            self.out.send(FeedItem::Event(Box::new(e.clone()))),
        )
        .await
        {
            Ok(Ok(())) => {}
            // The follower left.
            Ok(Err(_)) => return Next::Stop,
            Err(_) => {
                tracing::info!(run_id = %self.run_id, seq = e.seq, "dropping an event follower that fell behind");
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

    /// Why the run stopped without a final event (cancelled while queued, or it could not
    /// run), when it did.
    async fn explain(&mut self, phase: Option<Phase>) {
        let stopped = match phase {
            Some(Phase::Cancelled) => RunStopped::CancelledBeforeStart,
            Some(Phase::Errored(m)) => RunStopped::Errored(m),
            _ => return,
        };
        let _ = self.out.send(FeedItem::Stopped(stopped)).await;
    }

    /// Follows a run that another process executes through the store, until its final
    /// event or until the follower goes away.
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
        let events = match self.state.store.events(&self.run_id, self.last).await {
            Ok(ev) => ev,
            Err(e) => {
                tracing::error!(run_id = %self.run_id, error = %e, "cannot replay events");
                let _ = self.out.send(FeedItem::Unreadable(store_error(e))).await;
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
    out: mpsc::Sender<FeedItem>,
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
                    tracing::debug!(run_id = %p.run_id, skipped = n, "follower lagged; replaying from the store");
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

    fn event(seq: u64, last: u64) -> Event {
        Event {
            run_id: "run_1".into(),
            seq,
            at: chrono::Utc::now(),
            kind: if seq == last {
                EventKind::RunCompleted {
                    summary: "done".into(),
                    usage: RunUsage::default(),
                    verified: false,
                }
            } else {
                EventKind::Message {
                    step_id: None,
                    text: format!("event {seq}"),
                }
            },
        }
    }

    /// A follower that stops reading is dropped after `SLOW_FOLLOWER` instead of holding
    /// the producer (and its buffered items) forever.
    #[tokio::test(start_paused = true)]
    async fn a_follower_that_stops_reading_is_dropped() {
        let store = store_with_a_run().await;
        for seq in 1..=100 {
            store.append_event(&event(seq, 1000)).await.expect("append");
        }
        let (out_tx, out_rx) = mpsc::channel(4);
        let producer = tokio::spawn(produce(
            super::super::tests::runner_over(store),
            "run_1".into(),
            None,
            Some(Phase::Active),
            0,
            out_tx,
        ));
        producer
            .await
            .expect("the producer gives up on the follower");
        assert!(out_rx.len() <= 4, "only the follower's buffer was filled");
    }

    /// A follower that reads nothing while a run publishes far more than the live channel
    /// holds: publishing never waits, and the follower still gets every event exactly once.
    #[tokio::test]
    async fn a_lagging_follower_catches_up_from_the_store_without_slowing_the_run() {
        let store = store_with_a_run().await;
        let (tx, rx) = broadcast::channel::<Event>(8);
        let (out_tx, mut out_rx) = mpsc::channel(4);
        let producer = tokio::spawn(produce(
            super::super::tests::runner_over(store.clone()),
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
        let mut seqs = Vec::new();
        while let Some(item) = out_rx.recv().await {
            match item {
                FeedItem::Event(e) => seqs.push(e.seq),
                other => panic!("only events expected, got {other:?}"),
            }
        }
        assert_eq!(
            seqs,
            (1..=total).collect::<Vec<_>>(),
            "each event once, in order"
        );
        producer.await.expect("producer ends");
    }
}
