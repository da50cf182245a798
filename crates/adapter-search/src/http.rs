//! What the providers share: [`SearchOptions`], the reqwest client (rustls, user agent,
//! timeout), the one quick retry, and turning HTTP failures into [`ToolError`]s that never
//! show the API key.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use domain::ToolError;
use reqwest::header::{self, HeaderMap, HeaderValue};
use reqwest::{RequestBuilder, StatusCode, Url};
use serde::de::DeserializeOwned;
use tracing::{debug, warn};

use http_client::{error_chain, root_cause};

use crate::error::ConfigError;
use crate::text;

/// Limit for one HTTP attempt when nothing else is configured.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(20);
/// Pause before the single retry of a 5xx reply or a failed connection.
pub const DEFAULT_RETRY_DELAY: Duration = Duration::from_millis(500);

const USER_AGENT: &str = concat!("planwright-adapter-search/", env!("CARGO_PKG_VERSION"));

/// Stands in for the API key wherever it could otherwise show.
pub(crate) const REDACTED: &str = "[REDACTED]";

/// How patiently a provider talks to its server, and which extra certificate authorities
/// it trusts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchOptions {
    /// Limit for one HTTP attempt, from connecting to the last byte of the body.
    pub timeout: Duration,
    /// Pause before the one retry after a 5xx reply or a failed connection.
    pub retry_delay: Duration,
    /// PEM files' contents trusted beside the platform's roots (`--ca-cert FILE`), e.g. a
    /// company proxy's or a self-hosted SearxNG's CA. The platform's roots are read only
    /// for an `https` server (`http_client::client_builder`).
    pub extra_root_certs: Arc<[Vec<u8>]>,
}

impl Default for SearchOptions {
    /// [`DEFAULT_TIMEOUT`] (20 s) and [`DEFAULT_RETRY_DELAY`] (500 ms).
    fn default() -> SearchOptions {
        SearchOptions {
            timeout: DEFAULT_TIMEOUT,
            retry_delay: DEFAULT_RETRY_DELAY,
            extra_root_certs: Arc::from(Vec::new()),
        }
    }
}

impl SearchOptions {
    pub fn with_timeout(mut self, timeout: Duration) -> SearchOptions {
        self.timeout = timeout;
        self
    }

    pub fn with_retry_delay(mut self, delay: Duration) -> SearchOptions {
        self.retry_delay = delay;
        self
    }

    /// Trusts the certificates in each PEM text beside the platform's roots.
    pub fn with_extra_root_certs(mut self, pems: Vec<Vec<u8>>) -> SearchOptions {
        self.extra_root_certs = Arc::from(pems);
        self
    }
}

/// An HTTP reply, body read.
pub(crate) struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: String,
}

/// One provider's HTTP client and error wording.
pub(crate) struct Http {
    client: reqwest::Client,
    provider: &'static str,
    options: SearchOptions,
    /// The API key, only to scrub it from anything a server echoes back.
    secret: Option<String>,
    /// The server root as shown in messages (no credentials).
    shown_base: String,
}

impl fmt::Debug for Http {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Http")
            .field("provider", &self.provider)
            .field("base_url", &self.shown_base)
            .field("options", &self.options)
            .field("secret", &self.secret.as_ref().map(|_| REDACTED))
            .finish()
    }
}

impl Http {
    /// A client sending `headers` (plus `Accept: application/json` and the user agent) on
    /// every request.
    pub(crate) fn new(
        provider: &'static str,
        options: SearchOptions,
        mut headers: HeaderMap,
        secret: Option<String>,
        base: &Url,
    ) -> Result<Http, ConfigError> {
        if options.timeout.is_zero() {
            return Err(ConfigError::InvalidTimeout(format!(
                "{:?}",
                options.timeout
            )));
        }
        headers.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
        // The platform's roots only for an https server: a plain-http SearxNG reads none.
        let builder = http_client::client_builder(
            http_client::Roots::for_scheme(base.scheme()),
            &options.extra_root_certs,
        )
        .map_err(|e| ConfigError::InvalidCaCert(e.to_string()))?;
        let client = builder
            .user_agent(USER_AGENT)
            .default_headers(headers)
            .timeout(options.timeout)
            .connect_timeout(options.timeout.min(Duration::from_secs(10)))
            .build()
            .map_err(|e| ConfigError::HttpClient {
                provider,
                reason: error_chain(&e.without_url()),
            })?;
        Ok(Http {
            client,
            provider,
            options,
            secret,
            shown_base: shown_url(base),
        })
    }

    pub(crate) fn options(&self) -> &SearchOptions {
        &self.options
    }

    pub(crate) fn shown_base(&self) -> &str {
        &self.shown_base
    }

    pub(crate) fn set_base(&mut self, base: &Url) {
        self.shown_base = shown_url(base);
    }

    /// Sends the request `make` builds; a 5xx reply or a failed connection is retried once
    /// after [`SearchOptions::retry_delay`]. Any reply that arrives is returned whatever its
    /// status; transport failures (timeout, no connection) become [`ToolError::Failed`].
    pub(crate) async fn send(
        &self,
        make: impl Fn(&reqwest::Client) -> RequestBuilder,
    ) -> Result<Reply, ToolError> {
        let started = Instant::now();
        let mut retried = false;
        loop {
            let retry_reason = match make(&self.client).send().await {
                Ok(response) if response.status().is_server_error() && !retried => {
                    format!("HTTP {}", response.status().as_u16())
                }
                Ok(response) => {
                    let status = response.status();
                    let headers = response.headers().clone();
                    let body = response
                        .text()
                        .await
                        .map_err(|e| self.transport_error(&e))?;
                    debug!(
                        provider = self.provider,
                        status = status.as_u16(),
                        bytes = body.len(),
                        elapsed_ms = started.elapsed().as_millis() as u64,
                        "search reply"
                    );
                    return Ok(Reply {
                        status,
                        headers,
                        body,
                    });
                }
                Err(e) if e.is_connect() && !retried => self.redact(&root_cause(&e)),
                Err(e) => return Err(self.transport_error(&e)),
            };
            warn!(
                provider = self.provider,
                reason = %retry_reason,
                "search request failed; retrying once"
            );
            retried = true;
            tokio::time::sleep(self.options.retry_delay).await;
        }
    }

    /// A timeout, a refused connection or a broken transfer, in words.
    fn transport_error(&self, err: &reqwest::Error) -> ToolError {
        let provider = self.provider;
        let message = if err.is_timeout() {
            format!(
                "search provider {provider} did not answer within {:?} (timed out); try again later",
                self.options.timeout
            )
        } else if err.is_connect() {
            format!(
                "could not connect to search provider {provider} at {}: {}",
                self.shown_base,
                self.redact(&root_cause(err))
            )
        } else {
            format!(
                "search request to {provider} failed: {}",
                self.redact(&error_chain(err))
            )
        };
        warn!(provider, error = %message, "search failed");
        ToolError::Failed(message)
    }

    /// The error for a reply that is not a success, by status: 401/403 a rejected key, 429 a
    /// rate limit (with `Retry-After`), 5xx a failing server (already retried), anything else
    /// a refused request with `detail` (else an excerpt of the body).
    pub(crate) fn status_error(&self, reply: &Reply, detail: Option<&str>) -> ToolError {
        let provider = self.provider;
        let code = reply.status.as_u16();
        let error = match code {
            401 | 403 => ToolError::Failed(format!(
                "search provider {provider} rejected the API key (HTTP {code})"
            )),
            429 => return self.rate_limited(retry_after(&reply.headers)),
            500..=599 => ToolError::Failed(format!(
                "search provider {provider} is failing (HTTP {code}, also on a retry); try again later"
            )),
            _ => {
                let detail = detail.unwrap_or(&reply.body);
                let detail = self.excerpt(detail, 200);
                let detail = if detail.is_empty() {
                    String::new()
                } else {
                    format!(": {detail}")
                };
                ToolError::Failed(format!(
                    "search provider {provider} refused the request (HTTP {code}){detail}"
                ))
            }
        };
        warn!(provider, status = code, error = %error, "search failed");
        error
    }

    /// "rate limited, try again later", with the wait when the server gave one.
    pub(crate) fn rate_limited(&self, wait: Option<Duration>) -> ToolError {
        let provider = self.provider;
        let wait = wait
            .map(|d| {
                format!(
                    " (retry after {} s)",
                    d.as_secs() + u64::from(d.subsec_nanos() > 0)
                )
            })
            .unwrap_or_default();
        let message = format!(
            "search provider {provider} answered HTTP 429: rate limited, try again later{wait}"
        );
        warn!(provider, error = %message, "search failed");
        ToolError::Failed(message)
    }

    /// Any other failure worded for the model, logged.
    pub(crate) fn failed(&self, message: String) -> ToolError {
        warn!(provider = self.provider, error = %message, "search failed");
        ToolError::Failed(message)
    }

    /// The body as `T`, or "unexpected response from X: ...".
    pub(crate) fn parse_json<T: DeserializeOwned>(&self, body: &str) -> Result<T, ToolError> {
        serde_json::from_str(body).map_err(|e| {
            let start = self.excerpt(body, 80);
            let start = if start.is_empty() {
                "an empty body".to_owned()
            } else {
                format!("the body starts `{start}`")
            };
            self.failed(format!(
                "unexpected response from {}: not the expected JSON ({e}); {start}",
                self.provider
            ))
        })
    }

    /// Server text safe to show: the key scrubbed, on one line, at most `max_chars`.
    pub(crate) fn excerpt(&self, text: &str, max_chars: usize) -> String {
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        text::truncate(&self.redact(&flat), max_chars)
    }

    fn redact(&self, text: &str) -> String {
        match self.secret.as_deref().filter(|s| !s.is_empty()) {
            Some(secret) => text.replace(secret, REDACTED),
            None => text.to_owned(),
        }
    }
}

/// `Retry-After` in seconds (`"3"`, `"1.5"`); the HTTP-date form is ignored.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(header::RETRY_AFTER)?.to_str().ok()?.trim();
    let secs: f64 = value.parse().ok()?;
    if !secs.is_finite() || secs < 0.0 {
        return None;
    }
    Duration::try_from_secs_f64(secs).ok()
}

/// A header value carrying a secret (`prefix` + the trimmed key), marked sensitive so it is
/// never printed.
pub(crate) fn secret_header(
    provider: &'static str,
    prefix: &str,
    key: &str,
) -> Result<(HeaderValue, String), ConfigError> {
    let key = key.trim();
    if key.is_empty() {
        return Err(ConfigError::InvalidKey { provider });
    }
    let mut value = HeaderValue::from_str(&format!("{prefix}{key}"))
        .map_err(|_| ConfigError::InvalidKey { provider })?;
    value.set_sensitive(true);
    Ok((value, key.to_owned()))
}

/// A server root: http or https, no query or fragment, no trailing `/`.
pub(crate) fn parse_base_url(setting: &'static str, raw: &str) -> Result<Url, ConfigError> {
    let trimmed = raw.trim().trim_end_matches('/');
    let invalid = |reason: String| ConfigError::InvalidUrl {
        setting,
        url: hide_credentials(raw),
        reason,
    };
    if trimmed.is_empty() {
        return Err(invalid("it is empty".into()));
    }
    let url = Url::parse(trimmed).map_err(|e| invalid(e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(invalid(format!(
            "the scheme must be http or https (as in http://localhost:8888), not '{}'",
            url.scheme()
        )));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(invalid("a base URL cannot have a query or fragment".into()));
    }
    Ok(url)
}

/// `base` with `suffix` appended to its path.
pub(crate) fn endpoint(base: &Url, suffix: &str) -> Url {
    let mut url = base.clone();
    let path = format!("{}{suffix}", base.path().trim_end_matches('/'));
    url.set_path(&path);
    url
}

/// A URL with any user name or password removed, without a trailing `/`.
pub(crate) fn shown_url(url: &Url) -> String {
    let mut shown = url.clone();
    // Both only fail for URLs that cannot have credentials at all.
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.as_str().trim_end_matches('/').to_owned()
}

/// `raw` for an error message: credentials removed when it parses, hidden when it does not
/// and may hold some.
pub(crate) fn hide_credentials(raw: &str) -> String {
    match Url::parse(raw.trim()) {
        Ok(url) => shown_url(&url),
        Err(_) if raw.contains('@') => "(not shown: it may contain credentials)".to_owned(),
        Err(_) => raw.trim().to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_are_checked_and_credentials_hidden() {
        let url =
            parse_base_url("SEARXNG_URL", " http://me:pw@localhost:8888/searx/ ").expect("valid");
        assert_eq!(shown_url(&url), "http://localhost:8888/searx");
        assert_eq!(
            endpoint(&url, "/search").as_str(),
            "http://me:pw@localhost:8888/searx/search"
        );
        let err = parse_base_url("SEARXNG_URL", "ftp://me:pw@host").expect_err("scheme");
        assert!(err.to_string().contains("http or https"), "{err}");
        assert!(!err.to_string().contains("pw"), "{err}");
        let err = parse_base_url("SEARXNG_URL", "not a url @secret").expect_err("garbage");
        assert!(!err.to_string().contains("secret"), "{err}");
        assert!(parse_base_url("SEARXNG_URL", "http://h/?q=1").is_err());
        assert!(parse_base_url("SEARXNG_URL", "  ").is_err());
    }

    #[test]
    fn retry_after_in_seconds() {
        let mut h = HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert(header::RETRY_AFTER, HeaderValue::from_static("3"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(3)));
        h.insert(header::RETRY_AFTER, HeaderValue::from_static("1.5"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(1500)));
        h.insert(
            header::RETRY_AFTER,
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&h), None);
    }

    #[test]
    fn secret_headers_are_sensitive_and_checked() {
        let (value, key) = secret_header("tavily", "Bearer ", " tvly-abc\n").expect("valid");
        assert!(value.is_sensitive());
        assert_eq!(key, "tvly-abc");
        assert_eq!(value.to_str().ok(), Some("Bearer tvly-abc"));
        assert!(secret_header("brave", "", "  ").is_err());
        assert!(secret_header("brave", "", "bad\u{1}key").is_err());
    }
}
