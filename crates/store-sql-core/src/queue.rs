//! The work queue and run leases as both stores keep them in `runs` (docs/durability.md,
//! "Leases" and "The work queue"): the SQL conditions, with the placeholder of each store's
//! dialect passed in, and a run as `WorkQueue::enqueue` stores it.

use domain::ports::{RunRecord, RunStatus};

/// The condition (on `runs`) of a lease nobody holds, or whose time is over; `now` is the
/// placeholder of "now" (`:now`, `$1`). Times compare as text, which is time order
/// ([`crate::codec::time_to_sql`]).
pub fn lease_free(now: &str) -> String {
    format!("(lease_owner IS NULL OR lease_until IS NULL OR lease_until <= {now})")
}

/// What a claim takes, in this order: a queue run interrupted while running or waiting
/// (it was somebody's already), then a run waiting in the queue; the oldest first in each.
pub const CLAIM_ORDER: [&str; 2] = [
    "queue_request IS NOT NULL AND status IN ('running', 'waiting')",
    "status = 'queued'",
];

/// The statement giving a queued run's place in the queue (1 = next), no row when the run
/// is not waiting; `run_id` is the run id's placeholder (`?1`, `$1`). Claimed runs
/// (starting) are not waiting any more: only unclaimed ones count.
pub fn position_sql(run_id: &str) -> String {
    format!(
        "SELECT (SELECT COUNT(*) FROM runs AS o
                 WHERE o.status = 'queued' AND o.lease_owner IS NULL
                   AND (o.created_at < r.created_at
                        OR (o.created_at = r.created_at AND o.run_id <= r.run_id)))
         FROM runs AS r
         WHERE r.run_id = {run_id} AND r.status = 'queued' AND r.lease_owner IS NULL"
    )
}

/// The statement giving the number of `queued` runs and the oldest one's `created_at`
/// (`WorkQueue::waiting`): one row, the time NULL when none waits.
pub const WAITING_SQL: &str = "SELECT COUNT(*), MIN(created_at) FROM runs WHERE status = 'queued'";

/// `run` as `WorkQueue::enqueue` stores it: status `queued`, no lease.
pub fn queued(run: &RunRecord) -> RunRecord {
    let mut run = run.clone();
    run.status = RunStatus::Queued;
    run.lease = None;
    run
}
