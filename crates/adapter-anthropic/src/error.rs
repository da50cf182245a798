//! The crate's errors: [`Error`], why a client could not be built, and [`CallError`], how one
//! call failed, typed here and turned into the port's [`LlmError`] kinds at the boundary
//! (`crate::classify` decides the kind of what the server reported).

use std::time::Duration;

use domain::LlmError;

use crate::classify::{self, excerpt};

/// Why an [`AnthropicClient`](crate::AnthropicClient) could not be built.
///
/// No variant ever carries the API key.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("invalid base URL '{url}': {reason}")]
    InvalidBaseUrl { url: String, reason: String },
    #[error("invalid API key: it contains characters that cannot be sent in an HTTP header")]
    InvalidApiKey,
    #[error("the Anthropic API needs a key: set {var} (or the config's api key)")]
    MissingApiKey { var: &'static str },
    #[error("invalid configuration: {0}")]
    InvalidConfig(String),
    #[error("could not build the HTTP client: {0}")]
    HttpClient(#[source] reqwest::Error),
    #[error("invalid CA certificate: {0}")]
    InvalidCaCert(String),
}

/// How one call to the Messages API failed. Each variant has one [`LlmError`] kind
/// (`From<CallError> for LlmError`); the retry loop reads [`CallError::retry_after`] of any
/// status (a 529 may carry one too), the port only keeps it for rate limits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// A non-2xx reply; the API's error `type` and `message` when the body had them.
    #[error("HTTP {status}: {}", classify::describe(error_type.as_deref(), message))]
    Status {
        status: u16,
        error_type: Option<String>,
        message: String,
        retry_after: Option<Duration>,
    },
    /// An error after the request was accepted: an `error` event in a stream that had
    /// started with HTTP 200 (`overloaded_error` is the usual one: a 529 that came late), or
    /// an error object in a 2xx body (proxies).
    #[error("error in the HTTP 200 reply: {}", classify::describe(error_type.as_deref(), message))]
    ErrorInReply {
        error_type: Option<String>,
        message: String,
    },
    /// `stop_reason: max_tokens` while the model was writing a `tool_use` block: the call is
    /// never run half-written; the same request may fit next time (transient).
    #[error(
        "the reply hit max_tokens ({max_tokens}) in the middle of the call to '{tool}'; \
         the call was not run (retry, or raise max_tokens)"
    )]
    ToolCallCutShort { tool: String, max_tokens: u32 },
    /// `stop_reason: refusal`: the model's safety systems stopped the reply.
    #[error("the model refused to answer (stop_reason refusal){}", text.as_deref().map(|t| format!("; it wrote: {:?}", excerpt(t, 200))).unwrap_or_default())]
    Refused { text: Option<String> },
    /// Nothing arrived on a started stream for `idle`.
    #[error("the event stream stalled: nothing for {} s (POST {endpoint})", idle.as_secs_f64())]
    Stalled { idle: Duration, endpoint: String },
    /// A body or stream that ended early.
    #[error("truncated HTTP {status} reply: {why}")]
    Truncated { status: u16, why: String },
    /// The attempt took longer than the request timeout.
    #[error("timed out after {timeout:?} while {doing} (POST {endpoint})")]
    TimedOut {
        timeout: Duration,
        doing: &'static str,
        endpoint: String,
    },
    /// No connection, or it failed while sending or reading.
    #[error("{} while {doing} (POST {endpoint}): {cause}", if *connect { "could not connect" } else { "failed" })]
    Transport {
        connect: bool,
        doing: &'static str,
        endpoint: String,
        cause: String,
    },
    /// reqwest could not even build the request.
    #[error("could not build the request to {endpoint}: {cause}")]
    Request { endpoint: String, cause: String },
    /// A reply larger than `max_response_bytes`: reading stopped there.
    #[error(
        "the HTTP {status} reply from POST {endpoint} is larger than {limit} bytes \
         (max_response_bytes); reading stopped there"
    )]
    TooLarge {
        status: u16,
        endpoint: String,
        limit: u64,
    },
    /// A reply that arrived whole but could not be understood.
    #[error("{0}")]
    Invalid(String),
    /// A `response_format` the Messages API has no parameter for; never sent.
    #[error(
        "response_format {0} is not sent to the Anthropic Messages API: it has no such \
         parameter"
    )]
    FormatUnsupported(&'static str),
}

impl CallError {
    /// How long the server asked to wait before the next attempt, whatever the status.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            CallError::Status { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// Whether the same request may succeed if sent again.
    pub fn is_retryable(&self) -> bool {
        LlmError::from(self.clone()).is_retryable()
    }
}

impl From<CallError> for LlmError {
    fn from(err: CallError) -> LlmError {
        let text = err.to_string();
        match err {
            CallError::Status {
                status,
                error_type,
                message,
                retry_after,
            } => classify::of_status(status, error_type.as_deref(), &message, retry_after, text),
            CallError::ErrorInReply {
                error_type,
                message,
            } => classify::of_event(error_type.as_deref(), &message, text),
            CallError::ToolCallCutShort { .. }
            | CallError::Stalled { .. }
            | CallError::Truncated { .. }
            | CallError::TimedOut { .. }
            | CallError::Transport { .. } => LlmError::Transient(text),
            CallError::Refused { .. } | CallError::Request { .. } => LlmError::Permanent(text),
            CallError::TooLarge { .. } | CallError::Invalid(_) => LlmError::InvalidResponse(text),
            CallError::FormatUnsupported(_) => LlmError::ResponseFormatUnsupported(text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_failure_has_its_port_kind() {
        let status = |status: u16, error_type: &str| CallError::Status {
            status,
            error_type: Some(error_type.into()),
            message: "m".into(),
            retry_after: None,
        };
        assert!(matches!(
            LlmError::from(status(529, "overloaded_error")),
            LlmError::Transient(_)
        ));
        assert!(status(529, "overloaded_error").is_retryable());
        assert!(!status(400, "invalid_request_error").is_retryable());
        let cut = CallError::ToolCallCutShort {
            tool: "file_write".into(),
            max_tokens: 10,
        };
        assert!(cut.is_retryable());
        assert!(cut.to_string().contains("'file_write'"), "{cut}");
        assert!(matches!(
            LlmError::from(CallError::Refused {
                text: Some("I can".into())
            }),
            LlmError::Permanent(m) if m.contains("refused") && m.contains("I can")
        ));
        assert!(matches!(
            LlmError::from(CallError::FormatUnsupported("json_schema")),
            LlmError::ResponseFormatUnsupported(_)
        ));
    }
}
