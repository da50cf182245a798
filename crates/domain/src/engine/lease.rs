//! Run ownership: how the caller stops a run ([`RunControl`]) and how a running run keeps
//! its lease in the store (`keep`).
//!
//! A run is owned by whoever holds its lease (docs/durability.md, "Leases"). The owner
//! renews the lease every third of its time to live; when a renewal finds the lease taken by
//! someone else, the run is *suspended*: it starts no new work, writes nothing more, and
//! `Runtime::run` ends with [`Error::LeaseLost`](crate::Error::LeaseLost).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio_util::sync::CancellationToken;

use crate::ports::{Clock, RunStore};

/// How the caller stops a run.
///
/// - `cancel`: the run ends now, `failed` with "the run was cancelled" (resumable).
/// - `suspend`: the run stops at its next safe point (before it starts a step, a tool call
///   or an LLM call; calls under way finish and are journaled), writes no outcome, keeps its
///   status and gives its lease up, so another process resumes it where it stopped
///   (a server shutting down, a worker told to stop).
#[derive(Debug, Clone, Default)]
pub struct RunControl {
    pub cancel: CancellationToken,
    pub suspend: CancellationToken,
}

impl RunControl {
    /// A control that only cancels.
    pub fn cancel_only(cancel: CancellationToken) -> RunControl {
        RunControl {
            cancel,
            suspend: CancellationToken::new(),
        }
    }
}

/// The lease settings of a runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseConfig {
    /// This process's owner id: unique across hosts and restarts (the app builds it from the
    /// host, the process and its start time).
    pub owner: String,
    /// How long a lease lasts without renewal; renewed every third of it.
    pub ttl: Duration,
}

impl Default for LeaseConfig {
    fn default() -> Self {
        LeaseConfig {
            owner: format!("pid:{}", std::process::id()),
            ttl: Duration::from_secs(30),
        }
    }
}

impl LeaseConfig {
    /// The expiry of a lease taken or renewed at `now`.
    pub fn until(&self, now: DateTime<Utc>) -> DateTime<Utc> {
        let ttl = chrono::Duration::from_std(self.ttl).unwrap_or(chrono::Duration::seconds(30));
        now + ttl
    }
}

/// Renews the lease of `run_id` until dropped. When the lease turns out to be someone
/// else's, sets `lost`, fires `suspend` and waits forever (the caller's run ends by itself).
/// A store failure is logged and retried at the next tick: if the store stays away, the
/// lease expires and the run is handed on, which the next successful renewal reports.
pub(crate) async fn keep(
    store: Arc<dyn RunStore>,
    clock: Arc<dyn Clock>,
    config: LeaseConfig,
    run_id: String,
    suspend: CancellationToken,
    lost: Arc<AtomicBool>,
) {
    let every = (config.ttl / 3).max(Duration::from_millis(10));
    loop {
        tokio::time::sleep(every).await;
        let until = config.until(clock.now());
        match store.renew_lease(&run_id, &config.owner, until).await {
            Ok(true) => tracing::trace!(run_id, "lease renewed"),
            Ok(false) => {
                tracing::warn!(run_id, "the run's lease was taken over; suspending the run");
                lost.store(true, Ordering::SeqCst);
                suspend.cancel();
                std::future::pending::<()>().await;
            }
            Err(e) => tracing::warn!(run_id, error = %e, "cannot renew the run's lease"),
        }
    }
}
