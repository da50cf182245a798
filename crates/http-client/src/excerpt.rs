//! Text of a reply shortened for an error message: one line, at most so many characters.

/// How much of an unparseable body goes into an error.
const MAX_BODY_EXCERPT_CHARS: usize = 200;

/// At most `max_chars` characters of `s` on one line (control characters as spaces), with
/// `…` when cut.
pub fn excerpt(s: &str, max_chars: usize) -> String {
    let flat: String = s
        .trim()
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    match flat.char_indices().nth(max_chars) {
        Some((cut, _)) => format!("{}…", &flat[..cut]),
        None => flat,
    }
}

/// A shortened view of a body that could not be read, for error messages: `empty body` or
/// `body starts with: "…"`.
pub fn body_excerpt(raw: &[u8]) -> String {
    if raw.is_empty() {
        return "empty body".to_owned();
    }
    format!(
        "body starts with: {:?}",
        excerpt(&String::from_utf8_lossy(raw), MAX_BODY_EXCERPT_CHARS)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_is_cut_on_one_line() {
        assert_eq!(excerpt("  a\nb  ", 10), "a b");
        assert_eq!(excerpt("éééé", 2), "éé…");
        assert_eq!(body_excerpt(b""), "empty body");
        assert_eq!(body_excerpt(b"<html>"), "body starts with: \"<html>\"");
        assert_eq!(
            body_excerpt(&[b'x'; 300])
                .chars()
                .filter(|c| *c == 'x')
                .count(),
            200
        );
    }
}
