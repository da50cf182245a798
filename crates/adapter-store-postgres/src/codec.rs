//! Text as PostgreSQL stores it. Times, counts and JSON are stored as the SQLite store
//! stores them (`store_sql::codec`), times in `COLLATE "C"` columns: `timestamptz` keeps
//! microseconds only, and the domain's times round-trip to the nanosecond. JSON is text,
//! not `jsonb`: exact round trip, and `jsonb` refuses the `\u0000` a tool's output may
//! contain.

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
}
