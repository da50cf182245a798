//! [`OpenAiConfig`]: where the server is, which model, and how patiently to talk to it.

use std::fmt;
use std::time::Duration;

use http_client::RetryPolicy;

/// The public OpenAI endpoint, used when no other base URL is given.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// How tools are offered to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolProtocol {
    /// The server's own tool calling (`tools` in the request, `tool_calls` in the reply).
    #[default]
    Native,
    /// For models without tool calling: the tools are described in the system prompt, the
    /// model writes `{"tool": NAME, "arguments": {...}}` (or a list of them) in its reply,
    /// and tool results go back as user messages.
    Text,
}

/// Which assistant turns keep their `reasoning_content` when sent back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReasoningEcho {
    /// Every assistant turn that has some (compatible servers ignore what they do not use).
    #[default]
    Always,
    /// Only the turns after the last user message: the tool loop of the current question
    /// (DeepSeek's thinking mode wants exactly these back).
    CurrentTurn,
    /// Never (OpenAI, which has no such field).
    Never,
}

/// Settings of an [`OpenAiClient`](crate::OpenAiClient).
///
/// `Debug` never prints the API key.
#[derive(Clone, PartialEq, Eq)]
pub struct OpenAiConfig {
    /// API root, e.g. `https://api.openai.com/v1` or `http://localhost:11434/v1` (Ollama);
    /// requests go to `{base_url}/chat/completions`. A trailing `/` is ignored.
    pub base_url: String,
    /// Sent as `Authorization: Bearer …` when set (and not blank). Local servers need none.
    pub api_key: Option<String>,
    /// The `model` field of every request.
    pub model: String,
    /// Limit for one HTTP attempt, from connecting to the last byte of the body.
    pub request_timeout: Duration,
    /// Retries after the first attempt, for rate limits and transient failures only.
    pub max_retries: u32,
    /// First backoff delay; it doubles per retry (with jitter) up to `max_backoff`.
    pub initial_backoff: Duration,
    pub max_backoff: Duration,
    /// A server's `Retry-After` is honoured up to this; longer waits are capped to it.
    pub max_retry_after: Duration,
    /// Certificates (PEM) trusted beside the platform's roots: a company proxy's or a local
    /// server's CA (`--ca-cert FILE`).
    pub extra_root_certs: Vec<Vec<u8>>,
    /// Ask for a server-sent-event stream (`"stream": true`) and assemble it.
    pub stream: bool,
    /// With `stream`, the longest wait for the next piece of the stream: a reply that stalls
    /// fails (transient, so retried) without waiting for the whole `request_timeout`.
    pub stream_idle_timeout: Duration,
    /// With `stream`, also send `stream_options: {"include_usage": true}` so the last chunk
    /// carries the token usage (OpenAI, vLLM, DeepSeek, OpenRouter understand it).
    pub stream_usage: bool,
    /// Native tool calling, or the text protocol for models without it.
    pub tool_protocol: ToolProtocol,
    /// The server takes `response_format: {"type": "json_schema"}`. When false, a request
    /// asking for it is answered [`LlmError::ResponseFormatUnsupported`] without being sent
    /// (the domain then asks another way).
    ///
    /// [`LlmError::ResponseFormatUnsupported`]: domain::LlmError::ResponseFormatUnsupported
    pub json_schema: bool,
    /// The server takes `response_format: {"type": "json_object"}`; as `json_schema`.
    pub json_object: bool,
    /// Which assistant turns carry `reasoning_content` back to the server.
    pub reasoning_echo: ReasoningEcho,
    /// Largest reply body read (streamed or not, error replies too): reading stops past it
    /// and the call fails ([`LlmError::InvalidResponse`], not retried), so a huge reply
    /// never sits in memory.
    ///
    /// [`LlmError::InvalidResponse`]: domain::LlmError::InvalidResponse
    pub max_response_bytes: u64,
}

/// The default [`OpenAiConfig::max_response_bytes`]: 16 MiB, far above any real reply.
pub const DEFAULT_MAX_RESPONSE_BYTES: u64 = 16 << 20;

impl OpenAiConfig {
    /// Defaults: the OpenAI endpoint, no key, 120 s timeout, 4 retries, backoff 500 ms → 30 s,
    /// `Retry-After` capped at 60 s, replies up to 16 MiB; no streaming, native tool calling, both JSON
    /// `response_format`s sent, reasoning sent back on every turn that has some.
    pub fn new(model: impl Into<String>) -> OpenAiConfig {
        OpenAiConfig {
            base_url: DEFAULT_BASE_URL.to_owned(),
            api_key: None,
            model: model.into(),
            request_timeout: Duration::from_secs(120),
            max_retries: 4,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(60),
            extra_root_certs: Vec::new(),
            stream: false,
            stream_idle_timeout: Duration::from_secs(30),
            stream_usage: true,
            tool_protocol: ToolProtocol::Native,
            json_schema: true,
            json_object: true,
            reasoning_echo: ReasoningEcho::Always,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
        }
    }

    /// An OpenAI-compatible server (Ollama, vLLM, llama.cpp, LM Studio, DeepSeek, OpenRouter…)
    /// at `base_url`, with the other defaults of [`OpenAiConfig::new`].
    pub fn compatible(base_url: impl Into<String>, model: impl Into<String>) -> OpenAiConfig {
        OpenAiConfig::new(model).with_base_url(base_url)
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

    pub fn with_base_url(mut self, base_url: impl Into<String>) -> OpenAiConfig {
        self.base_url = base_url.into();
        self
    }

    pub fn with_api_key(mut self, api_key: impl Into<String>) -> OpenAiConfig {
        self.api_key = Some(api_key.into());
        self
    }

    /// See [`OpenAiConfig::stream_idle_timeout`].
    pub fn with_stream_idle_timeout(mut self, timeout: Duration) -> OpenAiConfig {
        self.stream_idle_timeout = timeout;
        self
    }

    pub fn with_request_timeout(mut self, timeout: Duration) -> OpenAiConfig {
        self.request_timeout = timeout;
        self
    }

    pub fn with_max_retries(mut self, max_retries: u32) -> OpenAiConfig {
        self.max_retries = max_retries;
        self
    }

    /// Sets the first and the largest computed backoff delay.
    pub fn with_backoff(mut self, initial: Duration, max: Duration) -> OpenAiConfig {
        self.initial_backoff = initial;
        self.max_backoff = max;
        self
    }

    pub fn with_max_retry_after(mut self, max_retry_after: Duration) -> OpenAiConfig {
        self.max_retry_after = max_retry_after;
        self
    }

    pub fn with_stream(mut self, stream: bool) -> OpenAiConfig {
        self.stream = stream;
        self
    }

    pub fn with_tool_protocol(mut self, protocol: ToolProtocol) -> OpenAiConfig {
        self.tool_protocol = protocol;
        self
    }

    /// Which `response_format` types the server takes (see [`OpenAiConfig::json_schema`]).
    pub fn with_response_formats(mut self, json_schema: bool, json_object: bool) -> OpenAiConfig {
        self.json_schema = json_schema;
        self.json_object = json_object;
        self
    }

    /// See [`OpenAiConfig::max_response_bytes`].
    pub fn with_max_response_bytes(mut self, limit: u64) -> OpenAiConfig {
        self.max_response_bytes = limit;
        self
    }

    pub fn with_reasoning_echo(mut self, echo: ReasoningEcho) -> OpenAiConfig {
        self.reasoning_echo = echo;
        self
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

impl fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| REDACTED))
            .field("model", &self.model)
            .field("request_timeout", &self.request_timeout)
            .field("max_retries", &self.max_retries)
            .field("initial_backoff", &self.initial_backoff)
            .field("max_backoff", &self.max_backoff)
            .field("max_retry_after", &self.max_retry_after)
            .field("stream", &self.stream)
            .field("stream_idle_timeout", &self.stream_idle_timeout)
            .field("stream_usage", &self.stream_usage)
            .field("tool_protocol", &self.tool_protocol)
            .field("json_schema", &self.json_schema)
            .field("json_object", &self.json_object)
            .field("reasoning_echo", &self.reasoning_echo)
            .field("max_response_bytes", &self.max_response_bytes)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_documented_values() {
        let c = OpenAiConfig::new("gpt-4o-mini");
        assert_eq!(c.base_url, "https://api.openai.com/v1");
        assert_eq!(c.api_key, None);
        assert_eq!(c.max_response_bytes, 16 * 1024 * 1024);
        assert_eq!(c.model, "gpt-4o-mini");
        assert_eq!(c.request_timeout, Duration::from_secs(120));
        assert_eq!(c.max_retries, 4);
        assert_eq!(c.initial_backoff, Duration::from_millis(500));
        assert_eq!(c.max_backoff, Duration::from_secs(30));
        assert_eq!(c.max_retry_after, Duration::from_secs(60));
        assert!(!c.stream);
        assert_eq!(c.tool_protocol, ToolProtocol::Native);
        assert!(c.json_schema && c.json_object);
        assert_eq!(c.reasoning_echo, ReasoningEcho::Always);
    }

    #[test]
    fn debug_redacts_the_key() {
        let c = OpenAiConfig::new("m").with_api_key("sk-secret-123");
        let shown = format!("{c:?} {c:#?}");
        assert!(!shown.contains("sk-secret-123"), "{shown}");
        assert!(shown.contains(REDACTED));
    }

    #[test]
    fn blank_keys_are_not_sent() {
        assert_eq!(
            OpenAiConfig::new("m")
                .with_api_key("  ")
                .effective_api_key(),
            None
        );
        assert_eq!(
            OpenAiConfig::new("m")
                .with_api_key("sk-1\n")
                .effective_api_key(),
            Some("sk-1")
        );
    }
}
