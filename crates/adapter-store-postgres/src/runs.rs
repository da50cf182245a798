//! Rows of `runs`: inserting, updating, reading back and listing runs.
//!
//! Each write is one statement (PostgreSQL makes it atomic on its own); "no such run" is a
//! statement that changed no row.

use deadpool_postgres::Object;
use domain::ports::{RunRecord, RunStatus};
use domain::RunUsage;
use store_sql::codec::{time_to_sql, to_json};
use store_sql::runs::{usage_to_sql, StoredRun, RUN_COLUMNS};
use store_sql::RecordError;
use tokio_postgres::Row;

use crate::codec::{opt_text_to_sql, text_from_sql, text_to_sql};
use crate::error::{sql, Error};

/// Inserts `run` as given (status, lease and all); a run id already stored is refused.
pub(crate) async fn insert_run(client: &Object, run: &RunRecord) -> Result<(), Error> {
    let usage = usage_to_sql(&run.usage)?;
    let queue_request = run
        .queue_request
        .as_ref()
        .map(|v| to_json("queue request", v))
        .transpose()?;
    let changed = client
        .execute(
            "INSERT INTO runs (run_id, task, mode, status, workspace, created_at, finished_at,
                               summary, error, llm_calls, prompt_tokens, completion_tokens,
                               cached_prompt_tokens, lease_owner, lease_until, queue_request,
                               client)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16,
                     $17)
             ON CONFLICT (run_id) DO NOTHING",
            &[
                &run.run_id,
                &text_to_sql(&run.task),
                &run.mode,
                &run.status.as_str(),
                &text_to_sql(&run.workspace),
                &time_to_sql(&run.created_at),
                &run.finished_at.as_ref().map(time_to_sql),
                &opt_text_to_sql(&run.summary),
                &opt_text_to_sql(&run.error),
                &usage[0],
                &usage[1],
                &usage[2],
                &usage[3],
                &run.lease.as_ref().map(|l| l.owner.as_str()),
                &run.lease.as_ref().map(|l| time_to_sql(&l.until)),
                &queue_request,
                &opt_text_to_sql(&run.client),
            ],
        )
        .await
        .map_err(sql("insert run"))?;
    if changed == 0 {
        return Err(RecordError::run_exists(&run.run_id).into());
    }
    Ok(())
}

/// Overwrites what a run's progress changes, and its queue request when `run` has one
/// (the context of its latest span); never its lease (see `leases`), task, mode, workspace
/// or client, and never a queue request by none.
pub(crate) async fn update_run(client: &Object, run: &RunRecord) -> Result<(), Error> {
    let usage = usage_to_sql(&run.usage)?;
    let queue_request = run
        .queue_request
        .as_ref()
        .map(|v| to_json("queue request", v))
        .transpose()?;
    let changed = client
        .execute(
            "UPDATE runs SET status = $2, finished_at = $3, summary = $4, error = $5,
                             llm_calls = $6, prompt_tokens = $7, completion_tokens = $8,
                             cached_prompt_tokens = $9,
                             queue_request = COALESCE($10, queue_request)
             WHERE run_id = $1",
            &[
                &run.run_id,
                &run.status.as_str(),
                &run.finished_at.as_ref().map(time_to_sql),
                &opt_text_to_sql(&run.summary),
                &opt_text_to_sql(&run.error),
                &usage[0],
                &usage[1],
                &usage[2],
                &usage[3],
                &queue_request,
            ],
        )
        .await
        .map_err(sql("update run"))?;
    found(changed, &run.run_id)
}

/// Overwrites only the usage columns of a run.
pub(crate) async fn save_usage(
    client: &Object,
    run_id: &str,
    usage: &RunUsage,
) -> Result<(), Error> {
    let usage = usage_to_sql(usage)?;
    let changed = client
        .execute(
            "UPDATE runs SET llm_calls = $2, prompt_tokens = $3, completion_tokens = $4,
                             cached_prompt_tokens = $5
             WHERE run_id = $1",
            &[&run_id, &usage[0], &usage[1], &usage[2], &usage[3]],
        )
        .await
        .map_err(sql("save run usage"))?;
    found(changed, run_id)
}

pub(crate) async fn set_run_status(
    client: &Object,
    run_id: &str,
    status: RunStatus,
) -> Result<(), Error> {
    let changed = client
        .execute(
            "UPDATE runs SET status = $2 WHERE run_id = $1",
            &[&run_id, &status.as_str()],
        )
        .await
        .map_err(sql("set run status"))?;
    found(changed, run_id)
}

/// Deletes a run with its plans, steps and events (`ON DELETE CASCADE`).
pub(crate) async fn delete_run(client: &Object, run_id: &str) -> Result<bool, Error> {
    let changed = client
        .execute("DELETE FROM runs WHERE run_id = $1", &[&run_id])
        .await
        .map_err(sql("delete run"))?;
    Ok(changed > 0)
}

pub(crate) async fn get_run(client: &Object, run_id: &str) -> Result<Option<RunRecord>, Error> {
    client
        .query_opt(
            &format!("SELECT {RUN_COLUMNS} FROM runs WHERE run_id = $1"),
            &[&run_id],
        )
        .await
        .map_err(sql("read run"))?
        .map(|row| record_from_row(&row))
        .transpose()
}

pub(crate) async fn list_runs(client: &Object) -> Result<Vec<RunRecord>, Error> {
    let rows = client
        .query(
            &format!("SELECT {RUN_COLUMNS} FROM runs ORDER BY created_at DESC, run_id"),
            &[],
        )
        .await
        .map_err(sql("list runs"))?;
    // One unreadable row (an unknown status, a bad time) is left out with a warning naming
    // it; the others are still listed.
    let mut runs = Vec::with_capacity(rows.len());
    for (i, row) in rows.iter().enumerate() {
        match record_from_row(row) {
            Ok(run) => runs.push(run),
            Err(e) => tracing::warn!(row = i + 1, error = %e, "skipping an unreadable run"),
        }
    }
    Ok(runs)
}

fn found(changed: u64, run_id: &str) -> Result<(), Error> {
    if changed == 0 {
        return Err(RecordError::unknown_run(run_id).into());
    }
    Ok(())
}

/// A `runs` row (selected as [`RUN_COLUMNS`]) as a domain record, validated.
pub(crate) fn record_from_row(row: &Row) -> Result<RunRecord, Error> {
    let text = |i: usize| -> Result<String, Error> { row.try_get(i).map_err(sql("read a run")) };
    let opt =
        |i: usize| -> Result<Option<String>, Error> { row.try_get(i).map_err(sql("read a run")) };
    let int = |i: usize| -> Result<i64, Error> { row.try_get(i).map_err(sql("read a run")) };
    let stored = StoredRun {
        run_id: text(0)?,
        task: text_from_sql(text(1)?),
        mode: text(2)?,
        status: text(3)?,
        workspace: text_from_sql(text(4)?),
        created_at: text(5)?,
        finished_at: opt(6)?,
        summary: opt(7)?.map(text_from_sql),
        error: opt(8)?.map(text_from_sql),
        llm_calls: int(9)?,
        prompt_tokens: int(10)?,
        completion_tokens: int(11)?,
        cached_prompt_tokens: int(12)?,
        lease_owner: opt(13)?,
        lease_until: opt(14)?,
        queue_request: opt(15)?,
        client: opt(16)?.map(text_from_sql),
    };
    Ok(stored.into_record()?)
}
