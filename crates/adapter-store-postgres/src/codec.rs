//! Conversions between domain values and PostgreSQL values.
//!
//! Times are stored as text, exactly as the SQLite store does (RFC 3339, UTC, nine fractional
//! digits) in `COLLATE "C"` columns: `timestamptz` keeps microseconds only, and the domain's
//! times round-trip to the nanosecond; in byte order, the text order of two such times is
//! their time order. JSON is stored as text, not `jsonb`: exact round trip, and `jsonb`
//! refuses the `\u0000` a tool's output may contain.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::Error;

pub(crate) fn time_to_sql(t: &DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Nanos, true)
}

pub(crate) fn time_from_sql(what: &'static str, s: &str) -> Result<DateTime<Utc>, Error> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| Error::Corrupt {
            what,
            detail: format!("{s:?} is not an RFC 3339 time: {e}"),
        })
}

pub(crate) fn int_to_sql(what: &'static str, value: u64) -> Result<i64, Error> {
    i64::try_from(value).map_err(|_| Error::OutOfRange { what, value })
}

pub(crate) fn int_from_sql(what: &'static str, value: i64) -> Result<u64, Error> {
    u64::try_from(value).map_err(|_| Error::Corrupt {
        what,
        detail: format!("{value} is negative"),
    })
}

/// The character that escapes in stored text: a Unicode noncharacter, which text from people
/// and tools practically never holds.
const ESCAPE: char = '\u{FFFF}';

/// Text as stored: PostgreSQL's `text` cannot hold a NUL byte (SQLSTATE 22021), so NUL is
/// stored as `ESCAPE` `0` and `ESCAPE` itself doubled; any other text is stored as it is.
/// [`text_from_sql`] gives back exactly the text written.
pub(crate) fn text_to_sql(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains(['\0', ESCAPE]) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\0' => {
                out.push(ESCAPE);
                out.push('0');
            }
            ESCAPE => {
                out.push(ESCAPE);
                out.push(ESCAPE);
            }
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// An optional text as stored (see [`text_to_sql`]).
pub(crate) fn opt_text_to_sql(text: &Option<String>) -> Option<std::borrow::Cow<'_, str>> {
    text.as_deref().map(text_to_sql)
}

/// Stored text read back (see [`text_to_sql`]); an `ESCAPE` followed by anything else is
/// kept as it is.
pub(crate) fn text_from_sql(stored: String) -> String {
    if !stored.contains(ESCAPE) {
        return stored;
    }
    let mut out = String::with_capacity(stored.len());
    let mut chars = stored.chars().peekable();
    while let Some(c) = chars.next() {
        if c != ESCAPE {
            out.push(c);
            continue;
        }
        match chars.peek() {
            Some('0') => {
                chars.next();
                out.push('\0');
            }
            Some(&ESCAPE) => {
                chars.next();
                out.push(ESCAPE);
            }
            _ => out.push(ESCAPE),
        }
    }
    out
}

pub(crate) fn to_json<T: Serialize + ?Sized>(
    what: &'static str,
    value: &T,
) -> Result<String, Error> {
    serde_json::to_string(value).map_err(|source| Error::Json { what, source })
}

pub(crate) fn from_json<T: DeserializeOwned>(what: &'static str, s: &str) -> Result<T, Error> {
    serde_json::from_str(s).map_err(|source| Error::Json { what, source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_with_nul_is_stored_without_it_and_read_back_exactly() {
        for text in [
            "plain",
            "",
            "a\0b",
            "\0",
            "\u{FFFF}",
            "\u{FFFF}0",
            "\u{FFFF}\0\u{FFFF}\u{FFFF}0\0",
            "end\u{FFFF}",
        ] {
            let stored = text_to_sql(text);
            assert!(!stored.contains('\0'), "{text:?}");
            assert_eq!(text_from_sql(stored.into_owned()), text);
        }
        assert!(matches!(
            text_to_sql("plain"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

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
    fn integers_outside_bigint_range_are_errors() {
        assert!(int_to_sql("n", u64::MAX).is_err());
        assert!(int_from_sql("n", -1).is_err());
        assert_eq!(int_to_sql("n", 7).expect("fits"), 7);
    }
}
