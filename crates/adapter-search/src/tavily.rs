//! [`Tavily`]: the Tavily Search API, `POST {base}/search` with a JSON body
//! `{query, max_results, search_depth}` and `Authorization: Bearer tvly-...`.

use std::fmt;

use async_trait::async_trait;
use domain::ports::{SearchHit, SearchProvider};
use domain::ToolError;
use reqwest::header::{self, HeaderMap};
use reqwest::Url;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::error::ConfigError;
use crate::hits::{self, str_field, RawHit};
use crate::http::{self, Http, SearchOptions, REDACTED};

const NAME: &str = "tavily";

/// Tavily's API root.
pub const TAVILY_DEFAULT_BASE_URL: &str = "https://api.tavily.com";

/// The most results Tavily returns for one request.
const MAX_COUNT: usize = 20;
/// Tavily refuses longer queries.
const MAX_QUERY_CHARS: usize = 400;

/// The Tavily Search API (basic depth: one credit per search). `Debug` never shows the key.
pub struct Tavily {
    base_url: Url,
    endpoint: Url,
    http: Http,
}

impl fmt::Debug for Tavily {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tavily")
            .field("base_url", &self.http.shown_base())
            .field("api_key", &REDACTED)
            .field("options", &self.http.options())
            .finish()
    }
}

impl Tavily {
    /// Tavily at [`TAVILY_DEFAULT_BASE_URL`] with `api_key` (`tvly-...`), sent as a bearer
    /// token.
    pub fn new(api_key: &str, options: SearchOptions) -> Result<Tavily, ConfigError> {
        let (bearer, key) = http::secret_header(NAME, "Bearer ", api_key)?;
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, bearer);
        let base = http::parse_base_url("Tavily base URL", TAVILY_DEFAULT_BASE_URL)?;
        let http = Http::new(NAME, options, headers, Some(key), &base)?;
        Ok(Tavily {
            endpoint: http::endpoint(&base, "/search"),
            base_url: base,
            http,
        })
    }

    /// Another API root (a proxy, a test server); requests go to `{base_url}/search`.
    pub fn with_base_url(mut self, base_url: &str) -> Result<Tavily, ConfigError> {
        let base = http::parse_base_url("Tavily base URL", base_url)?;
        self.endpoint = http::endpoint(&base, "/search");
        self.http.set_base(&base);
        self.base_url = base;
        Ok(self)
    }

    /// The API root, without credentials.
    pub fn base_url(&self) -> String {
        http::shown_url(&self.base_url)
    }
}

/// The part of Tavily's reply that is used; `answer`, `images`, `response_time` and each
/// result's `score` and `raw_content` are ignored.
#[derive(Deserialize)]
struct Reply {
    #[serde(default)]
    results: Option<Vec<Value>>,
}

/// The message of Tavily's error object: `{"detail": {"error": "..."}}` or `{"detail": "..."}`.
fn error_detail(body: &str) -> Option<String> {
    let v: Value = serde_json::from_str(body).ok()?;
    let detail = v.get("detail")?;
    detail
        .as_str()
        .or_else(|| str_field(detail, "error"))
        .map(str::to_owned)
}

#[async_trait]
impl SearchProvider for Tavily {
    fn name(&self) -> &str {
        NAME
    }

    async fn search(&self, query: &str, max_results: usize) -> Result<Vec<SearchHit>, ToolError> {
        if max_results == 0 {
            return Ok(Vec::new());
        }
        let q: String = query.trim().chars().take(MAX_QUERY_CHARS).collect();
        let body = json!({
            "query": q,
            "max_results": max_results.min(MAX_COUNT),
            "search_depth": "basic",
        });
        let reply = self
            .http
            .send(|client| client.post(self.endpoint.clone()).json(&body))
            .await?;
        let code = reply.status.as_u16();
        if code == 432 || code == 433 {
            let what = if code == 432 {
                "the plan's credit limit"
            } else {
                "the pay-as-you-go spending limit"
            };
            return Err(self.http.failed(format!(
                "search provider tavily refused the search (HTTP {code}): {what} is used up"
            )));
        }
        if !reply.status.is_success() {
            let detail = error_detail(&reply.body);
            return Err(self.http.status_error(&reply, detail.as_deref()));
        }
        let parsed: Reply = self.http.parse_json(&reply.body)?;
        let results = parsed.results.unwrap_or_default();
        let raw = results.iter().map(|r| RawHit {
            title: str_field(r, "title"),
            url: str_field(r, "url"),
            snippet: str_field(r, "content").unwrap_or_default().to_owned(),
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

    #[test]
    fn error_details_in_both_shapes() {
        assert_eq!(
            error_detail(r#"{"detail":{"error":"Unauthorized: missing or invalid API key."}}"#)
                .as_deref(),
            Some("Unauthorized: missing or invalid API key.")
        );
        assert_eq!(
            error_detail(r#"{"detail":"Query is too long."}"#).as_deref(),
            Some("Query is too long.")
        );
        assert_eq!(error_detail("<html>"), None);
    }
}
