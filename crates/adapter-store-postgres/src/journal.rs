//! Plan versions, their steps, and the append-only event log.

use chrono::Utc;
use deadpool_postgres::{Object, Transaction};
use domain::{Event, Plan};
use store_sql::codec::{from_json, time_to_sql, to_json};
use store_sql::events::next_seq;
use store_sql::steps::{replaces_steps, step_ids, step_rows};
use store_sql::RecordError;

use crate::codec::text_to_sql;
use crate::error::{sql, Error};

// ---- plans and steps --------------------------------------------------------------------

/// Stores the plan under its version, and mirrors the newest version into `steps`. The run's
/// row is locked for the transaction, so saves of one run are ordered exactly (`save_seq`).
pub(crate) async fn save_plan(client: &mut Object, run_id: &str, plan: &Plan) -> Result<(), Error> {
    let json = to_json("plan", plan)?;
    let version = i64::from(plan.version());
    let tx = client.transaction().await.map_err(sql("begin plan save"))?;
    let locked = tx
        .query_opt(
            "SELECT 1 FROM runs WHERE run_id = $1 FOR NO KEY UPDATE",
            &[&run_id],
        )
        .await
        .map_err(sql("lock run"))?;
    if locked.is_none() {
        return Err(RecordError::unknown_run(run_id).into());
    }
    let row = tx
        .query_one(
            "SELECT (SELECT MAX(version) FROM plans WHERE run_id = $1 AND plan_id = $2),
                    (SELECT COALESCE(MAX(save_seq), 0) + 1 FROM plans WHERE run_id = $1)",
            &[&run_id, &plan.id],
        )
        .await
        .map_err(sql("read newest plan version"))?;
    let newest_version: Option<i64> = row.try_get(0).map_err(sql("read newest plan version"))?;
    let save_seq: i64 = row.try_get(1).map_err(sql("next plan save number"))?;
    tx.execute(
        "INSERT INTO plans (run_id, plan_id, version, title, json, saved_at, save_seq)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (run_id, plan_id, version) DO UPDATE SET
             title = excluded.title, json = excluded.json,
             saved_at = excluded.saved_at, save_seq = excluded.save_seq",
        &[
            &run_id,
            &plan.id,
            &version,
            &text_to_sql(&plan.title),
            &json,
            &time_to_sql(&Utc::now()),
            &save_seq,
        ],
    )
    .await
    .map_err(sql("upsert plan version"))?;
    // The steps table mirrors the newest version; a late save of an older one leaves it be.
    if replaces_steps(newest_version, version) {
        replace_steps(&tx, run_id, plan).await?;
    } else {
        tracing::debug!(
            run_id,
            plan_id = %plan.id,
            version,
            "saved an older plan version; steps keep the newest one"
        );
    }
    tx.commit().await.map_err(sql("commit plan"))
}

async fn replace_steps(tx: &Transaction<'_>, run_id: &str, plan: &Plan) -> Result<(), Error> {
    let ids = step_ids(plan);
    tx.execute(
        "DELETE FROM steps WHERE run_id = $1 AND plan_id = $2 AND step_id <> ALL ($3)",
        &[&run_id, &plan.id, &ids],
    )
    .await
    .map_err(sql("delete removed steps"))?;
    let upsert = tx
        .prepare_cached(
            "INSERT INTO steps (run_id, plan_id, step_id, position, description, kind, status,
                                result, error, notes, attempts, depends_on, attachments)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
             ON CONFLICT (run_id, plan_id, step_id) DO UPDATE SET
                 position = excluded.position, description = excluded.description,
                 kind = excluded.kind, status = excluded.status, result = excluded.result,
                 error = excluded.error, notes = excluded.notes, attempts = excluded.attempts,
                 depends_on = excluded.depends_on, attachments = excluded.attachments",
        )
        .await
        .map_err(sql("prepare step upsert"))?;
    for row in step_rows(plan)? {
        tx.execute(
            &upsert,
            &[
                &run_id,
                &plan.id,
                &row.step_id,
                &row.position,
                &text_to_sql(row.description),
                &row.kind.map(text_to_sql),
                &row.status,
                &row.result.map(text_to_sql),
                &row.error.map(text_to_sql),
                &text_to_sql(row.notes),
                &row.attempts,
                &row.depends_on,
                &row.attachments,
            ],
        )
        .await
        .map_err(sql("upsert step"))?;
    }
    Ok(())
}

pub(crate) async fn latest_plan(client: &Object, run_id: &str) -> Result<Option<Plan>, Error> {
    let row = client
        .query_opt(
            "SELECT json FROM plans
             WHERE run_id = $1 AND plan_id = (
                 SELECT plan_id FROM plans WHERE run_id = $1 ORDER BY save_seq DESC LIMIT 1)
             ORDER BY version DESC LIMIT 1",
            &[&run_id],
        )
        .await
        .map_err(sql("read latest plan"))?;
    let Some(row) = row else { return Ok(None) };
    let json: &str = row.try_get(0).map_err(sql("read latest plan"))?;
    Ok(Some(from_json("stored plan", json)?))
}

// ---- events -----------------------------------------------------------------------------

/// Appends one event if its `seq` is the run's next. No transaction is needed: events are
/// never removed one by one, so the last `seq` only grows, and a `seq` two writers race
/// for is refused by the primary key (then reported as a duplicate).
pub(crate) async fn append_event(client: &Object, event: &Event) -> Result<(), Error> {
    let json = to_json("event", event)?;
    let look = client
        .prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM runs WHERE run_id = $1),
                    (SELECT MAX(seq) FROM events WHERE run_id = $1)",
        )
        .await
        .map_err(sql("prepare event check"))?;
    let row = client
        .query_one(&look, &[&event.run_id])
        .await
        .map_err(sql("read last event seq"))?;
    let unknown = || Error::from(RecordError::unknown_run(&event.run_id));
    let exists: bool = row.try_get(0).map_err(sql("look up run"))?;
    if !exists {
        return Err(unknown());
    }
    let last: Option<i64> = row.try_get(1).map_err(sql("read last event seq"))?;
    let seq = next_seq(event, last)?;
    let insert = client
        .prepare_cached(
            "INSERT INTO events (run_id, seq, at, type, json) VALUES ($1, $2, $3, $4, $5)",
        )
        .await
        .map_err(sql("prepare event insert"))?;
    let inserted = client
        .execute(
            &insert,
            &[
                &event.run_id,
                &seq,
                &time_to_sql(&event.at),
                &event.kind.name(),
                &json,
            ],
        )
        .await;
    match inserted {
        Ok(_) => Ok(()),
        Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::UNIQUE_VIOLATION) => {
            Err(Error::DuplicateEvent {
                run_id: event.run_id.clone(),
                got: event.seq,
            })
        }
        // The run was deleted between the check and the insert.
        Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::FOREIGN_KEY_VIOLATION) => {
            Err(unknown())
        }
        Err(e) => Err(sql("insert event")(e)),
    }
}

pub(crate) async fn events(
    client: &Object,
    run_id: &str,
    after_seq: u64,
) -> Result<Vec<Event>, Error> {
    // Nothing is stored above i64::MAX, so clamping keeps the meaning.
    let after = i64::try_from(after_seq).unwrap_or(i64::MAX);
    let read = client
        .prepare_cached("SELECT json FROM events WHERE run_id = $1 AND seq > $2 ORDER BY seq")
        .await
        .map_err(sql("prepare event read"))?;
    let rows = client
        .query(&read, &[&run_id, &after])
        .await
        .map_err(sql("read events"))?;
    rows.iter()
        .map(|r| {
            Ok(from_json(
                "stored event",
                r.try_get(0).map_err(sql("read events"))?,
            )?)
        })
        .collect()
}
