//! [`OpenAiClient`]: one `POST /chat/completions` per attempt, classified errors, retries;
//! around it the transcript repair and the text tool protocol. A `response_format` is sent
//! as asked; the server's refusal of it is reported, never worked around here.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use domain::llm::transcript::repaired;
use domain::llm::{ChatRequest, ChatResponse, ResponseFormat};
use domain::ports::LlmClient;
use domain::LlmError;
use http_client::{is_success, BodyError, ReplyHead, RetryableFailure};
use reqwest::header::{self, HeaderMap, HeaderValue};
use reqwest::Url;
use serde_json::Value;

use crate::classify::{self, ServerError};
use crate::config::{OpenAiConfig, ToolProtocol, REDACTED};
use crate::error::Error;
use crate::sse::{self, SseAssembler};
use crate::text_tools;
use crate::wire::{self, WireOptions};

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
        let endpoint_shown = http_client::shown_url(&endpoint);

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
        let response = http_client::post_json(&inner.http, inner.endpoint.clone(), body)
            .await
            .map_err(|e| self.transport_error("sending the request", &e))?;
        let ReplyHead {
            status,
            retry_after,
            event_stream,
        } = ReplyHead::of(&response);
        *status_seen = Some(status);
        if event_stream {
            return self.read_stream(response, status).await;
        }
        let raw = self.read_body(response, status).await?;
        tracing::debug!(
            status,
            bytes = raw.len(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "chat completion reply"
        );

        if !is_success(status) {
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
            let what = format!("{} ({e})", http_client::body_excerpt(&raw));
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
        response: reqwest::Response,
        status: u16,
    ) -> Result<ChatResponse, LlmError> {
        let config = &self.inner.config;
        let mut stream = SseAssembler::new(status);
        http_client::read_stream(
            response,
            config.stream_idle_timeout,
            config.max_response_bytes,
            |bytes| {
                stream.push(bytes)?;
                Ok(stream.is_done())
            },
            |e| self.body_error("reading the event stream", status, e),
        )
        .await?;
        stream.finish()
    }

    /// The body of a reply that is not an event stream, read piece by piece up to
    /// `max_response_bytes`: past it, reading stops (the connection is dropped).
    async fn read_body(
        &self,
        response: reqwest::Response,
        status: u16,
    ) -> Result<Vec<u8>, LlmError> {
        http_client::read_body(response, self.inner.config.max_response_bytes)
            .await
            .map_err(|e| self.body_error("reading the response body", status, e))
    }

    fn body_error(&self, doing: &str, status: u16, err: BodyError) -> LlmError {
        match err {
            BodyError::TooLarge { .. } => self.too_large(status),
            BodyError::Stalled { idle } => LlmError::Transient(format!(
                "the event stream stalled: nothing for {} s (POST {})",
                idle.as_secs_f64(),
                self.inner.endpoint_shown
            )),
            BodyError::Transport(e) => self.transport_error(doing, &e),
        }
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
        err.map_message(|m| {
            if m.contains(key) {
                m.replace(key, REDACTED)
            } else {
                m
            }
        })
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
            let reply = self
                .send(&request)
                .await
                .map_err(|e| refusal_of(&request, e))
                .map_err(hint)?;
            return Ok(text_tools::calls_in_text(reply, &request));
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

        let mut attempt: u32 = 1;
        let result = config
            .retry_policy()
            .run(
                || self.attempt(&body),
                |failure: &Failure, delay| {
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
                },
            )
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

impl RetryableFailure for Failure {
    fn is_retryable(&self) -> bool {
        self.error.is_retryable()
    }

    /// Only a rate limit's wait is honoured as such.
    fn retry_after(&self) -> Option<Duration> {
        match &self.error {
            LlmError::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
    fn status(&self) -> Option<u16> {
        self.status
    }
}

/// `{base_url}/chat/completions`, after checking the base URL is an http(s) URL.
fn endpoint_url(base_url: &str) -> Result<Url, Error> {
    let invalid = |reason: String| Error::InvalidBaseUrl {
        url: base_url.to_owned(),
        reason,
    };
    let trimmed = http_client::checked_base_url(base_url, "http://localhost:8080/v1")
        .map_err(|e| invalid(e.to_string()))?;
    Url::parse(&format!("{trimmed}/chat/completions")).map_err(|e| invalid(e.to_string()))
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
        assert_eq!(
            http_client::shown_url(&url),
            "https://example.com/v1/chat/completions"
        );
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
