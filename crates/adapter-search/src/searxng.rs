//! [`SearxNg`]: a self-hosted SearxNG instance through its JSON API,
//! `GET {base}/search?q=...&format=json`.

use std::fmt;

use async_trait::async_trait;
use domain::ports::{SearchHit, SearchProvider};
use domain::ToolError;
use reqwest::header::HeaderMap;
use reqwest::Url;
use serde::Deserialize;
use serde_json::Value;

use crate::error::ConfigError;
use crate::hits::{self, str_field, RawHit};
use crate::http::{self, Http, SearchOptions};

const NAME: &str = "searxng";

/// A SearxNG instance. The instance must allow the JSON format (`search: formats: [html,
/// json]` in its `settings.yml`); otherwise it answers 403.
///
/// `Debug` shows the base URL without any credentials it carries.
pub struct SearxNg {
    base_url: Url,
    endpoint: Url,
    http: Http,
}

impl fmt::Debug for SearxNg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SearxNg")
            .field("base_url", &self.http.shown_base())
            .field("options", &self.http.options())
            .finish()
    }
}

impl SearxNg {
    /// The instance at `base_url` (e.g. `http://localhost:8888`; a trailing `/search` is
    /// accepted too). User name and password in the URL are sent as basic auth and never
    /// shown.
    pub fn new(base_url: &str, options: SearchOptions) -> Result<SearxNg, ConfigError> {
        let mut base = http::parse_base_url("SEARXNG_URL", base_url)?;
        if let Some(root) = base.path().strip_suffix("/search").map(str::to_owned) {
            base.set_path(&root);
        }
        let endpoint = http::endpoint(&base, "/search");
        let http = Http::new(NAME, options, HeaderMap::new(), None, &base)?;
        Ok(SearxNg {
            base_url: base,
            endpoint,
            http,
        })
    }

    /// The instance root, without credentials.
    pub fn base_url(&self) -> String {
        http::shown_url(&self.base_url)
    }
}

/// The part of SearxNG's reply that is used; `answers`, `infoboxes`, `suggestions` and the
/// rest are ignored.
#[derive(Deserialize)]
struct Reply {
    #[serde(default)]
    results: Option<Vec<Value>>,
}

#[async_trait]
impl SearchProvider for SearxNg {
    fn name(&self) -> &str {
        NAME
    }

    async fn search(&self, query: &str, max_results: usize) -> Result<Vec<SearchHit>, ToolError> {
        if max_results == 0 {
            return Ok(Vec::new());
        }
        let reply = self
            .http
            .send(|client| {
                client
                    .get(self.endpoint.clone())
                    .query(&[("q", query), ("format", "json")])
            })
            .await?;
        let base = self.http.shown_base();
        match reply.status.as_u16() {
            200..=299 => {}
            401 => {
                return Err(self.http.failed(format!(
                    "searxng at {base} asks for credentials (HTTP 401): put them in SEARXNG_URL \
                     (http://user:password@host)"
                )))
            }
            403 => {
                return Err(self.http.failed(format!(
                    "searxng at {base} refused the JSON API (HTTP 403): enable `json` under \
                     `search: formats:` in its settings.yml"
                )))
            }
            _ => return Err(self.http.status_error(&reply, None)),
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
