//! Which provider serves `web_search`, from the environment or a config file.
//!
//! Rules: an explicit `PLANWRIGHT_SEARCH` (`searxng`, `brave`, `tavily`, or `none` to turn
//! search off) picks that provider and is an error when its setting is missing; otherwise
//! the first configured of `SEARXNG_URL`, `TAVILY_API_KEY`, `BRAVE_API_KEY` (or
//! `BRAVE_SEARCH_API_KEY`); none → no provider, and `web_search` is not offered.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use domain::ports::SearchProvider;
use serde::Deserialize;

use crate::brave::Brave;
use crate::error::ConfigError;
use crate::http::{self, SearchOptions, REDACTED};
use crate::searxng::SearxNg;
use crate::tavily::Tavily;

/// `searxng`, `brave`, `tavily` or `none`: the provider to use. Optional.
pub const ENV_PROVIDER: &str = "PLANWRIGHT_SEARCH";
/// Root of a SearxNG instance, e.g. `http://localhost:8888`.
pub const ENV_SEARXNG_URL: &str = "SEARXNG_URL";
/// Brave Search API subscription token.
pub const ENV_BRAVE_API_KEY: &str = "BRAVE_API_KEY";
/// Accepted when [`ENV_BRAVE_API_KEY`] is not set.
pub const ENV_BRAVE_SEARCH_API_KEY: &str = "BRAVE_SEARCH_API_KEY";
/// Tavily API key (`tvly-...`).
pub const ENV_TAVILY_API_KEY: &str = "TAVILY_API_KEY";
/// Seconds one search request may take (default 20).
pub const ENV_TIMEOUT: &str = "PLANWRIGHT_SEARCH_TIMEOUT";

const NO_PROVIDER: &str = "no search provider: set SEARXNG_URL, BRAVE_API_KEY or TAVILY_API_KEY";

/// Search settings, as read from the environment ([`SearchConfig::from_env`]) or
/// deserialized from a config file section:
///
/// ```toml
/// [search]
/// provider = "searxng"            # optional: searxng | brave | tavily | none
/// searxng_url = "http://localhost:8888"
/// brave_api_key = "..."
/// tavily_api_key = "tvly-..."
/// timeout_secs = 20
/// brave_base_url = "..."          # optional, file only (proxies)
/// tavily_base_url = "..."         # optional, file only
/// ```
///
/// Blank values count as unset. `Debug` never shows a key or URL credentials.
#[derive(Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SearchConfig {
    pub provider: Option<String>,
    pub searxng_url: Option<String>,
    pub brave_api_key: Option<String>,
    pub tavily_api_key: Option<String>,
    pub timeout_secs: Option<f64>,
    pub brave_base_url: Option<String>,
    pub tavily_base_url: Option<String>,
    /// PEM texts trusted beside the platform's roots; set by the application from
    /// `--ca-cert FILE`, never read from a file section.
    #[serde(skip)]
    pub extra_root_certs: Vec<Vec<u8>>,
}

impl fmt::Debug for SearchConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let key = |k: &Option<String>| k.as_ref().map(|_| REDACTED);
        let url = |u: &Option<String>| u.as_deref().map(http::hide_credentials);
        f.debug_struct("SearchConfig")
            .field("provider", &self.provider)
            .field("searxng_url", &url(&self.searxng_url))
            .field("brave_api_key", &key(&self.brave_api_key))
            .field("tavily_api_key", &key(&self.tavily_api_key))
            .field("timeout_secs", &self.timeout_secs)
            .field("brave_base_url", &url(&self.brave_base_url))
            .field("tavily_base_url", &url(&self.tavily_base_url))
            .field("extra_root_certs", &self.extra_root_certs.len())
            .finish()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    SearxNg,
    Brave,
    Tavily,
}

/// What the settings ask for, before anything is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Selection {
    /// `PLANWRIGHT_SEARCH=none`.
    Disabled,
    /// Nothing configured.
    Unconfigured,
    Chosen {
        kind: Kind,
        explicit: bool,
    },
}

/// A trimmed, non-blank value.
fn set(value: &Option<String>) -> Option<&str> {
    value.as_deref().map(str::trim).filter(|v| !v.is_empty())
}

impl SearchConfig {
    /// Reads the `PLANWRIGHT_SEARCH*`, `SEARXNG_URL`, `BRAVE_*` and `TAVILY_API_KEY`
    /// variables through `lookup` (so tests need not touch the process environment).
    pub fn from_lookup(
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<SearchConfig, ConfigError> {
        let get = |name: &str| {
            lookup(name)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        let timeout_secs = match get(ENV_TIMEOUT) {
            Some(raw) => Some(
                raw.parse::<f64>()
                    .ok()
                    .filter(|s| s.is_finite() && *s > 0.0)
                    .ok_or(ConfigError::InvalidTimeout(raw))?,
            ),
            None => None,
        };
        Ok(SearchConfig {
            provider: get(ENV_PROVIDER),
            searxng_url: get(ENV_SEARXNG_URL),
            brave_api_key: get(ENV_BRAVE_API_KEY).or_else(|| get(ENV_BRAVE_SEARCH_API_KEY)),
            tavily_api_key: get(ENV_TAVILY_API_KEY),
            timeout_secs,
            brave_base_url: None,
            tavily_base_url: None,
            extra_root_certs: Vec::new(),
        })
    }

    /// [`SearchConfig::from_lookup`] over the process environment.
    pub fn from_env() -> Result<SearchConfig, ConfigError> {
        SearchConfig::from_lookup(&|name| std::env::var(name).ok())
    }

    /// The request timeout and retry pause.
    pub fn options(&self) -> Result<SearchOptions, ConfigError> {
        let options = SearchOptions::default().with_extra_root_certs(self.extra_root_certs.clone());
        match self.timeout_secs {
            None => Ok(options),
            Some(secs) => Duration::try_from_secs_f64(secs)
                .ok()
                .filter(|d| !d.is_zero())
                .map(|d| options.with_timeout(d))
                .ok_or_else(|| ConfigError::InvalidTimeout(secs.to_string())),
        }
    }

    fn selection(&self) -> Result<Selection, ConfigError> {
        if let Some(choice) = set(&self.provider) {
            let chosen = |kind, present: Option<&str>, provider, setting| match present {
                Some(_) => Ok(Selection::Chosen {
                    kind,
                    explicit: true,
                }),
                None => Err(ConfigError::MissingSetting { provider, setting }),
            };
            return match choice.to_ascii_lowercase().as_str() {
                "searxng" | "searx" => chosen(
                    Kind::SearxNg,
                    set(&self.searxng_url),
                    "searxng",
                    ENV_SEARXNG_URL,
                ),
                "brave" => chosen(
                    Kind::Brave,
                    set(&self.brave_api_key),
                    "brave",
                    ENV_BRAVE_API_KEY,
                ),
                "tavily" => chosen(
                    Kind::Tavily,
                    set(&self.tavily_api_key),
                    "tavily",
                    ENV_TAVILY_API_KEY,
                ),
                "none" | "off" => Ok(Selection::Disabled),
                _ => Err(ConfigError::UnknownProvider(choice.to_owned())),
            };
        }
        let first = [
            (Kind::SearxNg, set(&self.searxng_url)),
            (Kind::Tavily, set(&self.tavily_api_key)),
            (Kind::Brave, set(&self.brave_api_key)),
        ]
        .into_iter()
        .find(|(_, value)| value.is_some());
        Ok(match first {
            Some((kind, _)) => Selection::Chosen {
                kind,
                explicit: false,
            },
            None => Selection::Unconfigured,
        })
    }

    /// The configured provider, `None` when there is none (or search is turned off).
    pub fn build(&self) -> Result<Option<Arc<dyn SearchProvider>>, ConfigError> {
        let options = self.options()?;
        let kind = match self.selection()? {
            Selection::Disabled | Selection::Unconfigured => return Ok(None),
            Selection::Chosen { kind, .. } => kind,
        };
        let provider: Arc<dyn SearchProvider> = match kind {
            Kind::SearxNg => Arc::new(SearxNg::new(
                set(&self.searxng_url).unwrap_or_default(),
                options,
            )?),
            Kind::Brave => {
                let brave = Brave::new(set(&self.brave_api_key).unwrap_or_default(), options)?;
                Arc::new(match set(&self.brave_base_url) {
                    Some(base) => brave.with_base_url(base)?,
                    None => brave,
                })
            }
            Kind::Tavily => {
                let tavily = Tavily::new(set(&self.tavily_api_key).unwrap_or_default(), options)?;
                Arc::new(match set(&self.tavily_base_url) {
                    Some(base) => tavily.with_base_url(base)?,
                    None => tavily,
                })
            }
        };
        tracing::debug!(provider = provider.name(), "web search provider configured");
        Ok(Some(provider))
    }

    /// One line on whether `web_search` is offered and why, e.g.
    /// `web_search: offered via searxng (SEARXNG_URL=http://localhost:8888)` or
    /// `web_search: not offered (no search provider: set SEARXNG_URL, BRAVE_API_KEY or
    /// TAVILY_API_KEY)`. Never shows a key.
    pub fn describe(&self) -> String {
        let (kind, explicit) = match self.build().and_then(|_| self.selection()) {
            Err(e) => return format!("web_search: not offered ({e})"),
            Ok(Selection::Disabled) => {
                return format!("web_search: not offered (turned off by {ENV_PROVIDER}=none)")
            }
            Ok(Selection::Unconfigured) => {
                return format!("web_search: not offered ({NO_PROVIDER})")
            }
            Ok(Selection::Chosen { kind, explicit }) => (kind, explicit),
        };
        let (name, setting) = match kind {
            Kind::SearxNg => (
                "searxng",
                format!(
                    "{ENV_SEARXNG_URL}={}",
                    http::hide_credentials(set(&self.searxng_url).unwrap_or_default())
                ),
            ),
            Kind::Brave => ("brave", "Brave API key set".to_owned()),
            Kind::Tavily => ("tavily", format!("{ENV_TAVILY_API_KEY} set")),
        };
        let configured = [
            set(&self.searxng_url),
            set(&self.tavily_api_key),
            set(&self.brave_api_key),
        ]
        .iter()
        .filter(|v| v.is_some())
        .count();
        let why = if explicit {
            format!("; chosen by {ENV_PROVIDER}")
        } else if configured > 1 {
            format!(
                "; the first configured of searxng, tavily, brave: set {ENV_PROVIDER} to choose"
            )
        } else {
            String::new()
        };
        format!("web_search: offered via {name} ({setting}{why})")
    }
}

/// The search provider the environment configures; `Ok(None)` when none is (then do not
/// offer `web_search` at all).
pub fn provider_from_env() -> Result<Option<Arc<dyn SearchProvider>>, ConfigError> {
    SearchConfig::from_env()?.build()
}

/// [`provider_from_env`] with the variables read through `lookup`.
pub fn provider_from_lookup(
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<Arc<dyn SearchProvider>>, ConfigError> {
    SearchConfig::from_lookup(lookup)?.build()
}

/// A line for `planwright tools list`: whether `web_search` is offered and, if not, how to
/// configure a provider.
pub fn describe_config() -> String {
    describe_config_from(&|name| std::env::var(name).ok())
}

/// [`describe_config`] with the variables read through `lookup`.
pub fn describe_config_from(lookup: &dyn Fn(&str) -> Option<String>) -> String {
    match SearchConfig::from_lookup(lookup) {
        Ok(config) => config.describe(),
        Err(e) => format!("web_search: not offered ({e})"),
    }
}
