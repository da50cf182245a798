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
//! - The API key never appears in errors, logs or `Debug` output.
//!
//! This is an adapter: the app depends on it, and `domain` must never depend on it (nor on
//! HTTP at all).

mod classify;
mod client;
mod config;
mod error;
mod wire;

pub use client::OpenAiClient;
pub use config::{OpenAiConfig, DEFAULT_BASE_URL};
pub use error::Error;
