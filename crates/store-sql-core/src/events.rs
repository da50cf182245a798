//! The event log's one rule: gap-free, each run's `seq` exactly its last `seq + 1`.

use domain::Event;

use crate::codec::{int_from_sql, int_to_sql};
use crate::RecordError;

/// `event`'s `seq` as stored, if it is the next of its run (`last`: the highest `seq`
/// stored, none for a run with no event); a duplicate or a gap is
/// [`RecordError::OutOfOrderEvent`].
pub fn next_seq(event: &Event, last: Option<i64>) -> Result<i64, RecordError> {
    let seq = int_to_sql("event seq", event.seq)?;
    let expected = last.unwrap_or(0) + 1;
    if seq != expected {
        return Err(RecordError::OutOfOrderEvent {
            run_id: event.run_id.clone(),
            expected: int_from_sql("last event seq", expected)?,
            got: event.seq,
        });
    }
    Ok(seq)
}
