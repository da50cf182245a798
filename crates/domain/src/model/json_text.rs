//! Finding the JSON a model wrote inside free text: code fences, prose before and after,
//! `<tool_call>` tags and the like are tolerated. Pure string code, shared by the domain's
//! structured answers (`engine::structured`) and adapters that read tool calls out of text.

use std::ops::Range;

use serde_json::Value;

/// How many candidate openings are tried before giving up (bounds the work on long text).
const MAX_CANDIDATES: usize = 64;

/// Why a text holds no acceptable JSON (the first problem met), for a repair re-ask.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoJson {
    /// No balanced `{…}` or `[…]` that parses and is accepted.
    #[error("the reply contains no JSON object")]
    Absent,
    /// An opening bracket is never closed.
    #[error("the JSON is incomplete (an opening bracket is never closed)")]
    Incomplete,
    /// The first balanced candidate does not parse.
    #[error("invalid JSON: {0}")]
    Invalid(String),
}

/// JSON found in a text: the value and where its source text lies.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub value: Value,
    pub span: Range<usize>,
}

/// The first balanced `{…}` or `[…]` in `text` that parses as JSON.
#[cfg(test)]
pub(crate) fn first_json(text: &str) -> Result<Found, NoJson> {
    find_json(text, |_| true)
}

/// The first balanced `{…}` or `[…]` in `text` that parses as JSON and is `accept`ed.
///
/// The error says why nothing was found (the parse error of the first balanced candidate,
/// or that there is no JSON at all), for a repair re-ask.
pub fn find_json(text: &str, accept: impl Fn(&Value) -> bool) -> Result<Found, NoJson> {
    let mut first_error: Option<NoJson> = None;
    let starts = text
        .char_indices()
        .filter(|(_, c)| matches!(c, '{' | '['))
        .map(|(i, _)| i)
        .take(MAX_CANDIDATES);
    for start in starts {
        let Some(end) = balanced_end(text, start) else {
            first_error.get_or_insert(NoJson::Incomplete);
            continue;
        };
        match serde_json::from_str::<Value>(&text[start..end]) {
            Ok(value) if accept(&value) => {
                return Ok(Found {
                    value,
                    span: start..end,
                })
            }
            Ok(_) => {}
            Err(e) => {
                first_error.get_or_insert_with(|| NoJson::Invalid(e.to_string()));
            }
        }
    }
    Err(first_error.unwrap_or(NoJson::Absent))
}

/// The byte offset just past the bracket closing the one at `start`, skipping brackets in
/// strings. `None` when it is never closed or the nesting is inconsistent.
fn balanced_end(text: &str, start: usize) -> Option<usize> {
    let mut stack: Vec<char> = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    for (offset, c) in text[start..].char_indices() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' => stack.push('}'),
            '[' => stack.push(']'),
            '}' | ']' => {
                if stack.pop() != Some(c) {
                    return None;
                }
                if stack.is_empty() {
                    return Some(start + offset + c.len_utf8());
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn value(text: &str) -> Value {
        first_json(text).unwrap().value
    }

    #[test]
    fn bare_fenced_and_wrapped_json() {
        assert_eq!(value(r#"{"a": 1}"#), json!({"a": 1}));
        assert_eq!(
            value("Sure! Here it is:\n```json\n{\"a\": [1, 2]}\n```\nAnything else?"),
            json!({"a": [1, 2]})
        );
        assert_eq!(
            value("<tool_call>[{\"x\": \"}\"}]</tool_call>"),
            json!([{"x": "}"}])
        );
        assert_eq!(
            value(r#"{"s": "a \"quoted\" {brace"}"#),
            json!({"s": "a \"quoted\" {brace"})
        );
    }

    #[test]
    fn skips_bracketed_prose_before_the_json() {
        assert_eq!(
            value("Step [1] done. {\"ok\": true}"),
            json!([1]),
            "[1] is valid JSON, and first"
        );
        assert_eq!(value("see {this} then {\"ok\": true}"), json!({"ok": true}));
    }

    #[test]
    fn span_covers_the_json_text() {
        let text = "x {\"a\":1} y";
        let found = first_json(text).unwrap();
        assert_eq!(&text[found.span], "{\"a\":1}");
    }

    #[test]
    fn values_can_be_filtered() {
        let found = find_json("Step [1] done. {\"ok\": true}", Value::is_object).unwrap();
        assert_eq!(found.value, json!({"ok": true}));
        assert!(find_json("[1]", Value::is_object).is_err());
    }

    #[test]
    fn errors_say_what_was_wrong() {
        assert_eq!(first_json("no json here").unwrap_err(), NoJson::Absent);
        let invalid = first_json("{\"a\": 1,}").unwrap_err();
        assert!(matches!(invalid, NoJson::Invalid(_)), "{invalid:?}");
        assert!(
            invalid.to_string().starts_with("invalid JSON: "),
            "{invalid}"
        );
        assert_eq!(first_json("{\"a\": [1, 2").unwrap_err(), NoJson::Incomplete);
    }
}
