//! [`OpenAiClient`]: one `POST /chat/completions` per attempt, classified errors, retries;
//! around it the transcript repair and the text tool protocol. A `response_format` is sent
//! as asked; the server's refusal of it is reported, never worked around here.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use backon::{ExponentialBuilder, Retryable};
use chrono::Utc;
use domain::llm::{ChatRequest, ChatResponse, ResponseFormat};
use domain::ports::LlmClient;
use domain::LlmError;
use reqwest::header::{self, HeaderMap, HeaderValue};
use reqwest::Url;
use serde_json::Value;

use crate::classify::{self, ServerError};
use crate::config::{OpenAiConfig, ToolProtocol, REDACTED};
use crate::error::Error;
use crate::sse::{self, SseAssembler};
use crate::wire::{self, WireOptions};
use crate::{text_tools, transcript};

/// An [`LlmClient`] talking to an OpenAI-compatible Chat Completions endpoint.
///
/// Cheap to clone (clones share the connection pool). `Debug` never prints the API key.
#[derive(Clone)]
pub struct OpenAiClient {
    inner: Arc<Inner>,
}

struct Inner {
    http: reqwest::Client,
    config: OpenAiConfig,
    /// `{base_url}/chat/completions`.
    endpoint: Url,
    /// The endpoint without any userinfo, for messages and logs.
    endpoint_shown: String,
}

impl OpenAiClient {
    /// Validates `config` and builds the HTTP client. Nothing is sent yet.
    pub fn new(config: OpenAiConfig) -> Result<OpenAiClient, Error> {
        if config.model.trim().is_empty() {
            return Err(Error::InvalidConfig("the model name is empty".into()));
        }
        if config.request_timeout.is_zero() {
            return Err(Error::InvalidConfig(
                "request_timeout must be above zero".into(),
            ));
        }
        let endpoint = endpoint_url(&config.base_url)?;
        let endpoint_shown = shown_url(&endpoint);

        let mut headers = HeaderMap::new();
        headers.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
        if let Some(key) = config.effective_api_key() {
            let mut value = HeaderValue::from_str(&format!("Bearer {key}"))
                .map_err(|_| Error::InvalidApiKey)?;
            value.set_sensitive(true);
            headers.insert(header::AUTHORIZATION, value);
        }
        let builder = http_client::client_builder(
            http_client::Roots::for_scheme(endpoint.scheme()),
            &config.extra_root_certs,
        )
        .map_err(|e| Error::InvalidCaCert(e.to_string()))?;
        let http = builder
            .user_agent(concat!(
                "planwright-adapter-openai/",
                env!("CARGO_PKG_VERSION")
            ))
            .default_headers(headers)
            .timeout(config.request_timeout)
            .connect_timeout(config.request_timeout.min(Duration::from_secs(30)))
            .build()
            .map_err(|e| Error::HttpClient(e.without_url()))?;

        Ok(OpenAiClient {
            inner: Arc::new(Inner {
                http,
                config,
                endpoint,
                endpoint_shown,
            }),
        })
    }

    /// The model every request names.
    pub fn model(&self) -> &str {
        &self.inner.config.model
    }

    /// The URL requests are posted to (without credentials).
    pub fn endpoint(&self) -> &str {
        &self.inner.endpoint_shown
    }

    fn backoff(&self) -> ExponentialBuilder {
        let c = &self.inner.config;
        ExponentialBuilder::default()
            .with_jitter()
            .with_factor(2.0)
            .with_min_delay(c.initial_backoff)
            .with_max_delay(c.max_backoff.max(c.initial_backoff))
            .with_max_times(usize::try_from(c.max_retries).unwrap_or(usize::MAX))
    }

    /// One attempt: send, read, classify, parse. The key is scrubbed from any error.
    async fn attempt(&self, body: &[u8]) -> Result<ChatResponse, Failure> {
        let mut status = None;
        self.try_once(body, &mut status)
            .await
            .map_err(|error| Failure {
                error: self.scrub(error),
                status,
            })
    }

    async fn try_once(
        &self,
        body: &[u8],
        status_seen: &mut Option<u16>,
    ) -> Result<ChatResponse, LlmError> {
        let inner = &*self.inner;
        let started = Instant::now();
        let mut request = inner
            .http
            .post(inner.endpoint.clone())
            .header(header::CONTENT_TYPE, "application/json");
        // The call's `chat` span as the server's parent (docs/observability.md).
        for (name, value) in http_client::trace_headers() {
            request = request.header(name, value);
        }
        let response = request
            .body(body.to_vec())
            .send()
            .await
            .map_err(|e| self.transport_error("sending the request", &e))?;

        let status = response.status().as_u16();
        *status_seen = Some(status);
        let retry_after = classify::retry_after(response.headers(), Utc::now());
        let event_stream = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("text/event-stream"));
        if (200..300).contains(&status) && event_stream {
            return self.read_stream(response, status).await;
        }
        let raw = self.read_body(response, status).await?;
        tracing::debug!(
            status,
            bytes = raw.len(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "chat completion reply"
        );

        if !(200..300).contains(&status) {
            let err = ServerError::from_raw_body(&raw);
            return Err(classify::classify_status(status, retry_after, &err));
        }
        if sse::looks_like_sse(&raw) {
            // An event stream under another content type.
            let mut stream = SseAssembler::new(status);
            stream.push(&raw)?;
            return stream.finish();
        }

        let value: Value = serde_json::from_slice(&raw).map_err(|e| {
            let what = format!("{} ({e})", classify::body_excerpt(&raw));
            if e.is_eof() {
                LlmError::Transient(format!("truncated HTTP {status} reply: {what}"))
            } else {
                LlmError::InvalidResponse(format!("HTTP {status} reply is not JSON: {what}"))
            }
        })?;
        if let Some(err) = ServerError::from_body(&value) {
            return Err(classify::classify_error_in_success(
                status,
                retry_after,
                &err,
            ));
        }
        wire::parse_response(value).map_err(LlmError::InvalidResponse)
    }

    /// Reads an event stream chunk by chunk until `[DONE]` or the end of the body.
    async fn read_stream(
        &self,
        mut response: reqwest::Response,
        status: u16,
    ) -> Result<ChatResponse, LlmError> {
        let mut stream = SseAssembler::new(status);
        let idle = self.inner.config.stream_idle_timeout;
        let limit = self.inner.config.max_response_bytes;
        let mut read: u64 = 0;
        loop {
            let next = tokio::time::timeout(idle, response.chunk())
                .await
                .map_err(|_| {
                    LlmError::Transient(format!(
                        "the event stream stalled: nothing for {} s (POST {})",
                        idle.as_secs_f64(),
                        self.inner.endpoint_shown
                    ))
                })?
                .map_err(|e| self.transport_error("reading the event stream", &e))?;
            let Some(bytes) = next else {
                break;
            };
            read = read.saturating_add(bytes.len() as u64);
            if read > limit {
                return Err(self.too_large(status));
            }
            stream.push(&bytes)?;
            if stream.is_done() {
                break;
            }
        }
        stream.finish()
    }

    /// The body of a reply that is not an event stream, read piece by piece up to
    /// `max_response_bytes`: past it, reading stops (the connection is dropped).
    async fn read_body(
        &self,
        mut response: reqwest::Response,
        status: u16,
    ) -> Result<Vec<u8>, LlmError> {
        let limit = self.inner.config.max_response_bytes;
        if response.content_length().is_some_and(|len| len > limit) {
            return Err(self.too_large(status));
        }
        let mut raw = Vec::new();
        while let Some(piece) = response
            .chunk()
            .await
            .map_err(|e| self.transport_error("reading the response body", &e))?
        {
            if (raw.len() as u64).saturating_add(piece.len() as u64) > limit {
                return Err(self.too_large(status));
            }
            raw.extend_from_slice(&piece);
        }
        Ok(raw)
    }

    /// A reply larger than `max_response_bytes`: not understood, and not worth retrying.
    fn too_large(&self, status: u16) -> LlmError {
        let limit = self.inner.config.max_response_bytes;
        LlmError::InvalidResponse(format!(
            "the HTTP {status} reply from POST {} is larger than {limit} bytes \
             (max_response_bytes); reading stopped there",
            self.inner.endpoint_shown
        ))
    }

    fn transport_error(&self, doing: &str, err: &reqwest::Error) -> LlmError {
        let endpoint = &self.inner.endpoint_shown;
        if err.is_timeout() {
            return LlmError::Transient(format!(
                "timed out after {:?} while {doing} (POST {endpoint})",
                self.inner.config.request_timeout
            ));
        }
        let cause = http_client::error_chain(err);
        if err.is_builder() {
            return LlmError::Permanent(format!(
                "could not build the request to {endpoint}: {cause}"
            ));
        }
        let what = if err.is_connect() {
            "could not connect"
        } else {
            "failed"
        };
        LlmError::Transient(format!("{what} while {doing} (POST {endpoint}): {cause}"))
    }

    /// Removes the API key from a message, in case a server echoed it back.
    fn scrub(&self, err: LlmError) -> LlmError {
        let Some(key) = self.inner.config.effective_api_key() else {
            return err;
        };
        let clean = |s: String| {
            if s.contains(key) {
                s.replace(key, REDACTED)
            } else {
                s
            }
        };
        match err {
            LlmError::RateLimited {
                retry_after,
                message,
            } => LlmError::RateLimited {
                retry_after,
                message: clean(message),
            },
            LlmError::Transient(m) => LlmError::Transient(clean(m)),
            LlmError::ContextTooLong(m) => LlmError::ContextTooLong(clean(m)),
            LlmError::Auth(m) => LlmError::Auth(clean(m)),
            LlmError::Permanent(m) => LlmError::Permanent(clean(m)),
            LlmError::ResponseFormatUnsupported(m) => LlmError::ResponseFormatUnsupported(clean(m)),
            LlmError::InvalidResponse(m) => LlmError::InvalidResponse(clean(m)),
        }
    }
}

#[async_trait]
impl LlmClient for OpenAiClient {
    async fn chat(&self, request: ChatRequest) -> Result<ChatResponse, LlmError> {
        self.check_response_format(&request.response_format)?;
        let request = repaired(request);
        let text_protocol = self.inner.config.tool_protocol == ToolProtocol::Text
            && (!request.tools.is_empty() || has_tool_turns(&request));
        if !text_protocol {
            return self
                .send(&request)
                .await
                .map_err(|e| refusal_of(&request, e))
                .map_err(hint);
        }
        let reply = self
            .send(&text_tools::encode(&request))
            .await
            .map_err(|e| refusal_of(&request, e))?;
        Ok(if text_tools::applies(&request) {
            text_tools::decode(reply, &request)
        } else {
            reply
        })
    }
}

impl OpenAiClient {
    /// A response format the configuration says the server lacks (a preset's quirk) is
    /// refused here, without a request.
    fn check_response_format(&self, format: &ResponseFormat) -> Result<(), LlmError> {
        let config = &self.inner.config;
        let (name, supported) = match format {
            ResponseFormat::Text => return Ok(()),
            ResponseFormat::JsonSchema { .. } => ("json_schema", config.json_schema),
            ResponseFormat::JsonObject => ("json_object", config.json_object),
        };
        if supported {
            return Ok(());
        }
        Err(LlmError::ResponseFormatUnsupported(format!(
            "response_format {name} is not sent to this server (model {}): its configuration \
             says it does not support it",
            config.model
        )))
    }

    /// One logical call: the body built once, then attempts with retries.
    async fn send(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let config = &self.inner.config;
        let options = WireOptions {
            stream: config.stream,
            stream_usage: config.stream_usage,
            reasoning_echo: config.reasoning_echo,
        };
        let body = serde_json::to_vec(&wire::build_request(&config.model, request, options))
            .map_err(|e| LlmError::Permanent(format!("could not encode the request: {e}")))?;
        tracing::debug!(
            model = %config.model,
            purpose = ?request.purpose,
            messages = request.messages.len(),
            tools = request.tools.len(),
            stream = config.stream,
            bytes = body.len(),
            "chat completion request"
        );

        let max_backoff = config.max_backoff.max(config.initial_backoff);
        let max_retry_after = config.max_retry_after;
        let mut attempt: u32 = 1;
        let result = (|| self.attempt(&body))
            .retry(self.backoff())
            .sleep(tokio::time::sleep)
            .when(|failure| failure.error.is_retryable())
            .adjust(|failure, computed| {
                // `None` means the retries are used up.
                let computed = computed?;
                Some(match &failure.error {
                    LlmError::RateLimited {
                        retry_after: Some(wait),
                        ..
                    } => (*wait).min(max_retry_after),
                    _ => computed.min(max_backoff),
                })
            })
            .notify(|failure, delay| {
                tracing::warn!(
                    model = %config.model,
                    status = failure.status,
                    attempt,
                    max_retries = config.max_retries,
                    delay_ms = delay.as_millis() as u64,
                    error = %failure.error,
                    "chat completion failed, retrying"
                );
                attempt += 1;
            })
            .await
            .map_err(|failure| failure.error);

        match &result {
            Ok(reply) => tracing::debug!(
                prompt_tokens = reply.usage.prompt_tokens,
                completion_tokens = reply.usage.completion_tokens,
                finish_reason = reply.finish_reason.as_deref().unwrap_or(""),
                tool_calls = reply.tool_calls.len(),
                "chat completion done"
            ),
            Err(err) => tracing::debug!(error = %err, "chat completion failed"),
        }
        result
    }
}

/// The request with its transcript made valid (see [`transcript::repair`]), each repair
/// logged as a warning.
fn repaired(mut request: ChatRequest) -> ChatRequest {
    let (messages, repairs) = transcript::repair(std::mem::take(&mut request.messages));
    for repair in &repairs {
        tracing::warn!(purpose = ?request.purpose, repair = %repair, "repaired the transcript before sending");
    }
    request.messages = messages;
    request
}

fn has_tool_turns(request: &ChatRequest) -> bool {
    request
        .messages
        .iter()
        .any(|m| m.tool_call_id.is_some() || !m.tool_calls.is_empty())
}

/// A refusal naming the response format is one only when the request had one; otherwise the
/// server refused something else.
fn refusal_of(request: &ChatRequest, err: LlmError) -> LlmError {
    match err {
        LlmError::ResponseFormatUnsupported(m)
            if request.response_format == ResponseFormat::Text =>
        {
            LlmError::Permanent(m)
        }
        other => other,
    }
}

/// Adds a way out to the error of a model that cannot call tools natively.
fn hint(err: LlmError) -> LlmError {
    match err {
        LlmError::Permanent(m) if m.to_ascii_lowercase().contains("does not support tools") => {
            LlmError::Permanent(format!(
                "{m} (this model has no native tool calling: use the text tool protocol)"
            ))
        }
        other => other,
    }
}

/// A failed attempt, with the HTTP status when a reply arrived (for logs).
struct Failure {
    error: LlmError,
    status: Option<u16>,
}

/// `{base_url}/chat/completions`, after checking the base URL is an http(s) URL.
fn endpoint_url(base_url: &str) -> Result<Url, Error> {
    let trimmed = base_url.trim().trim_end_matches('/');
    let invalid = |reason: String| Error::InvalidBaseUrl {
        url: base_url.to_owned(),
        reason,
    };
    let base = Url::parse(trimmed).map_err(|e| invalid(e.to_string()))?;
    if !matches!(base.scheme(), "http" | "https") {
        return Err(invalid(format!(
            "the scheme must be http or https (as in http://localhost:8080/v1), not '{}'",
            base.scheme()
        )));
    }
    if base.query().is_some() || base.fragment().is_some() {
        return Err(invalid("a base URL cannot have a query or fragment".into()));
    }
    Url::parse(&format!("{trimmed}/chat/completions")).map_err(|e| invalid(e.to_string()))
}

/// A URL with any user name or password removed.
fn shown_url(url: &Url) -> String {
    let mut shown = url.clone();
    // Both only fail for URLs that cannot have credentials at all.
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.to_string()
}

impl fmt::Debug for OpenAiClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.inner.config;
        f.debug_struct("OpenAiClient")
            .field("endpoint", &self.inner.endpoint_shown)
            .field("model", &c.model)
            .field("api_key", &c.api_key.as_ref().map(|_| REDACTED))
            .field("request_timeout", &c.request_timeout)
            .field("max_retries", &c.max_retries)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_http_client_builds_with_or_without_extra_roots() {
        let pem = include_bytes!("../../../testdata/tls/ca.pem");
        let config = |extra: Vec<Vec<u8>>| {
            let mut config = OpenAiConfig::new("m");
            config.base_url = "http://127.0.0.1:9/v1".into();
            config.extra_root_certs = extra;
            config
        };
        assert!(OpenAiClient::new(config(vec![])).is_ok());
        assert!(OpenAiClient::new(config(vec![pem.to_vec()])).is_ok());
        // A bad file is still reported, whatever the scheme.
        assert!(matches!(
            OpenAiClient::new(config(vec![b"not a certificate".to_vec()])),
            Err(Error::InvalidCaCert(_))
        ));
    }

    #[test]
    fn endpoint_from_base_url() {
        assert_eq!(
            endpoint_url("https://api.openai.com/v1").unwrap().as_str(),
            "https://api.openai.com/v1/chat/completions"
        );
        assert_eq!(
            endpoint_url("http://localhost:11434/v1/").unwrap().as_str(),
            "http://localhost:11434/v1/chat/completions"
        );
        assert!(matches!(
            endpoint_url("localhost:11434"),
            Err(Error::InvalidBaseUrl { .. })
        ));
        assert!(endpoint_url("not a url").is_err());
        assert!(endpoint_url("ftp://example.com").is_err());
        assert!(endpoint_url("https://example.com/v1?x=1").is_err());
    }

    #[test]
    fn credentials_in_the_url_are_not_shown() {
        let url = endpoint_url("https://user:pw@example.com/v1").unwrap();
        assert_eq!(shown_url(&url), "https://example.com/v1/chat/completions");
    }

    #[test]
    fn construction_checks_the_config() {
        assert!(matches!(
            OpenAiClient::new(OpenAiConfig::new(" ")),
            Err(Error::InvalidConfig(_))
        ));
        assert!(matches!(
            OpenAiClient::new(OpenAiConfig::new("m").with_request_timeout(Duration::ZERO)),
            Err(Error::InvalidConfig(_))
        ));
        let bad_key = OpenAiClient::new(OpenAiConfig::new("m").with_api_key("sk-a\nb"));
        let Err(e) = bad_key else {
            panic!("expected an error")
        };
        assert!(matches!(e, Error::InvalidApiKey));
        assert!(!e.to_string().contains("sk-a"));
        let client = OpenAiClient::new(OpenAiConfig::new("gpt-4o")).unwrap();
        assert_eq!(client.model(), "gpt-4o");
        assert_eq!(
            client.endpoint(),
            "https://api.openai.com/v1/chat/completions"
        );
    }

    #[test]
    fn debug_redacts_the_key() {
        let client =
            OpenAiClient::new(OpenAiConfig::new("m").with_api_key("sk-very-secret")).unwrap();
        let shown = format!("{client:?} {client:#?}");
        assert!(!shown.contains("sk-very-secret"), "{shown}");
        assert!(shown.contains(REDACTED));
    }
}
