//! A reply of the Messages API as a [`ChatResponse`]: the content blocks (whole, or
//! assembled from a stream by `crate::sse`), the stop reason and the usage.
//!
//! - `text` blocks are the content (joined by a blank line), `tool_use` blocks the tool calls
//!   (`input` as JSON text), in order; a block of another type (`thinking`, a server tool's,
//!   one added after this crate) is ignored with a warning.
//! - `stop_reason` is kept as the server said it (`end_turn`, `tool_use`, `max_tokens`,
//!   `stop_sequence`, ...), except: `max_tokens` (or `model_context_window_exceeded`) while a
//!   `tool_use` block was written is [`CallError::ToolCallCutShort`] (transient: the call is
//!   never run half-written), and `refusal` is [`CallError::Refused`] (permanent).
//! - Usage: `input_tokens` counts only the tokens after the last cache breakpoint, so
//!   `prompt_tokens` is `input_tokens + cache_creation_input_tokens +
//!   cache_read_input_tokens`, `cached_prompt_tokens` is `cache_read_input_tokens` (part of
//!   `prompt_tokens`, as the port says), `completion_tokens` is `output_tokens`. The port has
//!   no field for cache writes: `cache_creation_input_tokens` is in `prompt_tokens` and in
//!   the `debug` log line of each call.

use domain::llm::{ChatResponse, ToolCall, Usage};
use serde_json::Value;

use crate::classify::body_excerpt;
use crate::error::CallError;

/// One content block of a reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ReplyBlock {
    Text(String),
    /// `input` is JSON text (from the object, or the streamed `partial_json` pieces).
    ToolUse {
        id: String,
        name: String,
        input: String,
    },
    /// A block of another type, by its type.
    Other(String),
}

/// The token counts of a reply, as the API names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct WireUsage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub cache_read_input_tokens: u64,
}

impl WireUsage {
    /// Takes every count `usage` has (a stream's `message_delta` repeats some, cumulatively).
    pub(crate) fn update(&mut self, usage: &Value) {
        let fields = [
            ("input_tokens", &mut self.input_tokens),
            ("output_tokens", &mut self.output_tokens),
            (
                "cache_creation_input_tokens",
                &mut self.cache_creation_input_tokens,
            ),
            ("cache_read_input_tokens", &mut self.cache_read_input_tokens),
        ];
        for (name, field) in fields {
            if let Some(n) = usage.get(name).and_then(Value::as_u64) {
                *field = n;
            }
        }
    }

    fn to_port(self) -> Usage {
        Usage {
            prompt_tokens: self
                .input_tokens
                .saturating_add(self.cache_creation_input_tokens)
                .saturating_add(self.cache_read_input_tokens),
            completion_tokens: self.output_tokens,
            cached_prompt_tokens: self.cache_read_input_tokens,
        }
    }
}

/// A reply's parts, however they arrived.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct ReplyParts {
    pub blocks: Vec<ReplyBlock>,
    pub stop_reason: Option<String>,
    pub usage: WireUsage,
}

impl ReplyParts {
    /// The reply, or the failure its stop reason means. `max_tokens` is the request's, for
    /// the message of a call cut short.
    pub(crate) fn finish(self, max_tokens: u32) -> Result<ChatResponse, CallError> {
        let stop = self.stop_reason.as_deref().unwrap_or_default();
        let cut_short = matches!(stop, "max_tokens" | "model_context_window_exceeded");
        let mut texts = Vec::new();
        let mut tool_calls = Vec::new();
        for block in self.blocks {
            match block {
                ReplyBlock::Text(text) if !text.is_empty() => texts.push(text),
                ReplyBlock::Text(_) => {}
                ReplyBlock::ToolUse { name, .. } if cut_short => {
                    return Err(CallError::ToolCallCutShort {
                        tool: name,
                        max_tokens,
                    });
                }
                ReplyBlock::ToolUse { id, name, input } => {
                    let arguments = if input.trim().is_empty() {
                        "{}".to_owned()
                    } else {
                        input
                    };
                    tool_calls.push(ToolCall {
                        id,
                        name,
                        arguments,
                    });
                }
                ReplyBlock::Other(kind) => {
                    tracing::warn!(block_type = %kind, "ignored a reply content block of a type this client does not use");
                }
            }
        }
        let content = (!texts.is_empty()).then(|| texts.join("\n\n"));
        if stop == "refusal" {
            return Err(CallError::Refused { text: content });
        }
        tracing::debug!(
            input_tokens = self.usage.input_tokens,
            cache_creation_input_tokens = self.usage.cache_creation_input_tokens,
            cache_read_input_tokens = self.usage.cache_read_input_tokens,
            output_tokens = self.usage.output_tokens,
            "messages usage"
        );
        Ok(ChatResponse {
            content,
            tool_calls,
            reasoning_content: None,
            usage: self.usage.to_port(),
            finish_reason: self.stop_reason,
        })
    }
}

/// The parts of a whole (not streamed) `message` object.
pub(crate) fn parse_message(body: &Value, status: u16) -> Result<ReplyParts, CallError> {
    let Some(content) = body.get("content").and_then(Value::as_array) else {
        return Err(CallError::Invalid(format!(
            "the HTTP {status} reply has no content array: {}",
            body_excerpt(body.to_string().as_bytes())
        )));
    };
    let mut usage = WireUsage::default();
    if let Some(u) = body.get("usage") {
        usage.update(u);
    }
    Ok(ReplyParts {
        blocks: content.iter().map(reply_block).collect(),
        stop_reason: body
            .get("stop_reason")
            .and_then(Value::as_str)
            .map(str::to_owned),
        usage,
    })
}

/// One block of a whole reply (or the start of a streamed one).
pub(crate) fn reply_block(block: &Value) -> ReplyBlock {
    let field = |name: &str| {
        block
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    match block
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
    {
        "text" => ReplyBlock::Text(field("text")),
        "tool_use" => ReplyBlock::ToolUse {
            id: field("id"),
            name: field("name"),
            input: match block.get("input") {
                None | Some(Value::Null) => String::new(),
                Some(Value::Object(map)) if map.is_empty() => String::new(),
                Some(input) => input.to_string(),
            },
        },
        other => ReplyBlock::Other(other.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn usage_counts_cache_reads_and_writes_in_the_prompt() {
        let body = json!({
            "content": [{"type": "text", "text": "hi"}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 20, "cache_creation_input_tokens": 100,
                      "cache_read_input_tokens": 3000, "output_tokens": 7}
        });
        let reply = parse_message(&body, 200).unwrap().finish(10).unwrap();
        assert_eq!(
            reply.usage,
            Usage {
                prompt_tokens: 3120,
                completion_tokens: 7,
                cached_prompt_tokens: 3000
            }
        );
        assert_eq!(reply.finish_reason.as_deref(), Some("end_turn"));
    }

    #[test]
    fn a_call_cut_by_max_tokens_is_an_error_and_text_cut_is_kept() {
        let cut = json!({
            "content": [{"type": "text", "text": "Writing."},
                        {"type": "tool_use", "id": "toolu_1", "name": "file_write", "input": {}}],
            "stop_reason": "max_tokens", "usage": {}
        });
        assert_eq!(
            parse_message(&cut, 200).unwrap().finish(64).unwrap_err(),
            CallError::ToolCallCutShort {
                tool: "file_write".into(),
                max_tokens: 64
            }
        );
        let text =
            json!({"content": [{"type": "text", "text": "long"}], "stop_reason": "max_tokens"});
        let reply = parse_message(&text, 200).unwrap().finish(64).unwrap();
        assert_eq!(reply.finish_reason.as_deref(), Some("max_tokens"));
        assert_eq!(reply.content.as_deref(), Some("long"));
    }

    #[test]
    fn unknown_blocks_are_ignored_and_a_refusal_is_an_error() {
        let body = json!({
            "content": [{"type": "thinking", "thinking": "hm", "signature": "x"},
                        {"type": "shiny_new_block"},
                        {"type": "tool_use", "id": "toolu_1", "name": "file_list", "input": {}}],
            "stop_reason": "tool_use"
        });
        let reply = parse_message(&body, 200).unwrap().finish(64).unwrap();
        assert_eq!(reply.content, None);
        assert_eq!(reply.tool_calls[0].arguments, "{}");
        let refused =
            json!({"content": [{"type": "text", "text": "I won't"}], "stop_reason": "refusal"});
        assert_eq!(
            parse_message(&refused, 200)
                .unwrap()
                .finish(64)
                .unwrap_err(),
            CallError::Refused {
                text: Some("I won't".into())
            }
        );
        assert!(matches!(
            parse_message(&json!({"type": "message"}), 200),
            Err(CallError::Invalid(_))
        ));
    }
}
