//! Run leases and the work queue as blocking functions on a connection
//! (docs/durability.md, "Leases" and "The work queue").
//!
//! Every decision is one `UPDATE ... WHERE <the lease is free or ours>` inside a
//! `BEGIN IMMEDIATE` transaction: SQLite serialises writers, so of several processes racing
//! for one run exactly one sees its update change a row. Timestamps are compared as text,
//! which [`time_to_sql`] makes equal to time order.

use chrono::{DateTime, Utc};
use domain::ports::{Lease, LeaseClaim, LeaseOutcome, QueueWaiting, RunRecord, RunStatus};
use rusqlite::{params, Connection, OptionalExtension, Transaction};

use store_sql::codec::{time_from_sql, time_to_sql};
use store_sql::queue::{lease_free, position_sql, CLAIM_ORDER, WAITING_SQL};
use store_sql::runs::RUN_COLUMNS;

use crate::error::{sql, Error};
use crate::queries::{read_run_row, write_tx};

pub(crate) fn acquire(
    conn: &mut Connection,
    run_id: &str,
    claim: &LeaseClaim,
) -> Result<LeaseOutcome, Error> {
    let free = lease_free(":now");
    let tx = write_tx(conn)?;
    let changed = tx
        .execute(
            &format!(
                "UPDATE runs SET lease_owner = :owner, lease_until = :until
                 WHERE run_id = :run_id
                   AND ({free} OR lease_owner = :owner OR lease_owner = :stale)"
            ),
            rusqlite::named_params! {
                ":owner": claim.owner,
                ":until": time_to_sql(&claim.until),
                ":run_id": run_id,
                ":now": time_to_sql(&claim.now),
                ":stale": claim.stale_owner,
            },
        )
        .map_err(sql("acquire run lease"))?;
    let outcome = if changed == 1 {
        LeaseOutcome::Acquired
    } else {
        match read_lease(&tx, run_id)? {
            None => LeaseOutcome::Unknown,
            Some(Some(lease)) => LeaseOutcome::Held(lease),
            // Unreachable under the write lock (a free lease is taken above); say "unknown
            // holder" rather than pretend the caller won.
            Some(None) => LeaseOutcome::Held(Lease {
                owner: "an unknown process".to_string(),
                until: claim.until,
            }),
        }
    };
    tx.commit().map_err(sql("commit run lease"))?;
    Ok(outcome)
}

/// `None`: no such run; `Some(None)`: nobody holds it.
fn read_lease(tx: &Transaction<'_>, run_id: &str) -> Result<Option<Option<Lease>>, Error> {
    let row: Option<(Option<String>, Option<String>)> = tx
        .query_row(
            "SELECT lease_owner, lease_until FROM runs WHERE run_id = ?1",
            [run_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()
        .map_err(sql("read run lease"))?;
    row.map(|(owner, until)| match (owner, until) {
        (Some(owner), Some(until)) => Ok(Some(Lease {
            owner,
            until: time_from_sql("run lease_until", &until)?,
        })),
        _ => Ok(None),
    })
    .transpose()
}

pub(crate) fn renew(
    conn: &mut Connection,
    run_id: &str,
    owner: &str,
    until: DateTime<Utc>,
) -> Result<bool, Error> {
    let tx = write_tx(conn)?;
    let changed = tx
        .execute(
            "UPDATE runs SET lease_until = ?3 WHERE run_id = ?1 AND lease_owner = ?2",
            params![run_id, owner, time_to_sql(&until)],
        )
        .map_err(sql("renew run lease"))?;
    tx.commit().map_err(sql("commit lease renewal"))?;
    Ok(changed == 1)
}

pub(crate) fn release(conn: &mut Connection, run_id: &str, owner: &str) -> Result<(), Error> {
    let tx = write_tx(conn)?;
    tx.execute(
        "UPDATE runs SET lease_owner = NULL, lease_until = NULL
         WHERE run_id = ?1 AND lease_owner = ?2",
        params![run_id, owner],
    )
    .map_err(sql("release run lease"))?;
    tx.commit().map_err(sql("commit lease release"))
}

/// Claims the next run for `owner`: an interrupted queue run first (it was somebody's
/// already), then the oldest queued one.
pub(crate) fn claim(
    conn: &mut Connection,
    owner: &str,
    now: DateTime<Utc>,
    until: DateTime<Utc>,
) -> Result<Option<RunRecord>, Error> {
    let tx = write_tx(conn)?;
    let now_sql = time_to_sql(&now);
    let free = lease_free(":now");
    let pick = |condition: &str| -> Result<Option<String>, Error> {
        tx.query_row(
            &format!(
                "SELECT run_id FROM runs WHERE {condition} AND {free}
                 ORDER BY created_at, run_id LIMIT 1"
            ),
            rusqlite::named_params! {":now": now_sql},
            |r| r.get(0),
        )
        .optional()
        .map_err(sql("find a run to claim"))
    };
    let mut next = None;
    for condition in CLAIM_ORDER {
        next = pick(condition)?;
        if next.is_some() {
            break;
        }
    }
    let Some(run_id) = next else {
        return Ok(None);
    };
    tx.execute(
        "UPDATE runs SET lease_owner = ?2, lease_until = ?3 WHERE run_id = ?1",
        params![run_id, owner, time_to_sql(&until)],
    )
    .map_err(sql("claim run"))?;
    let record = tx
        .query_row(
            &format!("SELECT {RUN_COLUMNS} FROM runs WHERE run_id = ?1"),
            [&run_id],
            read_run_row,
        )
        .map_err(sql("read claimed run"))?
        .into_record()?;
    tx.commit().map_err(sql("commit claim"))?;
    Ok(Some(record))
}

pub(crate) fn cancel_queued(
    conn: &mut Connection,
    run_id: &str,
    error: &str,
    now: DateTime<Utc>,
) -> Result<bool, Error> {
    let tx = write_tx(conn)?;
    let changed = tx
        .execute(
            &format!(
                "UPDATE runs SET status = :failed, error = :error, finished_at = :now
                 WHERE run_id = :run_id AND status = :queued AND {}",
                lease_free(":now")
            ),
            rusqlite::named_params! {
                ":failed": RunStatus::Failed.as_str(),
                ":queued": RunStatus::Queued.as_str(),
                ":error": error,
                ":now": time_to_sql(&now),
                ":run_id": run_id,
            },
        )
        .map_err(sql("cancel queued run"))?;
    tx.commit().map_err(sql("commit queued run cancellation"))?;
    Ok(changed == 1)
}

/// The run's place in the queue (`store_sql::queue::position_sql`).
pub(crate) fn waiting(conn: &Connection) -> Result<QueueWaiting, Error> {
    let (count, oldest): (i64, Option<String>) = conn
        .query_row(WAITING_SQL, [], |r| Ok((r.get(0)?, r.get(1)?)))
        .map_err(sql("read the queue"))?;
    Ok(QueueWaiting {
        count: usize::try_from(count).unwrap_or(0),
        oldest: oldest
            .map(|t| time_from_sql("run created_at", &t))
            .transpose()?,
    })
}

/// The run's place in the queue (`store_sql::queue::position_sql`).
pub(crate) fn position(conn: &Connection, run_id: &str) -> Result<Option<usize>, Error> {
    let n: Option<i64> = conn
        .query_row(&position_sql("?1"), [run_id], |r| r.get(0))
        .optional()
        .map_err(sql("read queue position"))?;
    Ok(n.and_then(|n| usize::try_from(n).ok()))
}
