//! The store's operations as plain blocking functions on a connection.
//!
//! Writes run in `BEGIN IMMEDIATE` transactions: they take the write lock up front (waiting
//! up to `busy_timeout`), so a read-then-write never fails on a lock upgrade.

use chrono::Utc;
use domain::ports::{Lease, RunRecord, RunStatus};
use domain::{Event, Plan, RunUsage, Step};
use rusqlite::{params, Connection, OptionalExtension, Transaction, TransactionBehavior};

use crate::codec::{from_json, int_from_sql, int_to_sql, time_from_sql, time_to_sql, to_json};
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
        Err(Error::UnknownRun {
            run_id: run_id.to_string(),
        })
    }
}

// ---- runs -------------------------------------------------------------------------------

pub(crate) fn insert_run(conn: &mut Connection, run: &RunRecord) -> Result<(), Error> {
    let tx = write_tx(conn)?;
    if run_exists(&tx, &run.run_id)? {
        return Err(Error::RunExists {
            run_id: run.run_id.clone(),
        });
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
            int_to_sql("llm_calls", run.usage.llm_calls)?,
            int_to_sql("prompt_tokens", run.usage.prompt_tokens)?,
            int_to_sql("completion_tokens", run.usage.completion_tokens)?,
            int_to_sql("cached_prompt_tokens", run.usage.cached_prompt_tokens)?,
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

/// Overwrites what a run's progress changes; never its lease (see `leases`), task, mode,
/// workspace, queue request or client.
pub(crate) fn update_run(conn: &mut Connection, run: &RunRecord) -> Result<(), Error> {
    let tx = write_tx(conn)?;
    let changed = tx
        .execute(
            "UPDATE runs SET status = ?2, finished_at = ?3, summary = ?4, error = ?5,
                             llm_calls = ?6, prompt_tokens = ?7, completion_tokens = ?8,
                             cached_prompt_tokens = ?9
             WHERE run_id = ?1",
            params![
                run.run_id,
                run.status.as_str(),
                run.finished_at.as_ref().map(time_to_sql),
                run.summary,
                run.error,
                int_to_sql("llm_calls", run.usage.llm_calls)?,
                int_to_sql("prompt_tokens", run.usage.prompt_tokens)?,
                int_to_sql("completion_tokens", run.usage.completion_tokens)?,
                int_to_sql("cached_prompt_tokens", run.usage.cached_prompt_tokens)?,
            ],
        )
        .map_err(sql("update run"))?;
    if changed == 0 {
        return Err(Error::UnknownRun {
            run_id: run.run_id.clone(),
        });
    }
    tx.commit().map_err(sql("commit run update"))
}

/// Overwrites only the usage columns of a run.
pub(crate) fn save_usage(
    conn: &mut Connection,
    run_id: &str,
    usage: &RunUsage,
) -> Result<(), Error> {
    let tx = write_tx(conn)?;
    let changed = tx
        .execute(
            "UPDATE runs SET llm_calls = ?2, prompt_tokens = ?3, completion_tokens = ?4,
                             cached_prompt_tokens = ?5
             WHERE run_id = ?1",
            params![
                run_id,
                int_to_sql("llm_calls", usage.llm_calls)?,
                int_to_sql("prompt_tokens", usage.prompt_tokens)?,
                int_to_sql("completion_tokens", usage.completion_tokens)?,
                int_to_sql("cached_prompt_tokens", usage.cached_prompt_tokens)?,
            ],
        )
        .map_err(sql("save run usage"))?;
    if changed == 0 {
        return Err(Error::UnknownRun {
            run_id: run_id.to_string(),
        });
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
        return Err(Error::UnknownRun {
            run_id: run_id.to_string(),
        });
    }
    tx.commit().map_err(sql("commit run status"))
}

pub(crate) const RUN_COLUMNS: &str = "run_id, task, mode, status, workspace, created_at,
                           finished_at, summary, error, llm_calls, prompt_tokens,
                           completion_tokens, cached_prompt_tokens, lease_owner, lease_until,
                           queue_request, client";

/// A `runs` row as SQLite hands it back, before validation.
pub(crate) struct RunRow {
    run_id: String,
    task: String,
    mode: String,
    status: String,
    workspace: String,
    created_at: String,
    finished_at: Option<String>,
    summary: Option<String>,
    error: Option<String>,
    llm_calls: i64,
    prompt_tokens: i64,
    completion_tokens: i64,
    cached_prompt_tokens: i64,
    lease_owner: Option<String>,
    lease_until: Option<String>,
    queue_request: Option<String>,
    client: Option<String>,
}

impl RunRow {
    pub(crate) fn read(row: &rusqlite::Row<'_>) -> rusqlite::Result<RunRow> {
        Ok(RunRow {
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

    pub(crate) fn into_record(self) -> Result<RunRecord, Error> {
        let status = RunStatus::parse(&self.status).ok_or_else(|| Error::Corrupt {
            what: "run status",
            detail: format!("unknown status {:?} of run '{}'", self.status, self.run_id),
        })?;
        Ok(RunRecord {
            status,
            created_at: time_from_sql("run created_at", &self.created_at)?,
            finished_at: self
                .finished_at
                .as_deref()
                .map(|t| time_from_sql("run finished_at", t))
                .transpose()?,
            usage: RunUsage {
                llm_calls: int_from_sql("llm_calls", self.llm_calls)?,
                prompt_tokens: int_from_sql("prompt_tokens", self.prompt_tokens)?,
                completion_tokens: int_from_sql("completion_tokens", self.completion_tokens)?,
                cached_prompt_tokens: int_from_sql(
                    "cached_prompt_tokens",
                    self.cached_prompt_tokens,
                )?,
            },
            run_id: self.run_id,
            task: self.task,
            mode: self.mode,
            workspace: self.workspace,
            summary: self.summary,
            error: self.error,
            lease: match (self.lease_owner, self.lease_until) {
                (Some(owner), Some(until)) => Some(Lease {
                    owner,
                    until: time_from_sql("run lease_until", &until)?,
                }),
                _ => None,
            },
            queue_request: self
                .queue_request
                .as_deref()
                .map(|j| from_json("queue request", j))
                .transpose()?,
            client: self.client,
        })
    }
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
        RunRow::read,
    )
    .optional()
    .map_err(sql("read run"))?
    .map(RunRow::into_record)
    .transpose()
}

pub(crate) fn list_runs(conn: &Connection) -> Result<Vec<RunRecord>, Error> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {RUN_COLUMNS} FROM runs ORDER BY created_at DESC, run_id"
        ))
        .map_err(sql("prepare run listing"))?;
    let rows = stmt.query_map([], RunRow::read).map_err(sql("list runs"))?;
    // One unreadable row (a value of the wrong type, an unknown status, a bad time) is left
    // out with a warning naming it; the others are still listed.
    let mut runs = Vec::new();
    for (i, row) in rows.enumerate() {
        match row
            .map_err(sql("read a run row"))
            .and_then(RunRow::into_record)
        {
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
    if newest_version.is_none_or(|newest| version >= newest) {
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
    let ids: Vec<&str> = plan.steps().iter().map(|s| s.id.as_str()).collect();
    tx.execute(
        "DELETE FROM steps WHERE run_id = ?1 AND plan_id = ?2
           AND step_id NOT IN (SELECT value FROM json_each(?3))",
        params![run_id, plan.id, to_json("step ids", &ids)?],
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
    for (position, step) in plan.steps().iter().enumerate() {
        let Step {
            id,
            description,
            kind,
            depends_on,
            result,
            error,
            notes,
            attachments,
            // Edges, fallbacks and the interruption mark are kept in the plan's JSON, not
            // projected into `steps`; status and attempts are read through the state machine.
            fallback: _,
            condition: _,
            rollback_of: _,
            group: _,
            ..
        } = step;
        let (status, attempts) = (step.status(), step.attempts());
        upsert
            .execute(params![
                run_id,
                plan.id,
                id,
                int_to_sql("step position", position as u64)?,
                description,
                kind,
                status.as_str(),
                result,
                error,
                notes,
                attempts,
                to_json("step depends_on", depends_on)?,
                to_json("step attachments", attachments)?,
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
    json.map(|j| from_json("stored plan", &j)).transpose()
}

// ---- events -----------------------------------------------------------------------------

pub(crate) fn append_event(conn: &mut Connection, event: &Event) -> Result<(), Error> {
    let json = to_json("event", event)?;
    let seq = int_to_sql("event seq", event.seq)?;
    let tx = write_tx(conn)?;
    require_run(&tx, &event.run_id)?;
    let last: Option<i64> = tx
        .query_row(
            "SELECT MAX(seq) FROM events WHERE run_id = ?1",
            [&event.run_id],
            |row| row.get(0),
        )
        .map_err(sql("read last event seq"))?;
    let expected = last.unwrap_or(0) + 1;
    if seq != expected {
        return Err(Error::OutOfOrderEvent {
            run_id: event.run_id.clone(),
            expected: int_from_sql("last event seq", expected)?,
            got: event.seq,
        });
    }
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
    rows.iter().map(|j| from_json("stored event", j)).collect()
}
