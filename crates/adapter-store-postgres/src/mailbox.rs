//! The run mailbox ([`domain::ports::RunMailbox`]): messages for a run, addressed to its
//! lease owner when posted, taken once by that owner.

use chrono::{DateTime, Utc};
use deadpool_postgres::Object;
use domain::ports::RunMessage;

use store_sql::codec::{from_json, time_to_sql, to_json};
use store_sql::RecordError;

use crate::error::{sql, Error};

pub(crate) async fn post(
    client: &Object,
    run_id: &str,
    message: &RunMessage,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    let json = to_json("run message", message)?;
    let added = client
        .execute(
            "INSERT INTO run_messages (run_id, owner, posted_at, json)
             SELECT run_id, lease_owner, $2, $3 FROM runs WHERE run_id = $1",
            &[&run_id, &time_to_sql(&now), &json],
        )
        .await
        .map_err(sql("post run message"))?;
    if added == 0 {
        return Err(RecordError::unknown_run(run_id).into());
    }
    Ok(())
}

/// One statement deletes and returns: of racing takers, each message goes to exactly one.
pub(crate) async fn take(
    client: &Object,
    run_id: &str,
    owner: &str,
) -> Result<Vec<RunMessage>, Error> {
    let rows = client
        .query(
            "DELETE FROM run_messages
             WHERE id IN (SELECT id FROM run_messages WHERE run_id = $1 AND owner = $2
                          FOR UPDATE SKIP LOCKED)
             RETURNING id, json",
            &[&run_id, &owner],
        )
        .await
        .map_err(sql("take run messages"))?;
    let mut taken = Vec::with_capacity(rows.len());
    for row in rows {
        let id: i64 = row.try_get(0).map_err(sql("read run message id"))?;
        let json: String = row.try_get(1).map_err(sql("read run message"))?;
        taken.push((id, json));
    }
    taken.sort_unstable_by_key(|(id, _)| *id);
    Ok(taken
        .iter()
        .map(|(_, json)| from_json("run message", json))
        .collect::<Result<_, _>>()?)
}
