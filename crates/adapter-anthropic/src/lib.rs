//! # adapter-anthropic
//!
//! An implementation of the domain port [`domain::ports::LlmClient`] over Anthropic's
//! **Messages API** (`POST {base_url}/v1/messages`, `anthropic-version: 2023-06-01`, the key
//! in `x-api-key`), for Claude models. docs/anthropic.md is the user's page.
//!
//! - [`AnthropicConfig`] says where the API is, which model, the reply's `max_tokens` (the
//!   API requires one), streaming, prompt caching and the retry policy; [`AnthropicClient`]
//!   is the client; [`AnthropicClient::check_model`] checks the endpoint, key and model
//!   without spending tokens (for `doctor`).
//! - Requests (`request`): the leading system messages become the top-level `system`;
//!   assistant tool calls are `tool_use` blocks (parallel calls side by side) and tool
//!   messages `tool_result` blocks (`is_error: true` for a result the engine marked as a
//!   failure); turns of one role in a row are merged; tools are `{name, description,
//!   input_schema}`; the transcript is made valid first (`domain::llm::transcript`). A `response_format`
//!   is refused before sending ([`domain::LlmError::ResponseFormatUnsupported`]: the API
//!   has no such parameter; the domain then asks without it).
//! - Replies (`response`, `sse`): whole or streamed (`message_start`, `content_block_*` with
//!   `text_delta` and `input_json_delta`, `message_delta`, `message_stop`, `ping`, `error`),
//!   with the same idle limit, size limit and cancellation (drop the future) as
//!   adapter-openai. `max_tokens` in the middle of a tool call is
//!   [`CallError::ToolCallCutShort`] (transient: retried, never run half-written); a
//!   `refusal` is [`CallError::Refused`]; a block of an unknown type is ignored with a
//!   warning.
//! - Failures are [`CallError`]s, each with its [`domain::LlmError`] kind (`classify`):
//!   401/403 `Auth`, 429 `RateLimited`, 500/529 and cut streams `Transient`, a prompt too
//!   long `ContextTooLong`, other 4xx `Permanent`. Rate limits and transient failures are
//!   retried with jittered exponential backoff, waiting `retry-after` when the server sent
//!   one (a 529 included), capped at `max_retry_after`; 400/401/403/404 never are.
//! - Usage: `prompt_tokens` = `input_tokens` + `cache_creation_input_tokens` +
//!   `cache_read_input_tokens`, `cached_prompt_tokens` = `cache_read_input_tokens`. The port
//!   has no field for cache writes; they are in `prompt_tokens` and the `debug` log.
//! - The API key never appears in errors, logs or `Debug` output.
//! - [`providers`] describes `--provider anthropic` to the front ends (the domain's
//!   `ModelProvider`: its `[providers.anthropic]` table, the client from a run's settings,
//!   the key check before a run, `planwright doctor`'s line).
//!
//! ## Prompt caching
//!
//! With [`AnthropicConfig::prompt_caching`] (on by default), every request carries
//! `cache_control: {"type": "ephemeral"}` on at most four blocks (the API's limit), in the
//! order the cache reads the prompt (tools, then system, then messages):
//!
//! 1. the **last tool definition**: the tools are the same for every call of a run;
//! 2. the **last block of `system`**: the system prompt is the same for every call of a
//!    step;
//! 3. the **last block of the first user turn**: the step's prompt, which every call of the
//!    step starts with;
//! 4. the **last block of the last turn**: the transcript so far, which the next call of the
//!    step starts with (its new turns come after it).
//!
//! So the first call of a step writes its prefix to the cache, and every later call reads
//! all of it but the turns added since (the API looks back up to 20 blocks from a
//! breakpoint for an earlier entry; past that, breakpoint 3 still hits). A prefix below the
//! model's minimum (1024 tokens for most models) is simply not cached. Cache reads cost a
//! tenth of input tokens, writes a quarter more.
//!
//! This is an adapter: the runner lists its provider (`runner::providers`), and `domain`
//! must never depend on it (nor on HTTP at all); it depends on no other adapter.

mod classify;
mod client;
mod config;
mod error;
mod provider;
mod request;
mod response;
mod sse;

pub use client::AnthropicClient;
pub use config::{
    AnthropicConfig, ANTHROPIC_VERSION, API_KEY_VAR, BASE_URL_VAR, DEFAULT_BASE_URL,
    DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_MAX_TOKENS,
};
pub use error::{CallError, Error};
pub use provider::{providers, AnthropicProvider};
