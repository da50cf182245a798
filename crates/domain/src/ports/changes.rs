//! The change-feed port: wake-ups for whoever follows a run through the store (an event
//! stream served by one process while another executes the run, a run's owner reading its
//! mailbox), so they read the store when something was written instead of on a timer alone
//! (docs/scaling.md, "Event streams").
//!
//! The same feed wakes idle runners when a run is queued elsewhere ([`RunChanges::watch_queue`]).
//!
//! A wake-up is only a hint: callers read the store after every wake-up and every timeout,
//! and a store that cannot tell (SQLite shared by several processes) only times out.

use std::time::Duration;

use async_trait::async_trait;

/// What was written for a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Change {
    /// An event was appended to the run's log.
    Events,
    /// A message was posted to the run's mailbox.
    Messages,
}

/// One caller's watch on one run: what is written after [`RunChanges::watch`] returned wakes
/// it.
#[async_trait]
pub trait ChangeWatch: Send {
    /// Waits until something was written, or `timeout` passed: true when woken by a write.
    async fn changed(&mut self, timeout: Duration) -> bool;
}

/// Where watches come from.
pub trait RunChanges: Send + Sync {
    fn watch(&self, run_id: &str, change: Change) -> Box<dyn ChangeWatch>;

    /// A watch on the work queue: woken when a run may have become claimable (queued, or
    /// its lease given up), so idle runners claim at once. Expired leases wake nobody:
    /// runners also claim on a timer.
    fn watch_queue(&self) -> Box<dyn ChangeWatch>;
}

/// A watch that only times out: for stores that cannot tell.
#[derive(Debug, Default)]
pub struct TimerWatch;

#[async_trait]
impl ChangeWatch for TimerWatch {
    async fn changed(&mut self, timeout: Duration) -> bool {
        tokio::time::sleep(timeout).await;
        false
    }
}
