//! The LLM port: a chat-completion model with tool calling ([`LlmClient`]), the
//! provider-neutral chat types the domain sends and gets back (adapters translate them to and
//! from their wire formats), and how a call fails ([`LlmError`]).

use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use thiserror::Error;

pub mod transcript;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

/// A tool call requested by the model. `arguments` is the raw JSON text the model wrote
/// (adapters turn object-valued arguments into text), parsed only when the tool runs, so a
/// malformed call can be answered with a clear error instead of being lost.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: Role,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// Set on `tool` messages: the call this message answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Reasoning text some providers return and require back (DeepSeek).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
}

impl ChatMessage {
    fn plain(role: Role, content: impl Into<String>) -> ChatMessage {
        ChatMessage {
            role,
            content: Some(content.into()),
            tool_calls: Vec::new(),
            tool_call_id: None,
            reasoning_content: None,
        }
    }
    pub fn system(content: impl Into<String>) -> ChatMessage {
        ChatMessage::plain(Role::System, content)
    }
    pub fn user(content: impl Into<String>) -> ChatMessage {
        ChatMessage::plain(Role::User, content)
    }
    pub fn assistant(content: impl Into<String>) -> ChatMessage {
        ChatMessage::plain(Role::Assistant, content)
    }
    pub fn tool_result(call_id: impl Into<String>, content: impl Into<String>) -> ChatMessage {
        ChatMessage {
            tool_call_id: Some(call_id.into()),
            ..ChatMessage::plain(Role::Tool, content)
        }
    }
    /// The assistant turn that carried `reply`, kept verbatim in the transcript.
    pub fn from_reply(reply: &ChatResponse) -> ChatMessage {
        ChatMessage {
            role: Role::Assistant,
            content: reply.content.clone(),
            tool_calls: reply.tool_calls.clone(),
            tool_call_id: None,
            reasoning_content: reply.reasoning_content.clone(),
        }
    }
}

/// A function the model may call: name, description and JSON-schema parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSchema {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case", tag = "type", content = "name")]
pub enum ToolChoice {
    #[default]
    Auto,
    None,
    Required,
    /// Force one named function.
    Function(String),
}

/// Asks the server to shape its reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum ResponseFormat {
    #[default]
    Text,
    JsonObject,
    JsonSchema {
        name: String,
        schema: Value,
    },
}

/// Why a call is made; recorded with its usage and useful to adapters that route by purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallPurpose {
    Plan,
    Execute,
    Summarize,
    Other,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    pub messages: Vec<ChatMessage>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolSchema>,
    #[serde(default)]
    pub tool_choice: ToolChoice,
    #[serde(default)]
    pub response_format: ResponseFormat,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// The sampler's seed when `temperature` samples. A run sets one per sampled call from
    /// the call's journal key ([`sampling_seed`]): with one fixed seed every sampled call
    /// drew the same random numbers and, its prompt barely changed, wrote the same program
    /// as the call before (docs/code-actions.md, "Each sampled call its own seed"). `None`: the
    /// provider's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    pub purpose: CallPurpose,
}

/// The seed of a sampled call whose journal key is `key` (FNV-1a folded to 32 bits): the
/// same for the same call of a run, so a call made again samples as it did, and different
/// from every other call's.
pub fn sampling_seed(key: &str) -> u32 {
    let h = fnv1a(key.bytes());
    // Folded: every bit of the hash counts.
    (h ^ (h >> 32)) as u32
}

/// The 64-bit FNV-1a hash of `bytes`, written here so that it stays the same across
/// toolchains (std's `DefaultHasher` promises no such thing): request fingerprints in the
/// journal and sampling seeds are made with it.
pub(crate) fn fnv1a(bytes: impl IntoIterator<Item = u8>) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes
        .into_iter()
        .fold(OFFSET, |h, byte| (h ^ u64::from(byte)).wrapping_mul(PRIME))
}

impl ChatRequest {
    pub fn new(purpose: CallPurpose, messages: Vec<ChatMessage>) -> ChatRequest {
        ChatRequest {
            messages,
            tools: Vec::new(),
            tool_choice: ToolChoice::Auto,
            response_format: ResponseFormat::Text,
            temperature: None,
            seed: None,
            max_tokens: None,
            purpose,
        }
    }
    pub fn with_tools(mut self, tools: Vec<ToolSchema>, choice: ToolChoice) -> ChatRequest {
        self.tools = tools;
        self.tool_choice = choice;
        self
    }
    /// Appends `text` to the first system message, or puts a system message with it in front
    /// (some chat templates refuse a system message anywhere else).
    pub fn add_to_system_prompt(&mut self, text: &str) {
        match self.messages.iter_mut().find(|m| m.role == Role::System) {
            Some(system) => {
                let current = system.content.take().unwrap_or_default();
                system.content = Some(if current.trim().is_empty() {
                    text.to_owned()
                } else {
                    format!("{current}\n\n{text}")
                });
            }
            None => self.messages.insert(0, ChatMessage::system(text)),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Prompt tokens served from a cache (the embedded model's KV cache, or the server's
    /// `prompt_tokens_details.cached_tokens`); part of `prompt_tokens`, not added to it.
    #[serde(default)]
    pub cached_prompt_tokens: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ChatResponse {
    #[serde(default)]
    pub content: Option<String>,
    #[serde(default)]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default)]
    pub reasoning_content: Option<String>,
    #[serde(default)]
    pub usage: Usage,
    /// As the server said it (`stop`, `tool_calls`, `length`, or anything else).
    #[serde(default)]
    pub finish_reason: Option<String>,
}

impl ChatResponse {
    /// The text content, trimmed; `None` when empty.
    pub fn text(&self) -> Option<&str> {
        self.content
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
    }
}

/// A chat-completion model with tool calling.
#[cfg_attr(test, mockall::automock)]
#[async_trait]
pub trait LlmClient: Send + Sync {
    async fn chat(&self, request: ChatRequest) -> Result<ChatResponse, LlmError>;
}

/// How an LLM call failed, classified so the caller knows what to do next.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LlmError {
    /// HTTP 429 or the like: wait `retry_after` (if the server said) and try again.
    #[error("rate limited{}: {message}", retry_after.map(|d| format!(" (retry after {:.1}s)", d.as_secs_f64())).unwrap_or_default())]
    RateLimited {
        retry_after: Option<Duration>,
        message: String,
    },
    /// 5xx, connection failures, timeouts, truncated replies: worth retrying.
    #[error("transient failure: {0}")]
    Transient(String),
    /// The prompt does not fit the model's context: trim and retry once.
    #[error("context too long: {0}")]
    ContextTooLong(String),
    /// Bad or missing credentials: retrying will not help.
    #[error("authentication failed: {0}")]
    Auth(String),
    /// Anything else the server refused (bad request, unknown model...).
    #[error("permanent failure: {0}")]
    Permanent(String),
    /// The server does not support the request's `response_format` (`json_schema` or
    /// `json_object`); the same request without it may succeed. The domain decides what to
    /// ask instead (`engine::structured`); adapters only report it.
    #[error("response format not supported: {0}")]
    ResponseFormatUnsupported(String),
    /// The reply arrived but could not be understood.
    #[error("invalid response: {0}")]
    InvalidResponse(String),
}

impl LlmError {
    /// The kind of failure, as a span's `error.type` names it (the OpenTelemetry GenAI
    /// convention's; a fixed word, never the message).
    pub fn kind(&self) -> &'static str {
        match self {
            LlmError::RateLimited { .. } => "rate_limited",
            LlmError::Transient(_) => "transient",
            LlmError::ContextTooLong(_) => "context_too_long",
            LlmError::Auth(_) => "auth",
            LlmError::Permanent(_) => "permanent",
            LlmError::ResponseFormatUnsupported(_) => "response_format_unsupported",
            LlmError::InvalidResponse(_) => "invalid_response",
        }
    }

    /// The same error with its message passed through `f` (an adapter removing a secret the
    /// server echoed back); the kind and any `retry_after` are kept.
    pub fn map_message(self, f: impl FnOnce(String) -> String) -> LlmError {
        match self {
            LlmError::RateLimited {
                retry_after,
                message,
            } => LlmError::RateLimited {
                retry_after,
                message: f(message),
            },
            LlmError::Transient(m) => LlmError::Transient(f(m)),
            LlmError::ContextTooLong(m) => LlmError::ContextTooLong(f(m)),
            LlmError::Auth(m) => LlmError::Auth(f(m)),
            LlmError::Permanent(m) => LlmError::Permanent(f(m)),
            LlmError::ResponseFormatUnsupported(m) => LlmError::ResponseFormatUnsupported(f(m)),
            LlmError::InvalidResponse(m) => LlmError::InvalidResponse(f(m)),
        }
    }

    /// Whether trying the same request again may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(self, LlmError::RateLimited { .. } | LlmError::Transient(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_message_keeps_the_kind_and_the_wait() {
        let wait = Some(Duration::from_secs(2));
        let err = LlmError::RateLimited {
            retry_after: wait,
            message: "key sk-1".into(),
        }
        .map_message(|m| m.replace("sk-1", "[REDACTED]"));
        assert_eq!(
            err,
            LlmError::RateLimited {
                retry_after: wait,
                message: "key [REDACTED]".into()
            }
        );
        assert_eq!(
            LlmError::Auth("a".into()).map_message(|m| m + "b"),
            LlmError::Auth("ab".into())
        );
    }

    #[test]
    fn each_call_key_has_its_own_seed() {
        assert_eq!(sampling_seed("exec:s1:2#1"), sampling_seed("exec:s1:2#1"));
        let seeds: std::collections::HashSet<u32> =
            ["exec:s1:1#1", "exec:s1:1#2", "exec:s1:2#1", "check:s1:1#1"]
                .iter()
                .map(|k| sampling_seed(k))
                .collect();
        assert_eq!(seeds.len(), 4);
    }
}
