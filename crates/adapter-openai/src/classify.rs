//! Turning what the server said (status, headers, error body) into an [`LlmError`] the caller
//! can act on (the status's class from `http_client::StatusClass`, refined by the error
//! body), plus the text helpers used to build error messages.

use std::time::Duration;

use domain::LlmError;
use http_client::StatusClass;
use serde_json::Value;

pub(crate) use http_client::excerpt;

/// How much of a server message or body goes into an error.
const MAX_MESSAGE_CHARS: usize = 500;

/// An error as a server reported it, from an error body or from the bare status.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ServerError {
    pub message: String,
    /// `error.code`, as text (`context_length_exceeded`, `rate_limit_exceeded`, `502`…).
    pub code: Option<String>,
    /// `error.type` (`invalid_request_error`, `server_error`…).
    pub kind: Option<String>,
}

impl ServerError {
    /// Reads an error object out of a body, in any of the shapes compatible servers use:
    /// `{"error": {"message", "type", "code"}}` (OpenAI), `{"error": "text"}` (Ollama),
    /// `{"object": "error", "message", "type", "code"}` (vLLM), `{"detail": …}` (FastAPI).
    /// `None` when the body holds no error.
    pub fn from_body(body: &Value) -> Option<ServerError> {
        let obj = body.as_object()?;
        match obj.get("error") {
            Some(Value::Null) | None => {}
            Some(Value::Object(err)) => {
                return Some(ServerError {
                    message: err
                        .get("message")
                        .and_then(text)
                        .or_else(|| err.get("metadata").map(Value::to_string))
                        .unwrap_or_default(),
                    code: err.get("code").and_then(text),
                    kind: err.get("type").and_then(text),
                });
            }
            Some(other) => {
                return Some(ServerError {
                    message: text(other).unwrap_or_default(),
                    ..ServerError::default()
                })
            }
        }
        if obj.get("object").and_then(Value::as_str) == Some("error") {
            return Some(ServerError {
                message: obj.get("message").and_then(text).unwrap_or_default(),
                code: obj.get("code").and_then(text),
                kind: obj.get("type").and_then(text),
            });
        }
        if !obj.contains_key("choices") {
            if let Some(detail) = obj.get("detail").and_then(text) {
                return Some(ServerError {
                    message: detail,
                    ..ServerError::default()
                });
            }
        }
        None
    }

    /// The error in a non-2xx body, or the body itself (shortened) when it is not one.
    pub fn from_raw_body(raw: &[u8]) -> ServerError {
        serde_json::from_slice::<Value>(raw)
            .ok()
            .and_then(|v| ServerError::from_body(&v))
            .unwrap_or_else(|| ServerError {
                message: excerpt(&String::from_utf8_lossy(raw), MAX_MESSAGE_CHARS),
                ..ServerError::default()
            })
    }

    /// `error.code` when it is an HTTP status (OpenRouter puts one in HTTP 200 error bodies).
    fn status_code(&self) -> Option<u16> {
        self.code
            .as_deref()
            .and_then(|c| c.parse::<u16>().ok())
            .filter(|c| (400..600).contains(c))
    }

    fn is_one_of(&self, names: &[&str]) -> bool {
        let matches = |field: &Option<String>| {
            field
                .as_deref()
                .is_some_and(|v| names.iter().any(|n| v.eq_ignore_ascii_case(n)))
        };
        matches(&self.code) || matches(&self.kind)
    }

    fn is_context_overflow(&self) -> bool {
        const CODES: &[&str] = &[
            "context_length_exceeded",
            "exceed_context_size_error",
            "string_above_max_length",
        ];
        const HINTS: &[&str] = &[
            "context length",
            "context_length",
            "maximum context",
            "context window",
            "context size",
            "too many tokens",
            "prompt is too long",
        ];
        if self.is_one_of(CODES) {
            return true;
        }
        let message = self.message.to_ascii_lowercase();
        HINTS.iter().any(|hint| message.contains(hint))
    }

    /// Whether the server refuses the `response_format` it was sent: the message names
    /// `response_format`, `json_schema` or `json_object` (OpenAI's "'response_format' of type
    /// 'json_object' is not supported with this model", LM Studio's "'response_format.type'
    /// must be 'json_schema'", DeepSeek's "This response_format type is unavailable now").
    /// OpenAI's complaint that no message says "json" is not one: the format is fine, the
    /// prompt is not.
    fn refuses_response_format(&self) -> bool {
        let m = self.message.to_ascii_lowercase();
        [
            "response_format",
            "response format",
            "json_schema",
            "json_object",
        ]
        .iter()
        .any(|hint| m.contains(hint))
            && !m.contains("must contain the word")
    }

    fn is_quota_exhausted(&self) -> bool {
        self.is_one_of(&["insufficient_quota", "billing_hard_limit_reached"])
    }

    /// `message (code: …, type: …)`, shortened.
    fn describe(&self) -> String {
        let mut out = excerpt(&self.message, MAX_MESSAGE_CHARS);
        if out.is_empty() {
            out.push_str("no error message");
        }
        let details: Vec<String> = [("code", &self.code), ("type", &self.kind)]
            .into_iter()
            .filter_map(|(label, v)| v.as_ref().map(|v| format!("{label}: {}", excerpt(v, 80))))
            .collect();
        if !details.is_empty() {
            out.push_str(&format!(" ({})", details.join(", ")));
        }
        out
    }
}

/// Classifies a non-2xx reply.
///
/// 401/403 → `Auth`; 429 → `RateLimited` (with `retry_after`) unless the quota is used up;
/// a context overflow (by code or message, any status but those) → `ContextTooLong`;
/// 413 → `ContextTooLong`; 408, 409, 425, 5xx → `Transient`; another 4xx naming the
/// response format → `ResponseFormatUnsupported`; other 4xx → `Permanent`.
pub(crate) fn classify_status(
    status: u16,
    retry_after: Option<Duration>,
    err: &ServerError,
) -> LlmError {
    let text = format!("HTTP {status}: {}", err.describe());
    match StatusClass::of(status) {
        StatusClass::Auth => LlmError::Auth(text),
        StatusClass::RateLimited if err.is_quota_exhausted() => LlmError::Permanent(text),
        StatusClass::RateLimited => LlmError::RateLimited {
            retry_after,
            message: text,
        },
        _ if err.is_context_overflow() => LlmError::ContextTooLong(text),
        StatusClass::TooLarge => LlmError::ContextTooLong(text),
        StatusClass::Transient => LlmError::Transient(text),
        StatusClass::Refused if err.refuses_response_format() => {
            LlmError::ResponseFormatUnsupported(text)
        }
        StatusClass::Refused => LlmError::Permanent(text),
        StatusClass::Unexpected => LlmError::InvalidResponse(format!("unexpected {text}")),
    }
}

/// Classifies an error object that came in a 2xx reply (some proxies and compatible servers
/// report failures that way). A numeric `code` is read as the status; otherwise the code and
/// type decide, and an unrecognised error counts as transient: the request itself was
/// accepted, so the failure happened upstream.
pub(crate) fn classify_error_in_success(
    status: u16,
    retry_after: Option<Duration>,
    err: &ServerError,
) -> LlmError {
    if let Some(code) = err.status_code() {
        return classify_status(code, retry_after, err);
    }
    let text = format!("error in an HTTP {status} reply: {}", err.describe());
    if err.is_context_overflow() {
        LlmError::ContextTooLong(text)
    } else if err.is_one_of(&[
        "invalid_api_key",
        "authentication_error",
        "permission_error",
        "unauthorized",
    ]) {
        LlmError::Auth(text)
    } else if err.is_quota_exhausted() {
        LlmError::Permanent(text)
    } else if err.is_one_of(&["rate_limit_exceeded", "rate_limit_error", "rate_limit"]) {
        LlmError::RateLimited {
            retry_after,
            message: text,
        }
    } else if err.is_one_of(&[
        "invalid_request_error",
        "not_found_error",
        "model_not_found",
    ]) {
        if err.refuses_response_format() {
            LlmError::ResponseFormatUnsupported(text)
        } else {
            LlmError::Permanent(text)
        }
    } else {
        LlmError::Transient(text)
    }
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

    fn err(body: Value) -> ServerError {
        ServerError::from_body(&body).unwrap()
    }

    #[test]
    fn error_body_shapes() {
        assert_eq!(
            err(json!({"error": {"message": "m", "type": "t", "code": "c"}})),
            ServerError {
                message: "m".into(),
                code: Some("c".into()),
                kind: Some("t".into())
            }
        );
        assert_eq!(
            err(json!({"error": "model not found"})).message,
            "model not found"
        );
        let vllm =
            err(json!({"object": "error", "message": "m", "type": "BadRequestError", "code": 400}));
        assert_eq!(vllm.code.as_deref(), Some("400"));
        assert_eq!(err(json!({"detail": "Not Found"})).message, "Not Found");
        assert_eq!(ServerError::from_body(&json!({"choices": []})), None);
        assert_eq!(
            ServerError::from_body(&json!({"error": null, "choices": []})),
            None
        );
        assert_eq!(
            ServerError::from_raw_body(b"<html>\n502 Bad Gateway</html>").message,
            "<html> 502 Bad Gateway</html>"
        );
    }

    #[test]
    fn statuses() {
        let e = ServerError {
            message: "boom".into(),
            ..ServerError::default()
        };
        assert!(matches!(classify_status(401, None, &e), LlmError::Auth(_)));
        assert!(matches!(classify_status(403, None, &e), LlmError::Auth(_)));
        assert_eq!(
            classify_status(429, Some(Duration::from_secs(2)), &e),
            LlmError::RateLimited {
                retry_after: Some(Duration::from_secs(2)),
                message: "HTTP 429: boom".into()
            }
        );
        for s in [408, 409, 425, 500, 502, 503, 504, 529] {
            assert!(
                matches!(classify_status(s, None, &e), LlmError::Transient(_)),
                "{s}"
            );
        }
        for s in [400, 404, 422] {
            assert!(
                matches!(classify_status(s, None, &e), LlmError::Permanent(_)),
                "{s}"
            );
        }
        assert!(matches!(
            classify_status(413, None, &e),
            LlmError::ContextTooLong(_)
        ));
        let quota = err(
            json!({"error": {"message": "You exceeded your current quota", "type": "insufficient_quota", "code": "insufficient_quota"}}),
        );
        assert!(matches!(
            classify_status(429, None, &quota),
            LlmError::Permanent(_)
        ));
    }

    #[test]
    fn context_overflow_by_code_or_message() {
        for body in [
            json!({"error": {"message": "x", "code": "context_length_exceeded"}}),
            json!({"error": {"message": "This model's maximum context length is 8192 tokens."}}),
            json!({"error": {"message": "the request exceeds the available context size", "type": "exceed_context_size_error"}}),
            json!({"error": {"message": "prompt is too long: 210000 tokens > 200000 maximum"}}),
            json!({"error": "Too many tokens in the prompt"}),
        ] {
            assert!(
                matches!(
                    classify_status(400, None, &err(body.clone())),
                    LlmError::ContextTooLong(_)
                ),
                "{body}"
            );
        }
        // Auth and rate limits win over message hints.
        let e = err(json!({"error": {"message": "too many tokens per minute"}}));
        assert!(matches!(
            classify_status(429, None, &e),
            LlmError::RateLimited { .. }
        ));
    }

    #[test]
    fn errors_inside_success_replies() {
        let upstream = err(json!({"error": {"message": "Provider returned error", "code": 502}}));
        assert!(matches!(
            classify_error_in_success(200, None, &upstream),
            LlmError::Transient(m) if m.starts_with("HTTP 502")
        ));
        let auth = err(json!({"error": {"message": "bad key", "code": 401}}));
        assert!(matches!(
            classify_error_in_success(200, None, &auth),
            LlmError::Auth(_)
        ));
        let invalid = err(json!({"error": {"message": "bad", "type": "invalid_request_error"}}));
        assert!(matches!(
            classify_error_in_success(200, None, &invalid),
            LlmError::Permanent(_)
        ));
        let context = err(json!({"error": {"message": "x", "code": "context_length_exceeded"}}));
        assert!(matches!(
            classify_error_in_success(200, None, &context),
            LlmError::ContextTooLong(_)
        ));
        let limit = err(json!({"error": {"message": "slow down", "type": "rate_limit_error"}}));
        assert!(matches!(
            classify_error_in_success(200, None, &limit),
            LlmError::RateLimited { .. }
        ));
        let unknown = err(json!({"error": {"message": "???"}}));
        assert!(matches!(
            classify_error_in_success(200, None, &unknown),
            LlmError::Transient(_)
        ));
    }

    #[test]
    fn response_format_refusals() {
        for body in [
            json!({"error": "'response_format.type' must be 'json_schema'"}),
            json!({"error": {"message": "Invalid parameter: 'response_format' of type 'json_object' is not supported with this model.", "type": "invalid_request_error"}}),
            json!({"error": {"message": "This response_format type is unavailable now", "code": "invalid_request_error"}}),
        ] {
            assert!(
                matches!(
                    classify_status(400, None, &err(body.clone())),
                    LlmError::ResponseFormatUnsupported(_)
                ),
                "{body}"
            );
        }
        assert!(matches!(
            classify_status(
                422,
                None,
                &err(json!({"detail": "json_schema is not supported"}))
            ),
            LlmError::ResponseFormatUnsupported(_)
        ));
        let word = err(
            json!({"error": {"message": "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'."}}),
        );
        assert!(matches!(
            classify_status(400, None, &word),
            LlmError::Permanent(_)
        ));
        assert!(matches!(
            classify_status(404, None, &err(json!({"error": "no model"}))),
            LlmError::Permanent(_)
        ));
        let in_success = err(
            json!({"error": {"message": "response_format is unavailable", "type": "invalid_request_error"}}),
        );
        assert!(matches!(
            classify_error_in_success(200, None, &in_success),
            LlmError::ResponseFormatUnsupported(_)
        ));
        let upstream = err(json!({"error": {"message": "response_format broke upstream"}}));
        assert!(matches!(
            classify_error_in_success(200, None, &upstream),
            LlmError::Transient(_)
        ));
    }

    #[test]
    fn long_messages_are_cut() {
        let e = ServerError {
            message: "x".repeat(5000),
            ..ServerError::default()
        };
        let LlmError::Permanent(text) = classify_status(400, None, &e) else {
            panic!("expected Permanent");
        };
        assert!(text.chars().count() < 600, "{}", text.len());
        assert!(text.ends_with('…'));
        assert_eq!(excerpt("héllo", 2), "hé…");
    }
}
