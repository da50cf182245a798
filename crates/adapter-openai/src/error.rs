//! The crate's error: what can go wrong while building a client. Failures of calls are
//! [`domain::LlmError`]s.

/// Why an [`OpenAiClient`](crate::OpenAiClient) could not be built.
///
/// No variant ever carries the API key.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("invalid base URL '{url}': {reason}")]
    InvalidBaseUrl { url: String, reason: String },
    #[error("invalid API key: it contains characters that cannot be sent in an HTTP header")]
    InvalidApiKey,
    #[error("invalid configuration: {0}")]
    InvalidConfig(String),
    #[error("unknown provider '{0}' (known: openai, ollama, vllm, llamacpp, deepseek, openrouter, lmstudio)")]
    UnknownProvider(String),
    #[error("the {provider} provider needs an API key: set {vars}")]
    MissingApiKey {
        provider: &'static str,
        vars: String,
    },
    #[error("could not build the HTTP client: {0}")]
    HttpClient(#[source] reqwest::Error),
    #[error("invalid CA certificate: {0}")]
    InvalidCaCert(String),
}
