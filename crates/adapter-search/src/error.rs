//! [`ConfigError`]: why a search provider could not be set up. Search failures themselves are
//! [`domain::ToolError`]s, since they go back to the model.

use thiserror::Error;

/// A search provider is misconfigured. No variant ever holds an API key.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConfigError {
    /// `PLANWRIGHT_SEARCH` (or the config file's `provider`) names no known provider.
    #[error(
        "unknown search provider '{0}' in PLANWRIGHT_SEARCH (expected searxng, brave, tavily or none)"
    )]
    UnknownProvider(String),
    /// A provider was chosen explicitly but its setting is missing.
    #[error("PLANWRIGHT_SEARCH={provider} but {setting} is not set")]
    MissingSetting {
        provider: &'static str,
        setting: &'static str,
    },
    /// A base URL that cannot be used.
    #[error("invalid {setting} '{url}': {reason}")]
    InvalidUrl {
        setting: &'static str,
        /// The URL as given, credentials removed.
        url: String,
        reason: String,
    },
    /// An API key that is blank or cannot be sent in an HTTP header.
    #[error(
        "the {provider} API key is blank or contains characters not allowed in an HTTP header"
    )]
    InvalidKey { provider: &'static str },
    /// A timeout that is not a positive number of seconds.
    #[error("invalid search timeout '{0}': expected a number of seconds above zero")]
    InvalidTimeout(String),
    /// A `--ca-cert` file that holds no usable PEM certificate.
    #[error("invalid CA certificate for web search: {0}")]
    InvalidCaCert(String),
    /// The HTTP client could not be built (TLS set-up).
    #[error("could not set up the HTTP client for {provider}: {reason}")]
    HttpClient {
        provider: &'static str,
        reason: String,
    },
}
