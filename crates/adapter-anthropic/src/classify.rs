//! What the server reported, as the port's [`LlmError`] kinds: the API's error bodies
//! (`{"type": "error", "error": {"type", "message"}}`) read, HTTP statuses and error types
//! classified (on `http_client::StatusClass`), and the text helpers used to build error messages.
//!
//! Statuses and types (Anthropic's "Errors" reference): 400 `invalid_request_error`
//! (`ContextTooLong` when it says the prompt is too long, else `Permanent`), 401
//! `authentication_error` and 403 `permission_error` (`Auth`), 404 `not_found_error` (an
//! unknown model: `Permanent`, with the server's message), 413 `request_too_large`
//! (`ContextTooLong`), 429 `rate_limit_error` (`RateLimited`), 500 `api_error` and 529
//! `overloaded_error` (`Transient`).

use std::time::Duration;

use domain::LlmError;
use http_client::StatusClass;
use serde_json::Value;

pub(crate) use http_client::{body_excerpt, excerpt};

/// How much of a server message goes into an error.
const MAX_MESSAGE_CHARS: usize = 500;

/// An error as the API reported it: its `type` and `message`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ApiError {
    pub error_type: Option<String>,
    pub message: String,
}

impl ApiError {
    /// The error of `{"type": "error", "error": {"type", "message"}}` (a body, or the data of
    /// an `error` event); also `{"error": "text"}` from proxies. `None` when there is none.
    pub fn from_body(body: &Value) -> Option<ApiError> {
        match body.get("error")? {
            Value::Object(err) => Some(ApiError {
                error_type: err.get("type").and_then(text),
                message: err.get("message").and_then(text).unwrap_or_default(),
            }),
            Value::Null => None,
            other => Some(ApiError {
                error_type: None,
                message: text(other).unwrap_or_default(),
            }),
        }
    }

    /// The error of a non-2xx body, or the body itself (shortened) when it holds none.
    pub fn from_raw_body(raw: &[u8]) -> ApiError {
        serde_json::from_slice::<Value>(raw)
            .ok()
            .and_then(|v| ApiError::from_body(&v))
            .unwrap_or_else(|| ApiError {
                error_type: None,
                message: excerpt(&String::from_utf8_lossy(raw), MAX_MESSAGE_CHARS),
            })
    }
}

/// The kind of a non-2xx reply; `text` is the error's message.
pub(crate) fn of_status(
    status: u16,
    error_type: Option<&str>,
    message: &str,
    retry_after: Option<Duration>,
    text: String,
) -> LlmError {
    match StatusClass::of(status) {
        StatusClass::Auth => LlmError::Auth(text),
        StatusClass::RateLimited => LlmError::RateLimited {
            retry_after,
            message: text,
        },
        StatusClass::TooLarge => LlmError::ContextTooLong(text),
        _ if says_prompt_too_long(message) => LlmError::ContextTooLong(text),
        StatusClass::Transient => LlmError::Transient(text),
        StatusClass::Refused => LlmError::Permanent(text),
        StatusClass::Unexpected => match error_type {
            Some(_) => of_event(error_type, message, text),
            None => LlmError::InvalidResponse(format!("unexpected {text}")),
        },
    }
}

/// The kind of an `error` event in a started stream, by its type. An unknown type counts
/// as transient: the request was accepted, the failure happened after.
pub(crate) fn of_event(error_type: Option<&str>, message: &str, text: String) -> LlmError {
    match error_type.unwrap_or_default() {
        "authentication_error" | "permission_error" => LlmError::Auth(text),
        "rate_limit_error" => LlmError::RateLimited {
            retry_after: None,
            message: text,
        },
        "request_too_large" => LlmError::ContextTooLong(text),
        _ if says_prompt_too_long(message) => LlmError::ContextTooLong(text),
        "invalid_request_error" | "not_found_error" | "billing_error" => LlmError::Permanent(text),
        _ => LlmError::Transient(text),
    }
}

/// Whether a message says the prompt does not fit the context window ("prompt is too long:
/// 215000 tokens > 200000 maximum").
fn says_prompt_too_long(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    ["prompt is too long", "context window", "context length"]
        .iter()
        .any(|hint| m.contains(hint))
}

/// `message (type: …)`, shortened.
pub(crate) fn describe(error_type: Option<&str>, message: &str) -> String {
    let mut out = excerpt(message, MAX_MESSAGE_CHARS);
    if out.is_empty() {
        out.push_str("no error message");
    }
    if let Some(kind) = error_type {
        out.push_str(&format!(" (type: {})", excerpt(kind, 80)));
    }
    out
}

fn text(value: &Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kind(status: u16, error_type: &str, message: &str) -> LlmError {
        of_status(status, Some(error_type), message, None, message.into())
    }

    #[test]
    fn statuses_have_their_kinds() {
        assert!(matches!(
            kind(401, "authentication_error", "invalid x-api-key"),
            LlmError::Auth(_)
        ));
        assert!(matches!(
            kind(403, "permission_error", "no"),
            LlmError::Auth(_)
        ));
        assert!(matches!(
            kind(429, "rate_limit_error", "slow"),
            LlmError::RateLimited { .. }
        ));
        assert!(matches!(
            kind(529, "overloaded_error", "Overloaded"),
            LlmError::Transient(_)
        ));
        assert!(matches!(
            kind(500, "api_error", "oops"),
            LlmError::Transient(_)
        ));
        assert!(matches!(
            kind(404, "not_found_error", "model: claude-x"),
            LlmError::Permanent(_)
        ));
        assert!(matches!(
            kind(400, "invalid_request_error", "bad"),
            LlmError::Permanent(_)
        ));
        assert!(matches!(
            kind(
                400,
                "invalid_request_error",
                "prompt is too long: 215000 tokens > 200000 maximum"
            ),
            LlmError::ContextTooLong(_)
        ));
        assert!(matches!(
            kind(413, "request_too_large", "big"),
            LlmError::ContextTooLong(_)
        ));
    }

    #[test]
    fn stream_error_events_have_their_kinds() {
        let event = |t: &str| of_event(Some(t), "m", "m".into());
        assert!(matches!(event("overloaded_error"), LlmError::Transient(_)));
        assert!(matches!(event("api_error"), LlmError::Transient(_)));
        assert!(matches!(event("something_new"), LlmError::Transient(_)));
        assert!(matches!(
            event("invalid_request_error"),
            LlmError::Permanent(_)
        ));
        assert!(matches!(
            event("rate_limit_error"),
            LlmError::RateLimited { .. }
        ));
        assert!(matches!(event("authentication_error"), LlmError::Auth(_)));
    }

    #[test]
    fn error_bodies_are_read() {
        let body = json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}, "request_id": "req_011"});
        assert_eq!(
            ApiError::from_body(&body),
            Some(ApiError {
                error_type: Some("overloaded_error".into()),
                message: "Overloaded".into()
            })
        );
        assert_eq!(ApiError::from_body(&json!({"type": "message"})), None);
        assert_eq!(
            ApiError::from_raw_body(b"<html>bad gateway</html>").message,
            "<html>bad gateway</html>"
        );
    }
}
