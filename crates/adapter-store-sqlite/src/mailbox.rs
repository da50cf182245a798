//! The run mailbox ([`domain::ports::RunMailbox`]): messages for a run, taken once by its
//! owner.

use chrono::{DateTime, Utc};
use domain::ports::RunMessage;
use rusqlite::Connection;

use store_sql::codec::{from_json, time_to_sql, to_json};
use store_sql::RecordError;

use crate::error::{sql, Error};
use crate::queries::write_tx;

pub(crate) fn post(
    conn: &mut Connection,
    run_id: &str,
    message: &RunMessage,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    let json = to_json("run message", message)?;
    let tx = write_tx(conn)?;
    let added = tx
        .execute(
            "INSERT INTO run_messages (run_id, owner, posted_at, json)
             SELECT run_id, lease_owner, ?2, ?3 FROM runs WHERE run_id = ?1",
            rusqlite::params![run_id, time_to_sql(&now), json],
        )
        .map_err(sql("post run message"))?;
    if added == 0 {
        return Err(RecordError::unknown_run(run_id).into());
    }
    tx.commit().map_err(sql("commit run message"))
}

/// Reads and deletes in one write transaction: two takers never get the same message.
pub(crate) fn take(
    conn: &mut Connection,
    run_id: &str,
    owner: &str,
) -> Result<Vec<RunMessage>, Error> {
    let tx = write_tx(conn)?;
    let rows: Vec<String> = {
        let mut stmt = tx
            .prepare("SELECT json FROM run_messages WHERE run_id = ?1 AND owner = ?2 ORDER BY id")
            .map_err(sql("read run messages"))?;
        let rows = stmt
            .query_map([run_id, owner], |r| r.get::<_, String>(0))
            .map_err(sql("read run messages"))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(sql("read run messages"))?;
        rows
    };
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    tx.execute(
        "DELETE FROM run_messages WHERE run_id = ?1 AND owner = ?2",
        [run_id, owner],
    )
    .map_err(sql("delete run messages"))?;
    let messages = rows
        .iter()
        .map(|json| from_json("run message", json))
        .collect::<Result<Vec<_>, _>>()?;
    tx.commit().map_err(sql("commit taken run messages"))?;
    Ok(messages)
}
