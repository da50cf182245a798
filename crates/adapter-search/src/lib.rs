//! # adapter-search
//!
//! Implementations of the domain port [`domain::ports::SearchProvider`], the engine behind
//! the `web_search` tool ([`domain::tools::builtin::WebSearch`]):
//!
//! - [`SearxNg`]: a self-hosted SearxNG instance, `GET {base}/search?q=...&format=json`.
//! - [`Brave`]: the Brave Web Search API, `GET /res/v1/web/search?q=...&count=N` with
//!   `X-Subscription-Token`.
//! - [`Tavily`]: the Tavily Search API, `POST /search` with `Authorization: Bearer tvly-...`.
//!
//! [`provider_from_env`] picks one from `PLANWRIGHT_SEARCH`, `SEARXNG_URL`,
//! `BRAVE_API_KEY` (or `BRAVE_SEARCH_API_KEY`), `TAVILY_API_KEY` and
//! `PLANWRIGHT_SEARCH_TIMEOUT`; [`SearchConfig`] is the same settings for a config file. With
//! nothing configured it returns `Ok(None)`, and the app must then not offer `web_search` to
//! the model at all. [`describe_config`] says in one line what is configured.
//!
//! Every provider returns at most `max_results` hits with plain-text titles and snippets
//! (HTML tags and entities removed, whitespace collapsed, snippets cut to about 300
//! characters). Replies are parsed leniently: missing fields are tolerated, extra ones
//! ignored. Failures are [`domain::ToolError::Failed`] with a message meant for the model: a
//! rejected key (401/403), a rate limit (429, with `Retry-After`), a failing or unreachable
//! server (5xx and connection failures are retried once), a timeout (20 s by default), an
//! unexpected body. The API key never appears in errors, logs or `Debug` output.
//!
//! HTTP is reqwest with rustls (no native TLS). This is an adapter: the app depends on it,
//! and `domain` must never depend on it (nor on HTTP at all).

mod brave;
mod config;
mod error;
mod hits;
mod http;
mod searxng;
mod tavily;
mod text;

pub use brave::{Brave, BRAVE_DEFAULT_BASE_URL};
pub use config::{
    describe_config, describe_config_from, provider_from_env, provider_from_lookup, SearchConfig,
    ENV_BRAVE_API_KEY, ENV_BRAVE_SEARCH_API_KEY, ENV_PROVIDER, ENV_SEARXNG_URL, ENV_TAVILY_API_KEY,
    ENV_TIMEOUT,
};
pub use error::ConfigError;
pub use http::{SearchOptions, DEFAULT_RETRY_DELAY, DEFAULT_TIMEOUT};
pub use searxng::SearxNg;
pub use tavily::{Tavily, TAVILY_DEFAULT_BASE_URL};
