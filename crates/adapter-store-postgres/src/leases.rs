//! Run leases and the work queue (docs/durability.md, "Leases" and "The work queue").
//!
//! Every lease decision is one `UPDATE ... WHERE <the lease is free or ours>`: PostgreSQL
//! locks the row, and a second updater waiting on that lock re-checks the condition against
//! the row the first one committed, so of several processes racing for one run exactly one
//! changes it. A claim picks its run with `SELECT ... FOR UPDATE SKIP LOCKED` in the same
//! transaction as the lease it writes: concurrent claimers never wait for each other and
//! never get the same run. Times compare as `COLLATE "C"` text, which is time order
//! (`store_sql::codec`).

use chrono::{DateTime, Utc};
use deadpool_postgres::Object;
use domain::ports::{Lease, LeaseClaim, LeaseOutcome, QueueWaiting, RunRecord, RunStatus};

use store_sql::codec::{time_from_sql, time_to_sql};
use store_sql::queue::{lease_free as free, position_sql, CLAIM_ORDER, WAITING_SQL};
use store_sql::runs::RUN_COLUMNS;

use crate::error::{sql, Error};
use crate::runs::record_from_row;

/// How often `acquire` tries again when the lease it was refused turns out free (released
/// between the refusal and the look).
const ACQUIRE_ATTEMPTS: usize = 3;

pub(crate) async fn acquire(
    client: &Object,
    run_id: &str,
    claim: &LeaseClaim,
) -> Result<LeaseOutcome, Error> {
    let statement = format!(
        "UPDATE runs SET lease_owner = $1, lease_until = $2
         WHERE run_id = $3 AND ({} OR lease_owner = $1 OR lease_owner = $5)",
        free("$4")
    );
    let until = time_to_sql(&claim.until);
    let now = time_to_sql(&claim.now);
    for _ in 0..ACQUIRE_ATTEMPTS {
        let changed = client
            .execute(
                &statement,
                &[&claim.owner, &until, &run_id, &now, &claim.stale_owner],
            )
            .await
            .map_err(sql("acquire run lease"))?;
        if changed == 1 {
            return Ok(LeaseOutcome::Acquired);
        }
        match read_lease(client, run_id).await? {
            None => return Ok(LeaseOutcome::Unknown),
            Some(Some(lease)) if lease.until > claim.now => return Ok(LeaseOutcome::Held(lease)),
            // Released or expired meanwhile: try again.
            Some(_) => continue,
        }
    }
    Ok(LeaseOutcome::Held(Lease {
        owner: "an unknown process".to_string(),
        until: claim.until,
    }))
}

/// `None`: no such run; `Some(None)`: nobody holds it.
async fn read_lease(client: &Object, run_id: &str) -> Result<Option<Option<Lease>>, Error> {
    let row = client
        .query_opt(
            "SELECT lease_owner, lease_until FROM runs WHERE run_id = $1",
            &[&run_id],
        )
        .await
        .map_err(sql("read run lease"))?;
    let Some(row) = row else { return Ok(None) };
    let owner: Option<String> = row.try_get(0).map_err(sql("read run lease"))?;
    let until: Option<String> = row.try_get(1).map_err(sql("read run lease"))?;
    match (owner, until) {
        (Some(owner), Some(until)) => Ok(Some(Some(Lease {
            owner,
            until: time_from_sql("run lease_until", &until)?,
        }))),
        _ => Ok(Some(None)),
    }
}

pub(crate) async fn renew(
    client: &Object,
    run_id: &str,
    owner: &str,
    until: DateTime<Utc>,
) -> Result<bool, Error> {
    let changed = client
        .execute(
            "UPDATE runs SET lease_until = $3 WHERE run_id = $1 AND lease_owner = $2",
            &[&run_id, &owner, &time_to_sql(&until)],
        )
        .await
        .map_err(sql("renew run lease"))?;
    Ok(changed == 1)
}

pub(crate) async fn release(client: &Object, run_id: &str, owner: &str) -> Result<(), Error> {
    client
        .execute(
            "UPDATE runs SET lease_owner = NULL, lease_until = NULL
             WHERE run_id = $1 AND lease_owner = $2",
            &[&run_id, &owner],
        )
        .await
        .map_err(sql("release run lease"))?;
    Ok(())
}

/// Claims the next run for `owner`: an interrupted queue run first (it was somebody's
/// already), then the oldest queued one; rows other claimers have locked are skipped.
pub(crate) async fn claim(
    client: &mut Object,
    owner: &str,
    now: DateTime<Utc>,
    until: DateTime<Utc>,
) -> Result<Option<RunRecord>, Error> {
    let now = time_to_sql(&now);
    let tx = client.transaction().await.map_err(sql("begin claim"))?;
    let mut picked = None;
    for condition in CLAIM_ORDER {
        let row = tx
            .query_opt(
                &format!(
                    "SELECT run_id FROM runs WHERE {condition} AND {}
                     ORDER BY created_at, run_id LIMIT 1
                     FOR UPDATE SKIP LOCKED",
                    free("$1")
                ),
                &[&now],
            )
            .await
            .map_err(sql("find a run to claim"))?;
        if let Some(row) = row {
            picked = Some(
                row.try_get::<_, String>(0)
                    .map_err(sql("find a run to claim"))?,
            );
            break;
        }
    }
    let Some(run_id) = picked else {
        return Ok(None);
    };
    let row = tx
        .query_one(
            &format!(
                "UPDATE runs SET lease_owner = $2, lease_until = $3 WHERE run_id = $1
                 RETURNING {RUN_COLUMNS}"
            ),
            &[&run_id, &owner, &time_to_sql(&until)],
        )
        .await
        .map_err(sql("claim run"))?;
    let record = record_from_row(&row)?;
    tx.commit().await.map_err(sql("commit claim"))?;
    Ok(Some(record))
}

pub(crate) async fn cancel_queued(
    client: &Object,
    run_id: &str,
    error: &str,
    now: DateTime<Utc>,
) -> Result<bool, Error> {
    let changed = client
        .execute(
            &format!(
                "UPDATE runs SET status = $2, error = $3, finished_at = $4
                 WHERE run_id = $1 AND status = $5 AND {}",
                free("$4")
            ),
            &[
                &run_id,
                &RunStatus::Failed.as_str(),
                &crate::codec::text_to_sql(error),
                &time_to_sql(&now),
                &RunStatus::Queued.as_str(),
            ],
        )
        .await
        .map_err(sql("cancel queued run"))?;
    Ok(changed == 1)
}

/// The queued runs' count and oldest creation time (`store_sql::queue::WAITING_SQL`).
pub(crate) async fn waiting(client: &Object) -> Result<QueueWaiting, Error> {
    let row = client
        .query_one(WAITING_SQL, &[])
        .await
        .map_err(sql("read the queue"))?;
    let count: i64 = row.try_get(0).map_err(sql("read the queue"))?;
    let oldest: Option<String> = row.try_get(1).map_err(sql("read the queue"))?;
    Ok(QueueWaiting {
        count: usize::try_from(count).unwrap_or(0),
        oldest: oldest
            .map(|t| time_from_sql("run created_at", &t))
            .transpose()?,
    })
}

/// The run's place in the queue (`store_sql::queue::position_sql`).
pub(crate) async fn position(client: &Object, run_id: &str) -> Result<Option<usize>, Error> {
    let row = client
        .query_opt(&position_sql("$1"), &[&run_id])
        .await
        .map_err(sql("read queue position"))?;
    let Some(row) = row else { return Ok(None) };
    let n: i64 = row.try_get(0).map_err(sql("read queue position"))?;
    Ok(usize::try_from(n).ok())
}
