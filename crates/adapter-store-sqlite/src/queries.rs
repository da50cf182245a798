//! The store's operations as plain blocking functions on a connection.
//!
//! Writes run in `BEGIN IMMEDIATE` transactions: they take the write lock up front (waiting
//! up to `busy_timeout`), so a read-then-write never fails on a lock upgrade.

use chrono::Utc;
use domain::ports::{RunRecord, RunStatus};
use domain::{Event, Plan, RunUsage};
use rusqlite::{params, Connection, OptionalExtension, Transaction, TransactionBehavior};

use store_sql::codec::{from_json, time_to_sql, to_json};
use store_sql::events::next_seq;
use store_sql::runs::{usage_to_sql, StoredRun, RUN_COLUMNS};
use store_sql::steps::{replaces_steps, step_ids, step_rows};
use store_sql::RecordError;

use crate::error::{sql, Error};

pub(crate) fn write_tx(conn: &mut Connection) -> Result<Transaction<'_>, Error> {
    conn.transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(sql("begin write transaction"))
}

fn run_exists(tx: &Transaction<'_>, run_id: &str) -> Result<bool, Error> {
    tx.query_row("SELECT 1 FROM runs WHERE run_id = ?1", [run_id], |_| Ok(()))
        .optional()
        .map(|found| found.is_some())
        .map_err(sql("look up run"))
}

fn require_run(tx: &Transaction<'_>, run_id: &str) -> Result<(), Error> {
    if run_exists(tx, run_id)? {
        Ok(())
    } else {
        Err(RecordError::unknown_run(run_id).into())
    }
}

// ---- runs -------------------------------------------------------------------------------

pub(crate) fn insert_run(conn: &mut Connection, run: &RunRecord) -> Result<(), Error> {
    let [llm_calls, prompt_tokens, completion_tokens, cached_prompt_tokens] =
        usage_to_sql(&run.usage)?;
    let tx = write_tx(conn)?;
    if run_exists(&tx, &run.run_id)? {
        return Err(RecordError::run_exists(&run.run_id).into());
    }
    tx.execute(
        "INSERT INTO runs (run_id, task, mode, status, workspace, created_at, finished_at,
                           summary, error, llm_calls, prompt_tokens, completion_tokens,
                           cached_prompt_tokens, lease_owner, lease_until, queue_request,
                           client)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
        params![
            run.run_id,
            run.task,
            run.mode,
            run.status.as_str(),
            run.workspace,
            time_to_sql(&run.created_at),
            run.finished_at.as_ref().map(time_to_sql),
            run.summary,
            run.error,
            llm_calls,
            prompt_tokens,
            completion_tokens,
            cached_prompt_tokens,
            run.lease.as_ref().map(|l| l.owner.as_str()),
            run.lease.as_ref().map(|l| time_to_sql(&l.until)),
            run.queue_request
                .as_ref()
                .map(|v| to_json("queue request", v))
                .transpose()?,
            run.client,
        ],
    )
    .map_err(sql("insert run"))?;
    tx.commit().map_err(sql("commit new run"))
}

/// Overwrites what a run's progress changes, and its queue request when `run` has one
/// (the context of its latest span); never its lease (see `leases`), task, mode, workspace
/// or client, and never a queue request by none.
pub(crate) fn update_run(conn: &mut Connection, run: &RunRecord) -> Result<(), Error> {
    let [llm_calls, prompt_tokens, completion_tokens, cached_prompt_tokens] =
        usage_to_sql(&run.usage)?;
    let queue_request = run
        .queue_request
        .as_ref()
        .map(|v| to_json("queue request", v))
        .transpose()?;
    let tx = write_tx(conn)?;
    let changed = tx
        .execute(
            "UPDATE runs SET status = ?2, finished_at = ?3, summary = ?4, error = ?5,
                             llm_calls = ?6, prompt_tokens = ?7, completion_tokens = ?8,
                             cached_prompt_tokens = ?9,
                             queue_request = COALESCE(?10, queue_request)
             WHERE run_id = ?1",
            params![
                run.run_id,
                run.status.as_str(),
                run.finished_at.as_ref().map(time_to_sql),
                run.summary,
                run.error,
                llm_calls,
                prompt_tokens,
                completion_tokens,
                cached_prompt_tokens,
                queue_request,
            ],
        )
        .map_err(sql("update run"))?;
    if changed == 0 {
        return Err(RecordError::unknown_run(&run.run_id).into());
    }
    tx.commit().map_err(sql("commit run update"))
}

/// Overwrites only the usage columns of a run.
pub(crate) fn save_usage(
    conn: &mut Connection,
    run_id: &str,
    usage: &RunUsage,
) -> Result<(), Error> {
    let usage = usage_to_sql(usage)?;
    let tx = write_tx(conn)?;
    let changed = tx
        .execute(
            "UPDATE runs SET llm_calls = ?2, prompt_tokens = ?3, completion_tokens = ?4,
                             cached_prompt_tokens = ?5
             WHERE run_id = ?1",
            params![run_id, usage[0], usage[1], usage[2], usage[3]],
        )
        .map_err(sql("save run usage"))?;
    if changed == 0 {
        return Err(RecordError::unknown_run(run_id).into());
    }
    tx.commit().map_err(sql("commit run usage"))
}

pub(crate) fn set_run_status(
    conn: &mut Connection,
    run_id: &str,
    status: RunStatus,
) -> Result<(), Error> {
    let tx = write_tx(conn)?;
    let changed = tx
        .execute(
            "UPDATE runs SET status = ?2 WHERE run_id = ?1",
            params![run_id, status.as_str()],
        )
        .map_err(sql("set run status"))?;
    if changed == 0 {
        return Err(RecordError::unknown_run(run_id).into());
    }
    tx.commit().map_err(sql("commit run status"))
}

/// A `runs` row ([`RUN_COLUMNS`]) as SQLite hands it back, before validation.
pub(crate) fn read_run_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<StoredRun> {
    Ok(StoredRun {
        run_id: row.get(0)?,
        task: row.get(1)?,
        mode: row.get(2)?,
        status: row.get(3)?,
        workspace: row.get(4)?,
        created_at: row.get(5)?,
        finished_at: row.get(6)?,
        summary: row.get(7)?,
        error: row.get(8)?,
        llm_calls: row.get(9)?,
        prompt_tokens: row.get(10)?,
        completion_tokens: row.get(11)?,
        cached_prompt_tokens: row.get(12)?,
        lease_owner: row.get(13)?,
        lease_until: row.get(14)?,
        queue_request: row.get(15)?,
        client: row.get(16)?,
    })
}

/// A `runs` row as a domain record, validated.
fn run_record(row: StoredRun) -> Result<RunRecord, Error> {
    Ok(row.into_record()?)
}

/// Deletes a run with its plans, steps and events; false when there was no such run.
pub(crate) fn delete_run(conn: &mut Connection, run_id: &str) -> Result<bool, Error> {
    let tx = write_tx(conn)?;
    let changed = tx
        .execute("DELETE FROM runs WHERE run_id = ?1", [run_id])
        .map_err(sql("delete run"))?;
    tx.commit().map_err(sql("commit run deletion"))?;
    Ok(changed > 0)
}

pub(crate) fn get_run(conn: &Connection, run_id: &str) -> Result<Option<RunRecord>, Error> {
    conn.query_row(
        &format!("SELECT {RUN_COLUMNS} FROM runs WHERE run_id = ?1"),
        [run_id],
        read_run_row,
    )
    .optional()
    .map_err(sql("read run"))?
    .map(run_record)
    .transpose()
}

pub(crate) fn list_runs(conn: &Connection) -> Result<Vec<RunRecord>, Error> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {RUN_COLUMNS} FROM runs ORDER BY created_at DESC, run_id"
        ))
        .map_err(sql("prepare run listing"))?;
    let rows = stmt.query_map([], read_run_row).map_err(sql("list runs"))?;
    // One unreadable row (a value of the wrong type, an unknown status, a bad time) is left
    // out with a warning naming it; the others are still listed.
    let mut runs = Vec::new();
    for (i, row) in rows.enumerate() {
        match row.map_err(sql("read a run row")).and_then(run_record) {
            Ok(run) => runs.push(run),
            Err(e) => tracing::warn!(row = i + 1, error = %e, "skipping an unreadable run"),
        }
    }
    Ok(runs)
}

// ---- plans and steps --------------------------------------------------------------------

pub(crate) fn save_plan(conn: &mut Connection, run_id: &str, plan: &Plan) -> Result<(), Error> {
    let json = to_json("plan", plan)?;
    let tx = write_tx(conn)?;
    require_run(&tx, run_id)?;
    let newest_version: Option<i64> = tx
        .query_row(
            "SELECT MAX(version) FROM plans WHERE run_id = ?1 AND plan_id = ?2",
            params![run_id, plan.id],
            |row| row.get(0),
        )
        .map_err(sql("read newest plan version"))?;
    let save_seq: i64 = tx
        .query_row(
            "SELECT COALESCE(MAX(save_seq), 0) + 1 FROM plans WHERE run_id = ?1",
            [run_id],
            |row| row.get(0),
        )
        .map_err(sql("next plan save number"))?;
    let version = i64::from(plan.version());
    tx.execute(
        "INSERT INTO plans (run_id, plan_id, version, title, json, saved_at, save_seq)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT (run_id, plan_id, version) DO UPDATE SET
             title = excluded.title, json = excluded.json,
             saved_at = excluded.saved_at, save_seq = excluded.save_seq",
        params![
            run_id,
            plan.id,
            version,
            plan.title,
            json,
            time_to_sql(&Utc::now()),
            save_seq
        ],
    )
    .map_err(sql("upsert plan version"))?;
    // The steps table mirrors the newest version; a late save of an older one leaves it be.
    if replaces_steps(newest_version, version) {
        replace_steps(&tx, run_id, plan)?;
    } else {
        tracing::debug!(
            run_id,
            plan_id = %plan.id,
            version,
            "saved an older plan version; steps keep the newest one"
        );
    }
    tx.commit().map_err(sql("commit plan"))
}

fn replace_steps(tx: &Transaction<'_>, run_id: &str, plan: &Plan) -> Result<(), Error> {
    tx.execute(
        "DELETE FROM steps WHERE run_id = ?1 AND plan_id = ?2
           AND step_id NOT IN (SELECT value FROM json_each(?3))",
        params![run_id, plan.id, to_json("step ids", &step_ids(plan))?],
    )
    .map_err(sql("delete removed steps"))?;
    let mut upsert = tx
        .prepare_cached(
            "INSERT INTO steps (run_id, plan_id, step_id, position, description, kind, status,
                                result, error, notes, attempts, depends_on, attachments)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
             ON CONFLICT (run_id, plan_id, step_id) DO UPDATE SET
                 position = excluded.position, description = excluded.description,
                 kind = excluded.kind, status = excluded.status, result = excluded.result,
                 error = excluded.error, notes = excluded.notes, attempts = excluded.attempts,
                 depends_on = excluded.depends_on, attachments = excluded.attachments",
        )
        .map_err(sql("prepare step upsert"))?;
    for row in step_rows(plan)? {
        upsert
            .execute(params![
                run_id,
                plan.id,
                row.step_id,
                row.position,
                row.description,
                row.kind,
                row.status,
                row.result,
                row.error,
                row.notes,
                row.attempts,
                row.depends_on,
                row.attachments,
            ])
            .map_err(sql("upsert step"))?;
    }
    Ok(())
}

pub(crate) fn latest_plan(conn: &Connection, run_id: &str) -> Result<Option<Plan>, Error> {
    let json: Option<String> = conn
        .query_row(
            "SELECT json FROM plans
             WHERE run_id = ?1 AND plan_id = (
                 SELECT plan_id FROM plans WHERE run_id = ?1 ORDER BY save_seq DESC LIMIT 1)
             ORDER BY version DESC LIMIT 1",
            [run_id],
            |row| row.get(0),
        )
        .optional()
        .map_err(sql("read latest plan"))?;
    Ok(json.map(|j| from_json("stored plan", &j)).transpose()?)
}

// ---- events -----------------------------------------------------------------------------

pub(crate) fn append_event(conn: &mut Connection, event: &Event) -> Result<(), Error> {
    let json = to_json("event", event)?;
    let tx = write_tx(conn)?;
    require_run(&tx, &event.run_id)?;
    let last: Option<i64> = tx
        .query_row(
            "SELECT MAX(seq) FROM events WHERE run_id = ?1",
            [&event.run_id],
            |row| row.get(0),
        )
        .map_err(sql("read last event seq"))?;
    let seq = next_seq(event, last)?;
    tx.execute(
        "INSERT INTO events (run_id, seq, at, type, json) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            event.run_id,
            seq,
            time_to_sql(&event.at),
            event.kind.name(),
            json
        ],
    )
    .map_err(sql("insert event"))?;
    tx.commit().map_err(sql("commit event"))
}

pub(crate) fn events(conn: &Connection, run_id: &str, after_seq: u64) -> Result<Vec<Event>, Error> {
    // Nothing is stored above i64::MAX, so clamping keeps the meaning.
    let after = i64::try_from(after_seq).unwrap_or(i64::MAX);
    let mut stmt = conn
        .prepare_cached("SELECT json FROM events WHERE run_id = ?1 AND seq > ?2 ORDER BY seq")
        .map_err(sql("prepare event read"))?;
    let rows = stmt
        .query_map(params![run_id, after], |row| row.get::<_, String>(0))
        .map_err(sql("read events"))?
        .collect::<rusqlite::Result<Vec<_>>>()
        .map_err(sql("read events"))?;
    Ok(rows
        .iter()
        .map(|j| from_json("stored event", j))
        .collect::<Result<_, _>>()?)
}
