//! # adapter-openai
//!
//! An implementation of the domain port [`domain::ports::LlmClient`] over the **OpenAI Chat
//! Completions** wire protocol (`POST {base_url}/chat/completions`), for OpenAI itself and
//! the many compatible servers: Ollama, vLLM, llama.cpp (`llama-server`), DeepSeek,
//! OpenRouter, LM Studio…
//!
//! - [`OpenAiConfig`] says where the server is, which model to use, the key and the retry
//!   policy; [`OpenAiClient`] is the client.
//! - Requests are translated from [`domain::llm::ChatRequest`]; replies are parsed
//!   leniently, since compatible servers each bend the format a little.
//! - Failures are classified into [`domain::LlmError`] (rate limit, transient, context too
//!   long, auth, permanent, invalid reply); rate limits and transient failures are retried
//!   with jittered exponential backoff, honouring `Retry-After`.
//! - Replies may be streamed (server-sent events, [`OpenAiConfig::stream`]): content,
//!   reasoning and tool-call deltas are assembled (by `index`, else id, else position), and a
//!   stream cut short is a transient failure, retried.
//! - Every outgoing transcript is made valid first (`domain::llm::transcript`): an assistant tool call without its tool
//!   message gets `"(no result recorded)"`, an orphaned tool message is dropped (with a
//!   warning).
//! - Structured output: the request's `response_format` (`json_schema`, `json_object`) is
//!   sent as asked; a server's refusal of it (an HTTP 4xx naming `response_format`,
//!   `json_schema` or `json_object`), or a format the preset says the server lacks, is
//!   [`domain::LlmError::ResponseFormatUnsupported`]. The domain decides what to ask instead
//!   (docs/architecture.md, "Structured output"); this crate never retries without the
//!   format nor looks for JSON in the reply.
//! - [`ToolProtocol::Text`] lets models without tool calling call tools by writing JSON.
//! - [`Provider`] presets (OpenAI, Ollama, vLLM, llama.cpp, DeepSeek, OpenRouter, LM Studio)
//!   set the base URL, key requirement and quirks; [`providers()`] describes each to the
//!   front ends (the domain's `ModelProvider`: `--provider NAME`, the client from a run's
//!   settings, `planwright doctor`'s endpoint line), `openai` also serving a run that names
//!   no provider when `OPENAI_API_KEY` or `OPENAI_BASE_URL` is set.
//! - The API key never appears in errors, logs or `Debug` output.
//!
//! This is an adapter: the runner lists its providers (`runner::providers`), and `domain`
//! must never depend on it (nor on HTTP at all).

mod classify;
mod client;
mod config;
mod error;
#[cfg(fuzzing)]
#[doc(hidden)]
pub mod fuzzing;
mod provider;
mod providers;
mod sse;
mod text_tools;
mod wire;

pub use client::OpenAiClient;
pub use config::{
    OpenAiConfig, ReasoningEcho, ToolProtocol, DEFAULT_BASE_URL, DEFAULT_MAX_RESPONSE_BYTES,
};
pub use error::Error;
pub use provider::{Provider, API_KEY_VAR, BASE_URL_VAR};
pub use providers::{providers, Preset};
