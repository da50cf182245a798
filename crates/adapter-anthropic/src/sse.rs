//! Streamed replies (`"stream": true`): the Messages API's server-sent events, read line by
//! line and assembled into the [`ReplyParts`] of one reply.
//!
//! Events (each `data:` is JSON whose `type` names it): `message_start` (the message, with
//! the input usage), `content_block_start` / `content_block_delta` (`text_delta`,
//! `input_json_delta` pieces of a tool call's input) / `content_block_stop`, by block
//! `index`; `message_delta` (`stop_reason`, cumulative usage); `message_stop` (the end);
//! `ping` (ignored); `error` (a [`CallError::ErrorInReply`], classified by its type). Events
//! and deltas of other types are ignored. A stream that ends before `message_stop`, or with
//! a `tool_use` block never closed, was cut: [`CallError::Truncated`], so the call is
//! retried and never run half-written.

use std::collections::BTreeMap;

use http_client::{data_of, SseLines};
use serde_json::Value;

use crate::classify::{excerpt, ApiError};
use crate::error::CallError;
use crate::response::{reply_block, ReplyBlock, ReplyParts, WireUsage};

/// A block being assembled.
#[derive(Debug)]
struct OpenBlock {
    block: ReplyBlock,
    /// `content_block_stop` seen.
    closed: bool,
    /// A tool call's input came whole in `content_block_start`: the first delta replaces it.
    input_from_start: bool,
}

/// Accumulates a stream's bytes into a reply.
#[derive(Debug)]
pub(crate) struct SseAssembler {
    status: u16,
    lines: SseLines,
    blocks: BTreeMap<u64, OpenBlock>,
    stop_reason: Option<String>,
    usage: WireUsage,
    /// `message_stop` seen.
    done: bool,
    /// `data:` events handled.
    events: usize,
}

impl SseAssembler {
    pub(crate) fn new(status: u16) -> SseAssembler {
        SseAssembler {
            status,
            lines: SseLines::new(),
            blocks: BTreeMap::new(),
            stop_reason: None,
            usage: WireUsage::default(),
            done: false,
            events: 0,
        }
    }

    /// Whether `message_stop` arrived (nothing after it matters).
    pub(crate) fn is_done(&self) -> bool {
        self.done
    }

    /// Feeds received bytes; complete lines are handled at once.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Result<(), CallError> {
        let mut lines = std::mem::take(&mut self.lines);
        let fed = lines.feed(bytes, |line| {
            self.line(line)?;
            Ok(self.done)
        });
        self.lines = lines;
        fed
    }

    /// The assembled reply, once the body has ended.
    pub(crate) fn finish(mut self) -> Result<ReplyParts, CallError> {
        let rest = self.lines.take_rest();
        if !rest.is_empty() && !self.done {
            // A last line without its newline: fine if whole, a cut stream if not.
            if let Err(e) = self.line(&rest) {
                return Err(match e {
                    CallError::Invalid(_) => self.truncated(format!(
                        "it ends in the middle of a line: {:?}",
                        excerpt(&rest, 120)
                    )),
                    other => other,
                });
            }
        }
        let open_call = self.blocks.values().find_map(|b| match &b.block {
            ReplyBlock::ToolUse { name, .. } if !b.closed => Some(name.clone()),
            _ => None,
        });
        if let Some(name) = open_call {
            return Err(self.truncated(format!("it ends in the middle of the call to '{name}'")));
        }
        if !self.done {
            return Err(self.truncated("no message_stop".to_owned()));
        }
        Ok(ReplyParts {
            blocks: self.blocks.into_values().map(|b| b.block).collect(),
            stop_reason: self.stop_reason,
            usage: self.usage,
        })
    }

    fn truncated(&self, why: String) -> CallError {
        CallError::Truncated {
            status: self.status,
            why: format!("event stream cut after {} events: {why}", self.events),
        }
    }

    fn line(&mut self, line: &str) -> Result<(), CallError> {
        // `event:` lines repeat the `type` of the data that follows; blank lines, `id:`,
        // `retry:` and `: comment` lines say nothing more.
        let Some(data) = data_of(line) else {
            return Ok(());
        };
        if data.is_empty() {
            return Ok(());
        }
        let event: Value = serde_json::from_str(data).map_err(|e| {
            CallError::Invalid(format!(
                "an event of the HTTP {} stream is not JSON ({e}): {:?}",
                self.status,
                excerpt(data, 200)
            ))
        })?;
        self.events += 1;
        self.event(&event)
    }

    fn event(&mut self, event: &Value) -> Result<(), CallError> {
        let index = event.get("index").and_then(Value::as_u64);
        match event
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
        {
            "message_start" => {
                if let Some(usage) = event.pointer("/message/usage") {
                    self.usage.update(usage);
                }
            }
            "content_block_start" => {
                let block = reply_block(event.get("content_block").unwrap_or(&Value::Null));
                let input_from_start =
                    matches!(&block, ReplyBlock::ToolUse { input, .. } if !input.is_empty());
                self.blocks.insert(
                    index.unwrap_or(self.blocks.len() as u64),
                    OpenBlock {
                        block,
                        closed: false,
                        input_from_start,
                    },
                );
            }
            "content_block_delta" => self.delta(index, event.get("delta")),
            "content_block_stop" => {
                if let Some(open) = index.and_then(|i| self.blocks.get_mut(&i)) {
                    open.closed = true;
                }
            }
            "message_delta" => {
                if let Some(reason) = event.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_owned());
                }
                if let Some(usage) = event.get("usage") {
                    self.usage.update(usage);
                }
            }
            "message_stop" => self.done = true,
            "error" => {
                let err = ApiError::from_body(event).unwrap_or_default();
                return Err(CallError::ErrorInReply {
                    error_type: err.error_type,
                    message: err.message,
                });
            }
            // `ping`, and event types added after this crate.
            _ => {}
        }
        Ok(())
    }

    fn delta(&mut self, index: Option<u64>, delta: Option<&Value>) {
        let (Some(open), Some(delta)) = (index.and_then(|i| self.blocks.get_mut(&i)), delta) else {
            return;
        };
        let piece = |name: &str| delta.get(name).and_then(Value::as_str);
        match (&mut open.block, delta.get("type").and_then(Value::as_str)) {
            (ReplyBlock::Text(text), Some("text_delta")) => {
                text.push_str(piece("text").unwrap_or_default());
            }
            (ReplyBlock::ToolUse { input, .. }, Some("input_json_delta")) => {
                if std::mem::take(&mut open.input_from_start) {
                    input.clear();
                }
                input.push_str(piece("partial_json").unwrap_or_default());
            }
            // `thinking_delta`, `signature_delta`, `citations_delta`, ...: not used here.
            _ => {}
        }
    }
}

/// Whether a body that arrived without an event-stream content type is one anyway.
pub(crate) fn looks_like_sse(raw: &[u8]) -> bool {
    let text = String::from_utf8_lossy(&raw[..raw.len().min(64)]);
    let start = text.trim_start();
    start.starts_with("event:") || start.starts_with("data:") || start.starts_with(':')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A stream as the API sends it: text, then a tool call whose input comes in pieces.
    fn sample() -> String {
        let events = [
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "claude-sonnet-4-5", "stop_reason": null, "usage": {"input_tokens": 12, "cache_read_input_tokens": 900, "output_tokens": 1}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "ping"}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Let me é "}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "look."}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "shell_exec", "input": {}}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": ""}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"comm"}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "and\": \"ls\"}"}}),
            json!({"type": "content_block_stop", "index": 1}),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 40}}),
            json!({"type": "message_stop"}),
        ];
        events
            .iter()
            .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
            .collect()
    }

    fn read(pieces: &[&[u8]]) -> Result<ReplyParts, CallError> {
        let mut a = SseAssembler::new(200);
        for p in pieces {
            a.push(p)?;
            if a.is_done() {
                break;
            }
        }
        a.finish()
    }

    #[test]
    fn text_and_a_tool_call_are_assembled() {
        let parts = read(&[sample().as_bytes()]).unwrap();
        assert_eq!(
            parts.blocks,
            vec![
                ReplyBlock::Text("Let me é look.".into()),
                ReplyBlock::ToolUse {
                    id: "toolu_1".into(),
                    name: "shell_exec".into(),
                    input: "{\"command\": \"ls\"}".into()
                }
            ]
        );
        assert_eq!(parts.stop_reason.as_deref(), Some("tool_use"));
        assert_eq!(parts.usage.input_tokens, 12);
        assert_eq!(parts.usage.cache_read_input_tokens, 900);
        assert_eq!(parts.usage.output_tokens, 40);
    }

    #[test]
    fn a_stream_cut_in_a_call_or_before_the_end_is_truncated() {
        let text = sample();
        let second_stop = text
            .match_indices("event: content_block_stop")
            .nth(1)
            .unwrap()
            .0;
        let cut = &text[..second_stop];
        let err = read(&[cut.as_bytes()]).unwrap_err();
        assert!(
            matches!(&err, CallError::Truncated { why, .. } if why.contains("'shell_exec'")),
            "{err:?}"
        );
        let before_stop = &text[..text.find("event: message_stop").unwrap()];
        assert!(matches!(
            read(&[before_stop.as_bytes()]).unwrap_err(),
            CallError::Truncated { why, .. } if why.contains("no message_stop")
        ));
        let mid_line = &text[..text.find("look.").unwrap()];
        assert!(matches!(
            read(&[mid_line.as_bytes()]).unwrap_err(),
            CallError::Truncated { why, .. } if why.contains("middle of a line")
        ));
    }

    #[test]
    fn an_error_event_is_a_stream_event_error() {
        let err = read(&[b"event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}\n\n"]).unwrap_err();
        assert_eq!(
            err,
            CallError::ErrorInReply {
                error_type: Some("overloaded_error".into()),
                message: "Overloaded".into()
            }
        );
    }

    #[test]
    fn sse_sniffing() {
        assert!(looks_like_sse(b"event: message_start\n"));
        assert!(!looks_like_sse(b"{\"type\": \"message\"}"));
    }

    mod fuzz {
        use proptest::prelude::*;

        use super::*;

        proptest! {
            /// Whatever a server sends, the assembler answers (parts or an error), never
            /// panics.
            #[test]
            fn fuzz_any_bytes_never_panic(chunks in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..300), 0..12)) {
                let pieces: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
                let _ = read(&pieces);
            }

            /// Network reads may cut a valid stream anywhere (inside a line, inside a UTF-8
            /// character): the reply is the same as from one read.
            #[test]
            fn fuzz_a_valid_stream_cut_anywhere_gives_the_same_reply(cuts in prop::collection::vec(0usize..4000, 0..12)) {
                let text = sample();
                let bytes = text.as_bytes();
                let whole = read(&[bytes]).expect("the sample is valid");
                let mut points: Vec<usize> = cuts.into_iter().map(|c| c % (bytes.len() + 1)).collect();
                points.sort_unstable();
                points.dedup();
                let mut pieces = Vec::new();
                let mut start = 0;
                for p in points {
                    pieces.push(&bytes[start..p]);
                    start = p;
                }
                pieces.push(&bytes[start..]);
                prop_assert_eq!(read(&pieces).expect("still valid"), whole);
            }
        }
    }
}
