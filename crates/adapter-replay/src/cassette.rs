//! The cassette format: a header line, then one [`Entry`] per LLM call.

use domain::llm::{ChatRequest, ChatResponse};
use domain::LlmError;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::time::Duration;

/// The format version written in the header.
pub const CASSETTE_VERSION: u32 = 1;

/// The first line of a cassette.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub cassette: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// The model the calls were made to, when known (informative only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// One recorded call: the request and what came back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// 1-based order in which the requests were made.
    pub seq: u64,
    /// The [`ChatRequest`] as JSON.
    pub request: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<ChatResponse>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorRecord>,
}

/// An [`LlmError`] as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorRecord {
    /// `rate_limited`, `transient`, `context_too_long`, `auth`, `permanent`,
    /// `response_format_unsupported`, `invalid_response`.
    pub kind: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
}

impl From<&LlmError> for ErrorRecord {
    fn from(err: &LlmError) -> ErrorRecord {
        let (kind, message, retry_after) = match err {
            LlmError::RateLimited {
                retry_after,
                message,
            } => ("rate_limited", message, *retry_after),
            LlmError::Transient(m) => ("transient", m, None),
            LlmError::ContextTooLong(m) => ("context_too_long", m, None),
            LlmError::Auth(m) => ("auth", m, None),
            LlmError::Permanent(m) => ("permanent", m, None),
            LlmError::ResponseFormatUnsupported(m) => ("response_format_unsupported", m, None),
            LlmError::InvalidResponse(m) => ("invalid_response", m, None),
        };
        ErrorRecord {
            kind: kind.to_owned(),
            message: message.clone(),
            retry_after_ms: retry_after.map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
        }
    }
}

impl From<&ErrorRecord> for LlmError {
    /// An unknown kind comes back as `Permanent`.
    fn from(rec: &ErrorRecord) -> LlmError {
        let m = rec.message.clone();
        match rec.kind.as_str() {
            "rate_limited" => LlmError::RateLimited {
                retry_after: rec.retry_after_ms.map(Duration::from_millis),
                message: m,
            },
            "transient" => LlmError::Transient(m),
            "context_too_long" => LlmError::ContextTooLong(m),
            "auth" => LlmError::Auth(m),
            "response_format_unsupported" => LlmError::ResponseFormatUnsupported(m),
            "invalid_response" => LlmError::InvalidResponse(m),
            _ => LlmError::Permanent(m),
        }
    }
}

/// A request as the JSON value it is compared by. It goes through text so that numbers
/// compare the same as when read back from a file (an `f32` temperature of 0.2 is written
/// `0.2`, not `0.20000000298023224`).
pub(crate) fn request_value(request: &ChatRequest) -> Result<Value, String> {
    let text = serde_json::to_string(request).map_err(|e| e.to_string())?;
    serde_json::from_str(&text).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::llm::{CallPurpose, ChatMessage};

    #[test]
    fn every_error_kind_round_trips() {
        for err in [
            LlmError::RateLimited {
                retry_after: Some(Duration::from_millis(1500)),
                message: "slow".into(),
            },
            LlmError::RateLimited {
                retry_after: None,
                message: "slow".into(),
            },
            LlmError::Transient("t".into()),
            LlmError::ContextTooLong("c".into()),
            LlmError::Auth("a".into()),
            LlmError::Permanent("p".into()),
            LlmError::ResponseFormatUnsupported("f".into()),
            LlmError::InvalidResponse("i".into()),
        ] {
            let rec = ErrorRecord::from(&err);
            let text = serde_json::to_string(&rec).unwrap();
            let back: ErrorRecord = serde_json::from_str(&text).unwrap();
            assert_eq!(LlmError::from(&back), err, "{text}");
        }
        let odd = ErrorRecord {
            kind: "martian".into(),
            message: "m".into(),
            retry_after_ms: None,
        };
        assert_eq!(LlmError::from(&odd), LlmError::Permanent("m".into()));
    }

    #[test]
    fn float_fields_compare_equal_after_a_file_round_trip() {
        let mut r = ChatRequest::new(CallPurpose::Plan, vec![ChatMessage::user("x")]);
        r.temperature = Some(0.2);
        let live = request_value(&r).unwrap();
        let stored: Value = serde_json::from_str(&serde_json::to_string(&live).unwrap()).unwrap();
        assert_eq!(live, stored);
        assert_eq!(live["temperature"], serde_json::json!(0.2));
    }
}
