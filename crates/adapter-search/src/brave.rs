//! [`Brave`]: the Brave Web Search API,
//! `GET {base}/res/v1/web/search?q=...&count=N` with header `X-Subscription-Token`.

use std::fmt;
use std::time::Duration;

use async_trait::async_trait;
use domain::ports::{SearchHit, SearchProvider};
use domain::ToolError;
use reqwest::header::{HeaderMap, HeaderName};
use reqwest::Url;
use serde::Deserialize;
use serde_json::Value;

use crate::error::ConfigError;
use crate::hits::{self, str_field, RawHit};
use crate::http::{self, Http, SearchOptions, REDACTED};
use crate::text;

const NAME: &str = "brave";

/// Brave's API root.
pub const BRAVE_DEFAULT_BASE_URL: &str = "https://api.search.brave.com";

/// The most results Brave returns for one request (`count` ≤ 20).
const MAX_COUNT: usize = 20;
/// Brave refuses longer queries (400 characters, 50 words).
const MAX_QUERY_CHARS: usize = 400;
const MAX_QUERY_WORDS: usize = 50;

/// The Brave Search API. `Debug` never shows the key.
pub struct Brave {
    base_url: Url,
    endpoint: Url,
    http: Http,
}

impl fmt::Debug for Brave {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Brave")
            .field("base_url", &self.http.shown_base())
            .field("api_key", &REDACTED)
            .field("options", &self.http.options())
            .finish()
    }
}

impl Brave {
    /// Brave at [`BRAVE_DEFAULT_BASE_URL`] with `api_key` (the subscription token).
    pub fn new(api_key: &str, options: SearchOptions) -> Result<Brave, ConfigError> {
        let (token, key) = http::secret_header(NAME, "", api_key)?;
        let mut headers = HeaderMap::new();
        headers.insert(HeaderName::from_static("x-subscription-token"), token);
        let base = http::parse_base_url("Brave base URL", BRAVE_DEFAULT_BASE_URL)?;
        let http = Http::new(NAME, options, headers, Some(key), &base)?;
        Ok(Brave {
            endpoint: http::endpoint(&base, "/res/v1/web/search"),
            base_url: base,
            http,
        })
    }

    /// Another API root (a proxy, a test server); requests go to
    /// `{base_url}/res/v1/web/search`.
    pub fn with_base_url(mut self, base_url: &str) -> Result<Brave, ConfigError> {
        let base = http::parse_base_url("Brave base URL", base_url)?;
        self.endpoint = http::endpoint(&base, "/res/v1/web/search");
        self.http.set_base(&base);
        self.base_url = base;
        Ok(self)
    }

    /// The API root, without credentials.
    pub fn base_url(&self) -> String {
        http::shown_url(&self.base_url)
    }
}

/// The part of Brave's reply that is used (`web.results`); `query`, `mixed`, `news`,
/// `videos` and the rest are ignored. `web` is absent when nothing was found.
#[derive(Deserialize)]
struct Reply {
    #[serde(default)]
    web: Option<Web>,
}

#[derive(Deserialize)]
struct Web {
    #[serde(default)]
    results: Option<Vec<Value>>,
}

/// The message of Brave's error object, `{"type": "ErrorResponse", "error": {"detail": ...}}`.
fn error_detail(body: &str) -> Option<String> {
    let v: Value = serde_json::from_str(body).ok()?;
    let e = v.get("error")?;
    let detail = str_field(e, "detail")?;
    Some(match str_field(e, "code") {
        Some(code) => format!("{detail} ({code})"),
        None => detail.to_owned(),
    })
}

/// When no `Retry-After` came: the reset time of the exhausted windows, from Brave's
/// `X-RateLimit-Remaining: 0, 1000` / `X-RateLimit-Reset: 1, 1419704` (per second, per month).
fn rate_limit_reset(headers: &HeaderMap) -> Option<Duration> {
    let list = |name: &str| -> Vec<u64> {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(|s| s.split(',').filter_map(|n| n.trim().parse().ok()).collect())
            .unwrap_or_default()
    };
    let remaining = list("x-ratelimit-remaining");
    let reset = list("x-ratelimit-reset");
    remaining
        .iter()
        .zip(&reset)
        .filter(|(left, _)| **left == 0)
        .map(|(_, secs)| *secs)
        .max()
        .map(Duration::from_secs)
}

/// The query cut to what Brave accepts.
fn brave_query(query: &str) -> String {
    let words: Vec<&str> = query.split_whitespace().take(MAX_QUERY_WORDS).collect();
    words
        .join(" ")
        .chars()
        .take(MAX_QUERY_CHARS)
        .collect::<String>()
}

#[async_trait]
impl SearchProvider for Brave {
    fn name(&self) -> &str {
        NAME
    }

    async fn search(&self, query: &str, max_results: usize) -> Result<Vec<SearchHit>, ToolError> {
        if max_results == 0 {
            return Ok(Vec::new());
        }
        let q = brave_query(query);
        let count = max_results.min(MAX_COUNT).to_string();
        let reply = self
            .http
            .send(|client| {
                client
                    .get(self.endpoint.clone())
                    .query(&[("q", q.as_str()), ("count", count.as_str())])
            })
            .await?;
        if reply.status.as_u16() == 429 {
            let wait =
                http::retry_after(&reply.headers).or_else(|| rate_limit_reset(&reply.headers));
            return Err(self.http.rate_limited(wait));
        }
        if !reply.status.is_success() {
            let detail = error_detail(&reply.body);
            return Err(self.http.status_error(&reply, detail.as_deref()));
        }
        let parsed: Reply = self.http.parse_json(&reply.body)?;
        let results = parsed.web.and_then(|w| w.results).unwrap_or_default();
        let raw = results.iter().map(|r| {
            let description = str_field(r, "description")
                .filter(|d| !d.trim().is_empty())
                .or_else(|| {
                    r.get("extra_snippets")
                        .and_then(Value::as_array)
                        .and_then(|s| s.first())
                        .and_then(Value::as_str)
                })
                .unwrap_or_default();
            let snippet = match str_field(r, "age").map(str::trim).filter(|a| !a.is_empty()) {
                Some(age) if !description.trim().is_empty() => {
                    format!("{} — {description}", text::clean(age, 40))
                }
                _ => description.to_owned(),
            };
            RawHit {
                title: str_field(r, "title"),
                url: str_field(r, "url"),
                snippet,
            }
        });
        let hits = hits::collect(raw, max_results);
        tracing::debug!(
            provider = NAME,
            results = results.len(),
            hits = hits.len(),
            "web search done"
        );
        Ok(hits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn reset_of_the_exhausted_window() {
        let mut h = HeaderMap::new();
        assert_eq!(rate_limit_reset(&h), None);
        h.insert("x-ratelimit-remaining", HeaderValue::from_static("0, 1000"));
        h.insert("x-ratelimit-reset", HeaderValue::from_static("1, 1419704"));
        assert_eq!(rate_limit_reset(&h), Some(Duration::from_secs(1)));
        h.insert("x-ratelimit-remaining", HeaderValue::from_static("5, 1000"));
        assert_eq!(rate_limit_reset(&h), None);
    }

    #[test]
    fn queries_are_cut_to_brave_limits() {
        assert_eq!(brave_query("  rust   async "), "rust async");
        assert_eq!(brave_query(&"w ".repeat(80)).split(' ').count(), 50);
        assert_eq!(brave_query(&"x".repeat(500)).chars().count(), 400);
    }

    #[test]
    fn error_details() {
        let body = r#"{"type":"ErrorResponse","error":{"id":"1","status":422,"code":"VALIDATION","detail":"Unable to validate request parameter(s)."},"time":1}"#;
        assert_eq!(
            error_detail(body).as_deref(),
            Some("Unable to validate request parameter(s). (VALIDATION)")
        );
        assert_eq!(error_detail("nope"), None);
    }
}
