//! Conversions between domain values and the values both SQL stores keep.
//!
//! Times are RFC 3339 text, UTC, always nine fractional digits: exact round trip (to the
//! nanosecond, which PostgreSQL's `timestamptz` would not keep), and the byte order of two
//! stored times is their time order (so `ORDER BY created_at` and `lease_until <= now`
//! work on text; PostgreSQL's columns are `COLLATE "C"`). Counts are signed 64-bit
//! integers. JSON is text: exact round trip.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::RecordError;

/// A time as stored (see the module's doc).
pub fn time_to_sql(t: &DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Nanos, true)
}

/// A stored time read back; `what` names it in the error.
pub fn time_from_sql(what: &'static str, s: &str) -> Result<DateTime<Utc>, RecordError> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| RecordError::Corrupt {
            what,
            detail: format!("{s:?} is not an RFC 3339 time: {e}"),
        })
}

/// A count as stored; above `i64::MAX` it cannot be.
pub fn int_to_sql(what: &'static str, value: u64) -> Result<i64, RecordError> {
    i64::try_from(value).map_err(|_| RecordError::OutOfRange { what, value })
}

/// A stored count read back; a negative one is corrupt.
pub fn int_from_sql(what: &'static str, value: i64) -> Result<u64, RecordError> {
    u64::try_from(value).map_err(|_| RecordError::Corrupt {
        what,
        detail: format!("{value} is negative"),
    })
}

/// A value as stored JSON text.
pub fn to_json<T: Serialize + ?Sized>(
    what: &'static str,
    value: &T,
) -> Result<String, RecordError> {
    serde_json::to_string(value).map_err(|source| RecordError::Json { what, source })
}

/// Stored JSON text read back.
pub fn from_json<T: DeserializeOwned>(what: &'static str, s: &str) -> Result<T, RecordError> {
    serde_json::from_str(s).map_err(|source| RecordError::Json { what, source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_round_trip_exactly_and_sort_as_bytes() {
        let a = DateTime::parse_from_rfc3339("2026-01-02T03:04:05.5Z")
            .expect("valid")
            .with_timezone(&Utc);
        let b = DateTime::parse_from_rfc3339("2026-01-02T03:04:05.123456789Z")
            .expect("valid")
            .with_timezone(&Utc);
        assert_eq!(time_from_sql("t", &time_to_sql(&a)).expect("parses"), a);
        assert_eq!(time_from_sql("t", &time_to_sql(&b)).expect("parses"), b);
        assert!(time_to_sql(&b).as_bytes() < time_to_sql(&a).as_bytes());
    }

    #[test]
    fn integers_outside_the_signed_64_bit_range_are_errors() {
        assert!(matches!(
            int_to_sql("n", u64::MAX),
            Err(RecordError::OutOfRange { .. })
        ));
        assert!(matches!(
            int_from_sql("n", -1),
            Err(RecordError::Corrupt { .. })
        ));
        assert_eq!(int_to_sql("n", 7).expect("fits"), 7);
    }

    #[test]
    fn a_count_too_large_to_store_is_unstorable_and_a_bad_stored_one_corrupt() {
        let too_large = int_to_sql("n", u64::MAX).expect_err("too large");
        assert!(matches!(
            too_large.kind()(String::new()),
            domain::StoreError::Unstorable(_)
        ));
        let negative = int_from_sql("n", -1).expect_err("negative");
        assert!(matches!(
            negative.kind()(String::new()),
            domain::StoreError::Corrupt(_)
        ));
    }
}
