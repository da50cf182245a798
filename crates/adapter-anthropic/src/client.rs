//! [`AnthropicClient`]: one `POST /v1/messages` per attempt, the reply read (whole or as an
//! event stream, within `max_response_bytes` and the stream's idle limit), failures typed
//! as [`CallError`]s and retried with backoff when they may pass, honouring `retry-after`.
//! Dropping the future of a call (the engine cancelling a step) drops its connection.

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

use crate::classify::ApiError;
use crate::config::{AnthropicConfig, ANTHROPIC_VERSION, API_KEY_VAR, DEFAULT_BASE_URL, REDACTED};
use crate::error::{CallError, Error};
use crate::request::{self, RequestOptions};
use crate::response::{self, ReplyParts};
use crate::sse::{self, SseAssembler};

/// An [`LlmClient`] talking to Anthropic's Messages API.
///
/// Cheap to clone (clones share the connection pool). `Debug` never prints the API key.
#[derive(Clone)]
pub struct AnthropicClient {
    inner: Arc<Inner>,
}

struct Inner {
    http: reqwest::Client,
    config: AnthropicConfig,
    /// `{base_url}/v1/messages`.
    endpoint: Url,
    /// The endpoint without any userinfo, for messages and logs.
    endpoint_shown: String,
}

/// A failed attempt, with the HTTP status when a reply arrived (for logs).
struct Failure {
    error: CallError,
    status: Option<u16>,
}

impl RetryableFailure for Failure {
    fn is_retryable(&self) -> bool {
        self.error.is_retryable()
    }

    fn retry_after(&self) -> Option<Duration> {
        self.error.retry_after()
    }
    fn status(&self) -> Option<u16> {
        self.status
    }
}

impl AnthropicClient {
    /// Validates `config` and builds the HTTP client. Nothing is sent yet.
    pub fn new(config: AnthropicConfig) -> Result<AnthropicClient, Error> {
        if config.model.trim().is_empty() {
            return Err(Error::InvalidConfig("the model name is empty".into()));
        }
        if config.request_timeout.is_zero() {
            return Err(Error::InvalidConfig(
                "request_timeout must be above zero".into(),
            ));
        }
        if config.max_tokens == 0 {
            return Err(Error::InvalidConfig("max_tokens must be above zero".into()));
        }
        let endpoint = endpoint_url(&config.base_url)?;
        let endpoint_shown = http_client::shown_url(&endpoint);

        let mut headers = HeaderMap::new();
        headers.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
        headers.insert(
            "anthropic-version",
            HeaderValue::from_static(ANTHROPIC_VERSION),
        );
        match config.effective_api_key() {
            Some(key) => {
                let mut value = HeaderValue::from_str(key).map_err(|_| Error::InvalidApiKey)?;
                value.set_sensitive(true);
                headers.insert("x-api-key", value);
            }
            None if is_anthropic_host(&endpoint) => {
                return Err(Error::MissingApiKey { var: API_KEY_VAR })
            }
            None => {}
        }
        let http = http_client::client_builder(
            http_client::Roots::for_scheme(endpoint.scheme()),
            &config.extra_root_certs,
        )
        .map_err(|e| Error::InvalidCaCert(e.to_string()))?
        .user_agent(concat!(
            "planwright-adapter-anthropic/",
            env!("CARGO_PKG_VERSION")
        ))
        .default_headers(headers)
        .timeout(config.request_timeout)
        .connect_timeout(config.request_timeout.min(Duration::from_secs(30)))
        .build()
        .map_err(|e| Error::HttpClient(e.without_url()))?;

        Ok(AnthropicClient {
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

    /// Asks the API about the configured model (`GET {base_url}/v1/models/{model}`, one
    /// attempt, no tokens spent): checks the endpoint, the key and the model name, for
    /// `planwright doctor` and a check before a run's first step. Failures are classified
    /// as a call's are (a bad key `Auth`, an unknown model `Permanent` with the server's
    /// message, a server down `Transient`).
    pub async fn check_model(&self) -> Result<(), LlmError> {
        self.probe_model().await.map_err(|e| self.scrub(e.into()))
    }

    async fn probe_model(&self) -> Result<(), CallError> {
        let mut url = self.inner.endpoint.clone();
        url.path_segments_mut()
            .map_err(|()| CallError::Request {
                endpoint: self.inner.endpoint_shown.clone(),
                cause: "the URL cannot have a path".into(),
            })?
            .pop()
            .push("models")
            .push(&self.inner.config.model);
        let response = self
            .inner
            .http
            .get(url)
            .send()
            .await
            .map_err(|e| self.transport_error("asking for the model", &e))?;
        let ReplyHead {
            status,
            retry_after,
            ..
        } = ReplyHead::of(&response);
        let raw = self.read_body(response, status).await?;
        if is_success(status) {
            return Ok(());
        }
        let err = ApiError::from_raw_body(&raw);
        Err(CallError::Status {
            status,
            error_type: err.error_type,
            message: err.message,
            retry_after,
        })
    }

    /// One logical call: the body built once, then attempts with retries.
    async fn send(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let config = &self.inner.config;
        let options = RequestOptions {
            max_tokens: config.max_tokens,
            stream: config.stream,
            prompt_caching: config.prompt_caching,
        };
        let wire = request::build_request(&config.model, request, options);
        let max_tokens = wire.max_tokens();
        let body = serde_json::to_vec(&wire)
            .map_err(|e| LlmError::Permanent(format!("could not encode the request: {e}")))?;
        tracing::debug!(
            model = %config.model,
            purpose = ?request.purpose,
            messages = request.messages.len(),
            tools = request.tools.len(),
            stream = config.stream,
            max_tokens,
            bytes = body.len(),
            "messages request"
        );

        let mut attempt: u32 = 1;
        let result = config
            .retry_policy()
            .run(
                || self.attempt(&body, max_tokens),
                |failure: &Failure, delay| {
                    tracing::warn!(
                        model = %config.model,
                        status = failure.status,
                        attempt,
                        max_retries = config.max_retries,
                        delay_ms = delay.as_millis() as u64,
                        error = %self.scrub_text(failure.error.to_string()),
                        "messages call failed, retrying"
                    );
                    attempt += 1;
                },
            )
            .await
            .map_err(|failure| self.scrub(LlmError::from(failure.error)));

        match &result {
            Ok(reply) => tracing::debug!(
                prompt_tokens = reply.usage.prompt_tokens,
                cached_prompt_tokens = reply.usage.cached_prompt_tokens,
                completion_tokens = reply.usage.completion_tokens,
                stop_reason = reply.finish_reason.as_deref().unwrap_or(""),
                tool_calls = reply.tool_calls.len(),
                "messages call done"
            ),
            Err(err) => tracing::debug!(error = %err, "messages call failed"),
        }
        result
    }

    async fn attempt(&self, body: &[u8], max_tokens: u32) -> Result<ChatResponse, Failure> {
        let mut status = None;
        match self.try_once(body, &mut status).await {
            Ok(parts) => parts
                .finish(max_tokens)
                .map_err(|error| Failure { error, status }),
            Err(error) => Err(Failure { error, status }),
        }
    }

    async fn try_once(
        &self,
        body: &[u8],
        status_seen: &mut Option<u16>,
    ) -> Result<ReplyParts, CallError> {
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
            "messages reply"
        );

        if !is_success(status) {
            let err = ApiError::from_raw_body(&raw);
            return Err(CallError::Status {
                status,
                error_type: err.error_type,
                message: err.message,
                retry_after,
            });
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
                CallError::Truncated { status, why: what }
            } else {
                CallError::Invalid(format!("the HTTP {status} reply is not JSON: {what}"))
            }
        })?;
        if let Some(err) = ApiError::from_body(&value) {
            // An error object in a 2xx body (some proxies report failures that way).
            return Err(CallError::ErrorInReply {
                error_type: err.error_type,
                message: err.message,
            });
        }
        response::parse_message(&value, status)
    }

    /// Reads an event stream chunk by chunk until `message_stop` or the end of the body.
    async fn read_stream(
        &self,
        response: reqwest::Response,
        status: u16,
    ) -> Result<ReplyParts, CallError> {
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
    ) -> Result<Vec<u8>, CallError> {
        http_client::read_body(response, self.inner.config.max_response_bytes)
            .await
            .map_err(|e| self.body_error("reading the response body", status, e))
    }

    fn body_error(&self, doing: &'static str, status: u16, err: BodyError) -> CallError {
        match err {
            BodyError::TooLarge { .. } => self.too_large(status),
            BodyError::Stalled { idle } => CallError::Stalled {
                idle,
                endpoint: self.inner.endpoint_shown.clone(),
            },
            BodyError::Transport(e) => self.transport_error(doing, &e),
        }
    }

    fn too_large(&self, status: u16) -> CallError {
        CallError::TooLarge {
            status,
            endpoint: self.inner.endpoint_shown.clone(),
            limit: self.inner.config.max_response_bytes,
        }
    }

    fn transport_error(&self, doing: &'static str, err: &reqwest::Error) -> CallError {
        let endpoint = self.inner.endpoint_shown.clone();
        if err.is_timeout() {
            return CallError::TimedOut {
                timeout: self.inner.config.request_timeout,
                doing,
                endpoint,
            };
        }
        let cause = http_client::error_chain(err);
        if err.is_builder() {
            return CallError::Request { endpoint, cause };
        }
        CallError::Transport {
            connect: err.is_connect(),
            doing,
            endpoint,
            cause,
        }
    }

    /// `text` without the API key, in case a server echoed it back.
    fn scrub_text(&self, text: String) -> String {
        match self.inner.config.effective_api_key() {
            Some(key) if text.contains(key) => text.replace(key, REDACTED),
            _ => text,
        }
    }

    fn scrub(&self, err: LlmError) -> LlmError {
        err.map_message(|m| self.scrub_text(m))
    }
}

#[async_trait]
impl LlmClient for AnthropicClient {
    async fn chat(&self, request: ChatRequest) -> Result<ChatResponse, LlmError> {
        let format = match &request.response_format {
            ResponseFormat::Text => None,
            ResponseFormat::JsonSchema { .. } => Some("json_schema"),
            ResponseFormat::JsonObject => Some("json_object"),
        };
        if let Some(format) = format {
            // The domain then asks without it (docs/architecture.md, "Structured output").
            return Err(CallError::FormatUnsupported(format).into());
        }
        let request = repaired(request);
        self.send(&request).await
    }
}

/// `{base_url}/v1/messages` (or `{base_url}/messages` when the base already ends in `/v1`),
/// after checking the base URL is an http(s) URL.
fn endpoint_url(base_url: &str) -> Result<Url, Error> {
    let invalid = |reason: String| Error::InvalidBaseUrl {
        url: base_url.to_owned(),
        reason,
    };
    let trimmed = http_client::checked_base_url(base_url, DEFAULT_BASE_URL)
        .map_err(|e| invalid(e.to_string()))?;
    let path = if trimmed.ends_with("/v1") {
        "/messages"
    } else {
        "/v1/messages"
    };
    Url::parse(&format!("{trimmed}{path}")).map_err(|e| invalid(e.to_string()))
}

/// Whether `url` is Anthropic's own API, which always needs a key.
fn is_anthropic_host(url: &Url) -> bool {
    url.host_str()
        .is_some_and(|host| host.eq_ignore_ascii_case("api.anthropic.com"))
}

impl fmt::Debug for AnthropicClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.inner.config;
        f.debug_struct("AnthropicClient")
            .field("endpoint", &self.inner.endpoint_shown)
            .field("model", &c.model)
            .field("api_key", &c.api_key.as_ref().map(|_| REDACTED))
            .field("max_tokens", &c.max_tokens)
            .field("stream", &c.stream)
            .field("prompt_caching", &c.prompt_caching)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_from_base_url() {
        assert_eq!(
            endpoint_url("https://api.anthropic.com").unwrap().as_str(),
            "https://api.anthropic.com/v1/messages"
        );
        assert_eq!(
            endpoint_url("http://localhost:4000/v1/").unwrap().as_str(),
            "http://localhost:4000/v1/messages"
        );
        assert!(matches!(
            endpoint_url("api.anthropic.com"),
            Err(Error::InvalidBaseUrl { .. })
        ));
        assert!(endpoint_url("ftp://example.com").is_err());
        assert!(endpoint_url("https://example.com?x=1").is_err());
        let url = endpoint_url("https://user:pw@proxy.example").unwrap();
        assert_eq!(
            http_client::shown_url(&url),
            "https://proxy.example/v1/messages"
        );
    }

    #[test]
    fn construction_checks_the_config_and_the_key() {
        let proxy = |c: AnthropicConfig| c.with_base_url("http://127.0.0.1:9");
        assert!(matches!(
            AnthropicClient::new(proxy(AnthropicConfig::new(" "))),
            Err(Error::InvalidConfig(_))
        ));
        assert!(matches!(
            AnthropicClient::new(proxy(AnthropicConfig::new("m").with_max_tokens(0))),
            Err(Error::InvalidConfig(_))
        ));
        let missing = AnthropicClient::new(AnthropicConfig::new("m")).unwrap_err();
        assert!(
            missing.to_string().contains("ANTHROPIC_API_KEY"),
            "{missing}"
        );
        assert!(AnthropicClient::new(proxy(AnthropicConfig::new("m"))).is_ok());
        let Err(bad) = AnthropicClient::new(AnthropicConfig::new("m").with_api_key("sk-ant-a\nb"))
        else {
            panic!("a key with a newline inside was accepted")
        };
        assert!(matches!(bad, Error::InvalidApiKey));
        assert!(!bad.to_string().contains("sk-ant-a"));
        let client =
            AnthropicClient::new(AnthropicConfig::new("claude-x").with_api_key("sk-ant-secret"))
                .unwrap();
        assert_eq!(client.model(), "claude-x");
        assert_eq!(client.endpoint(), "https://api.anthropic.com/v1/messages");
        let shown = format!("{client:?}");
        assert!(
            !shown.contains("sk-ant-secret") && shown.contains(REDACTED),
            "{shown}"
        );
    }

    #[test]
    fn extra_ca_certificates_are_checked() {
        let pem = include_bytes!("../../../testdata/tls/ca.pem");
        let mut config = AnthropicConfig::new("m").with_base_url("http://127.0.0.1:9");
        config.extra_root_certs = vec![pem.to_vec()];
        assert!(AnthropicClient::new(config.clone()).is_ok());
        config.extra_root_certs = vec![b"not a certificate".to_vec()];
        assert!(matches!(
            AnthropicClient::new(config),
            Err(Error::InvalidCaCert(_))
        ));
    }
}
