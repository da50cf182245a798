//! [`AnthropicConfig`]: where the Messages API is, which model, how many tokens a reply may
//! have, and how patiently to talk to it.

use std::fmt;
use std::time::Duration;

use http_client::RetryPolicy;

/// Anthropic's public endpoint, used when no other base URL is given. Requests go to
/// `{base_url}/v1/messages`.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";

/// The environment variable the Anthropic SDKs read the key from; `--provider anthropic`
/// reads it too (`AnthropicProvider`).
pub const API_KEY_VAR: &str = "ANTHROPIC_API_KEY";
/// The environment variable the Anthropic SDKs read a base URL from (a proxy, a gateway).
pub const BASE_URL_VAR: &str = "ANTHROPIC_BASE_URL";

/// The `anthropic-version` header sent with every request: the API version whose wire
/// format this crate speaks.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The default [`AnthropicConfig::max_tokens`]: the Messages API requires a limit on every
/// request; 8192 fits every current Claude model and any one agent turn.
pub const DEFAULT_MAX_TOKENS: u32 = 8192;

/// The default [`AnthropicConfig::max_response_bytes`]: 16 MiB, far above any real reply.
pub const DEFAULT_MAX_RESPONSE_BYTES: u64 = 16 << 20;

/// Settings of an [`AnthropicClient`](crate::AnthropicClient).
///
/// `Debug` never prints the API key.
#[derive(Clone, PartialEq, Eq)]
pub struct AnthropicConfig {
    /// API root, e.g. `https://api.anthropic.com` (requests go to `{base_url}/v1/messages`);
    /// a base URL that already ends in `/v1` gets `/messages` only. A trailing `/` is ignored.
    pub base_url: String,
    /// Sent as `x-api-key`. Required for [`DEFAULT_BASE_URL`]; a proxy at another base URL
    /// may do without.
    pub api_key: Option<String>,
    /// The `model` field of every request (`claude-sonnet-4-5`, ...).
    pub model: String,
    /// `max_tokens` of a request that sets none itself (the API requires one).
    pub max_tokens: u32,
    /// Limit for one HTTP attempt, from connecting to the last byte of the body.
    pub request_timeout: Duration,
    /// Retries after the first attempt, for rate limits and transient failures only.
    pub max_retries: u32,
    /// First backoff delay; it doubles per retry (with jitter) up to `max_backoff`.
    pub initial_backoff: Duration,
    pub max_backoff: Duration,
    /// A server's `retry-after` is honoured up to this; longer waits are capped to it.
    pub max_retry_after: Duration,
    /// Certificates (PEM) trusted beside the platform's roots (`--ca-cert FILE`).
    pub extra_root_certs: Vec<Vec<u8>>,
    /// Ask for a server-sent-event stream (`"stream": true`) and assemble it.
    pub stream: bool,
    /// With `stream`, the longest wait for the next piece of the stream: a reply that stalls
    /// fails (transient, so retried) without waiting for the whole `request_timeout`.
    pub stream_idle_timeout: Duration,
    /// Put `cache_control` breakpoints on the stable prefix of every request (the `//!` doc
    /// of the crate says where).
    pub prompt_caching: bool,
    /// Largest reply body read (streamed or not, error replies too): reading stops past it
    /// and the call fails ([`LlmError::InvalidResponse`], not retried).
    ///
    /// [`LlmError::InvalidResponse`]: domain::LlmError::InvalidResponse
    pub max_response_bytes: u64,
}

impl AnthropicConfig {
    /// Defaults: Anthropic's endpoint, no key, `max_tokens` 8192, 120 s timeout, 4 retries,
    /// backoff 500 ms → 30 s, `retry-after` capped at 60 s, no streaming (30 s idle limit when
    /// on), prompt caching on, replies up to 16 MiB.
    pub fn new(model: impl Into<String>) -> AnthropicConfig {
        AnthropicConfig {
            base_url: DEFAULT_BASE_URL.to_owned(),
            api_key: None,
            model: model.into(),
            max_tokens: DEFAULT_MAX_TOKENS,
            request_timeout: Duration::from_secs(120),
            max_retries: 4,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(60),
            extra_root_certs: Vec::new(),
            stream: false,
            stream_idle_timeout: Duration::from_secs(30),
            prompt_caching: true,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
        }
    }

    pub fn with_base_url(mut self, base_url: impl Into<String>) -> AnthropicConfig {
        self.base_url = base_url.into();
        self
    }

    pub fn with_api_key(mut self, api_key: impl Into<String>) -> AnthropicConfig {
        self.api_key = Some(api_key.into());
        self
    }

    /// See [`AnthropicConfig::max_tokens`].
    pub fn with_max_tokens(mut self, max_tokens: u32) -> AnthropicConfig {
        self.max_tokens = max_tokens;
        self
    }

    pub fn with_request_timeout(mut self, timeout: Duration) -> AnthropicConfig {
        self.request_timeout = timeout;
        self
    }

    pub fn with_max_retries(mut self, max_retries: u32) -> AnthropicConfig {
        self.max_retries = max_retries;
        self
    }

    /// Sets the first and the largest computed backoff delay.
    pub fn with_backoff(mut self, initial: Duration, max: Duration) -> AnthropicConfig {
        self.initial_backoff = initial;
        self.max_backoff = max;
        self
    }

    pub fn with_max_retry_after(mut self, max_retry_after: Duration) -> AnthropicConfig {
        self.max_retry_after = max_retry_after;
        self
    }

    pub fn with_stream(mut self, stream: bool) -> AnthropicConfig {
        self.stream = stream;
        self
    }

    /// See [`AnthropicConfig::stream_idle_timeout`].
    pub fn with_stream_idle_timeout(mut self, timeout: Duration) -> AnthropicConfig {
        self.stream_idle_timeout = timeout;
        self
    }

    /// See [`AnthropicConfig::prompt_caching`].
    pub fn with_prompt_caching(mut self, on: bool) -> AnthropicConfig {
        self.prompt_caching = on;
        self
    }

    /// See [`AnthropicConfig::max_response_bytes`].
    pub fn with_max_response_bytes(mut self, limit: u64) -> AnthropicConfig {
        self.max_response_bytes = limit;
        self
    }

    /// How a call is retried (`max_retries`, the backoff, the `retry-after` cap).
    pub(crate) fn retry_policy(&self) -> RetryPolicy {
        RetryPolicy {
            max_retries: self.max_retries,
            initial_backoff: self.initial_backoff,
            max_backoff: self.max_backoff,
            max_retry_after: self.max_retry_after,
        }
    }

    /// The key as it will be sent: trimmed, `None` when blank.
    pub(crate) fn effective_api_key(&self) -> Option<&str> {
        self.api_key
            .as_deref()
            .map(str::trim)
            .filter(|k| !k.is_empty())
    }
}

/// Stands in for the API key wherever it could otherwise show.
pub(crate) const REDACTED: &str = "[REDACTED]";

impl fmt::Debug for AnthropicConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnthropicConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| REDACTED))
            .field("model", &self.model)
            .field("max_tokens", &self.max_tokens)
            .field("request_timeout", &self.request_timeout)
            .field("max_retries", &self.max_retries)
            .field("initial_backoff", &self.initial_backoff)
            .field("max_backoff", &self.max_backoff)
            .field("max_retry_after", &self.max_retry_after)
            .field("stream", &self.stream)
            .field("stream_idle_timeout", &self.stream_idle_timeout)
            .field("prompt_caching", &self.prompt_caching)
            .field("max_response_bytes", &self.max_response_bytes)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_documented_values() {
        let c = AnthropicConfig::new("claude-sonnet-4-5");
        assert_eq!(c.base_url, "https://api.anthropic.com");
        assert_eq!(c.api_key, None);
        assert_eq!(c.max_tokens, 8192);
        assert_eq!(c.request_timeout, Duration::from_secs(120));
        assert_eq!(c.max_retries, 4);
        assert_eq!(c.initial_backoff, Duration::from_millis(500));
        assert_eq!(c.max_backoff, Duration::from_secs(30));
        assert_eq!(c.max_retry_after, Duration::from_secs(60));
        assert!(!c.stream);
        assert_eq!(c.stream_idle_timeout, Duration::from_secs(30));
        assert!(c.prompt_caching);
        assert_eq!(c.max_response_bytes, 16 * 1024 * 1024);
    }

    #[test]
    fn debug_redacts_the_key_and_blank_keys_are_not_sent() {
        let c = AnthropicConfig::new("m").with_api_key("sk-ant-secret-123");
        let shown = format!("{c:?} {c:#?}");
        assert!(!shown.contains("sk-ant-secret-123"), "{shown}");
        assert!(shown.contains(REDACTED));
        assert_eq!(
            AnthropicConfig::new("m")
                .with_api_key(" \n")
                .effective_api_key(),
            None
        );
        assert_eq!(
            AnthropicConfig::new("m")
                .with_api_key("sk-ant-1\n")
                .effective_api_key(),
            Some("sk-ant-1")
        );
    }
}
