//! Streamed replies (`"stream": true`): server-sent events parsed line by line and the
//! `chat.completion.chunk` deltas assembled into one [`ChatResponse`].
//!
//! Tolerated: `: comment` lines (OpenRouter's keep-alives), `event:`/`id:` lines, bare JSON
//! lines without `data:`, tool-call deltas without `index` (matched by id, else by position),
//! arguments as text fragments or as a whole object, usage in a final chunk with no choices,
//! `reasoning_content` or `reasoning` deltas, any `finish_reason`. An error object in a chunk
//! is classified like an error in a 200 reply. A stream that ends with neither `[DONE]` nor a
//! `finish_reason`, or in the middle of a line, was cut: that is a transient failure.

use std::collections::HashMap;

use domain::llm::{ChatResponse, ToolCall, Usage};
use domain::LlmError;
use http_client::{data_of, SseLines};
use serde_json::Value;

use crate::classify::{self, excerpt, ServerError};
use crate::wire::{arguments_text, content_text, text_of, usage_of};

/// A tool call being assembled from deltas.
#[derive(Debug, Default)]
struct PartialCall {
    id: Option<String>,
    name: String,
    arguments: String,
}

/// Accumulates a stream's bytes into a reply.
#[derive(Debug)]
pub(crate) struct SseAssembler {
    status: u16,
    lines: SseLines,
    content: Option<String>,
    reasoning: Option<String>,
    calls: Vec<PartialCall>,
    /// Delta `index` → position in `calls`.
    by_index: HashMap<u64, usize>,
    usage: Option<Usage>,
    finish_reason: Option<String>,
    /// `data: [DONE]` seen.
    done: bool,
    /// Data chunks handled.
    chunks: usize,
    /// Whether any chunk carried a choice.
    saw_choice: bool,
}

impl SseAssembler {
    pub(crate) fn new(status: u16) -> SseAssembler {
        SseAssembler {
            status,
            lines: SseLines::new(),
            content: None,
            reasoning: None,
            calls: Vec::new(),
            by_index: HashMap::new(),
            usage: None,
            finish_reason: None,
            done: false,
            chunks: 0,
            saw_choice: false,
        }
    }

    /// Whether `[DONE]` arrived (nothing after it matters).
    pub(crate) fn is_done(&self) -> bool {
        self.done
    }

    /// Feeds received bytes; complete lines are handled at once.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Result<(), LlmError> {
        let mut lines = std::mem::take(&mut self.lines);
        let fed = lines.feed(bytes, |line| {
            self.line(line)?;
            Ok(self.done)
        });
        self.lines = lines;
        fed
    }

    /// The assembled reply, once the body has ended.
    pub(crate) fn finish(mut self) -> Result<ChatResponse, LlmError> {
        let rest = self.lines.take_rest();
        if !rest.is_empty() && !self.done {
            // A last line without its newline: fine if complete, a cut stream if not.
            if let Err(e) = self.line(&rest) {
                return Err(match e {
                    LlmError::InvalidResponse(_) => self.truncated(&format!(
                        "it ends in the middle of a line: {:?}",
                        excerpt(&rest, 120)
                    )),
                    other => other,
                });
            }
        }
        if !self.done && self.finish_reason.is_none() {
            return Err(self.truncated("no [DONE] and no finish_reason"));
        }
        if !self.saw_choice {
            return Err(LlmError::InvalidResponse(format!(
                "the HTTP {} event stream carried no choices ({} chunks)",
                self.status, self.chunks
            )));
        }
        let tool_calls = self
            .calls
            .into_iter()
            .enumerate()
            .map(|(i, c)| ToolCall {
                id: c
                    .id
                    .filter(|id| !id.is_empty())
                    .unwrap_or_else(|| format!("call_{i}")),
                name: c.name,
                arguments: arguments_text(Some(Value::String(c.arguments))),
            })
            .collect();
        Ok(ChatResponse {
            content: self.content,
            tool_calls,
            reasoning_content: self.reasoning,
            usage: self.usage.unwrap_or_default(),
            finish_reason: self.finish_reason,
        })
    }

    fn truncated(&self, why: &str) -> LlmError {
        LlmError::Transient(format!(
            "truncated HTTP {} event stream after {} chunks: {why}",
            self.status, self.chunks
        ))
    }

    fn line(&mut self, line: &str) -> Result<(), LlmError> {
        let payload = if let Some(data) = data_of(line) {
            data
        } else if line.trim_start().starts_with('{') {
            line.trim() // a bare JSON line (NDJSON-style servers)
        } else {
            return Ok(()); // blank line, `: comment`, `event:`, `id:`, `retry:`
        };
        if payload.is_empty() {
            return Ok(());
        }
        if payload == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let chunk: Value = serde_json::from_str(payload).map_err(|e| {
            LlmError::InvalidResponse(format!(
                "an event of the HTTP {} stream is not JSON ({e}): {:?}",
                self.status,
                excerpt(payload, 200)
            ))
        })?;
        self.chunks += 1;
        if let Some(err) = ServerError::from_body(&chunk) {
            return Err(classify::classify_error_in_success(self.status, None, &err));
        }
        self.chunk(&chunk);
        Ok(())
    }

    fn chunk(&mut self, chunk: &Value) {
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(usage_of(usage));
        }
        let Some(choice) = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|choices| {
                choices
                    .iter()
                    .find(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0)
            })
        else {
            return;
        };
        self.saw_choice = true;
        if let Some(reason) = choice.get("finish_reason").cloned().and_then(text_of) {
            self.finish_reason = Some(reason);
        }
        let Some(delta) = choice.get("delta").or_else(|| choice.get("message")) else {
            return;
        };
        if let Some(text) = delta.get("content").cloned().and_then(content_text) {
            self.content.get_or_insert_with(String::new).push_str(&text);
        }
        let reasoning = delta
            .get("reasoning_content")
            .or_else(|| delta.get("reasoning"))
            .cloned()
            .and_then(text_of);
        if let Some(text) = reasoning {
            self.reasoning
                .get_or_insert_with(String::new)
                .push_str(&text);
        }
        match delta.get("tool_calls").and_then(Value::as_array) {
            Some(deltas) if !deltas.is_empty() => self.tool_deltas(deltas),
            _ => {
                if let Some(legacy) = delta.get("function_call").filter(|f| f.is_object()) {
                    let as_call = serde_json::json!([{"index": 0, "function": legacy}]);
                    if let Some(deltas) = as_call.as_array() {
                        self.tool_deltas(deltas);
                    }
                }
            }
        }
    }

    fn tool_deltas(&mut self, deltas: &[Value]) {
        let n = deltas.len();
        for (position, d) in deltas.iter().enumerate() {
            let index = d.get("index").and_then(Value::as_u64);
            let id = d
                .get("id")
                .cloned()
                .and_then(text_of)
                .filter(|id| !id.is_empty());
            let function = d.get("function");
            let name = function
                .and_then(|f| f.get("name"))
                .cloned()
                .and_then(text_of)
                .filter(|name| !name.is_empty());
            let slot = self.slot_for(index, id.as_deref(), name.is_some(), position, n);
            let call = &mut self.calls[slot];
            if call.id.is_none() {
                call.id = id;
            }
            if let Some(name) = name {
                // Names arrive whole; some servers repeat them in every delta.
                if call.name.is_empty() {
                    call.name = name;
                }
            }
            match function.and_then(|f| f.get("arguments")) {
                Some(Value::String(fragment)) => call.arguments.push_str(fragment),
                Some(Value::Null) | None => {}
                // A whole arguments object (Ollama-style) replaces what came before.
                Some(whole) => call.arguments = whole.to_string(),
            }
        }
    }

    /// Which call a delta continues: by `index`; else by `id`; else (neither) the call at the
    /// same position among the latest ones, unless the delta names a function that call
    /// already has a name for, which starts a new call.
    fn slot_for(
        &mut self,
        index: Option<u64>,
        id: Option<&str>,
        has_name: bool,
        position: usize,
        n: usize,
    ) -> usize {
        if let Some(index) = index {
            if let Some(&slot) = self.by_index.get(&index) {
                return slot;
            }
            let slot = self.new_slot();
            self.by_index.insert(index, slot);
            return slot;
        }
        if let Some(id) = id {
            return match self.calls.iter().position(|c| c.id.as_deref() == Some(id)) {
                Some(slot) => slot,
                None => self.new_slot(),
            };
        }
        let len = self.calls.len();
        if len >= n {
            let slot = len - n + position;
            if !has_name || self.calls[slot].name.is_empty() {
                return slot;
            }
        }
        self.new_slot()
    }

    fn new_slot(&mut self) -> usize {
        self.calls.push(PartialCall::default());
        self.calls.len() - 1
    }
}

/// Whether a body that arrived without an event-stream content type is one anyway.
pub(crate) fn looks_like_sse(raw: &[u8]) -> bool {
    let text = String::from_utf8_lossy(&raw[..raw.len().min(64)]);
    let start = text.trim_start();
    start.starts_with("data:") || start.starts_with(':') || start.starts_with("event:")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn assemble(lines: &[Value]) -> SseAssembler {
        let mut a = SseAssembler::new(200);
        for l in lines {
            a.push(format!("data: {l}\n\n").as_bytes()).unwrap();
        }
        a
    }

    fn delta(d: Value) -> Value {
        json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": d, "finish_reason": null}]})
    }

    fn end(reason: &str) -> Value {
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
    }

    #[test]
    fn content_split_across_network_reads() {
        let mut a = SseAssembler::new(200);
        let text = format!(
            "data: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
            delta(json!({"role": "assistant", "content": "Hel"})),
            delta(json!({"content": "lo"}))
        );
        for piece in text.as_bytes().chunks(7) {
            a.push(piece).unwrap();
        }
        assert!(a.is_done());
        let r = a.finish().unwrap();
        assert_eq!(r.content.as_deref(), Some("Hello"));
        assert_eq!(r.finish_reason, None);
    }

    #[test]
    fn tool_calls_by_index_id_and_position() {
        let mut a = assemble(&[
            delta(
                json!({"tool_calls": [{"index": 1, "id": "b", "function": {"name": "g", "arguments": ""}}]}),
            ),
            delta(
                json!({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "f", "arguments": "{\"x\""}}]}),
            ),
            delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": ":1}"}}]})),
            delta(
                json!({"tool_calls": [{"index": 1, "function": {"name": "g", "arguments": "{}"}}]}),
            ),
        ]);
        a.push(format!("data: {}\n", end("tool_calls")).as_bytes())
            .unwrap();
        let r = a.finish().unwrap();
        assert_eq!(r.tool_calls.len(), 2);
        assert_eq!(
            (r.tool_calls[0].id.as_str(), r.tool_calls[0].name.as_str()),
            ("b", "g")
        );
        assert_eq!(r.tool_calls[0].arguments, "{}");
        assert_eq!(r.tool_calls[1].arguments, "{\"x\":1}");

        // No index: ids start calls, fragments without id continue the latest.
        let r = assemble(&[
            delta(json!({"tool_calls": [{"id": "p", "function": {"name": "f", "arguments": "{\"a\":"}}]})),
            delta(json!({"tool_calls": [{"function": {"arguments": "1}"}}]})),
            delta(json!({"tool_calls": [{"function": {"name": "g", "arguments": {"b": 2}}}]})),
            end("tool_calls"),
        ])
        .finish()
        .unwrap();
        assert_eq!(r.tool_calls.len(), 2);
        assert_eq!(r.tool_calls[0].arguments, "{\"a\":1}");
        assert_eq!(r.tool_calls[1].id, "call_1");
        assert_eq!(r.tool_calls[1].arguments, "{\"b\":2}");
    }

    #[test]
    fn usage_comments_and_reasoning() {
        let mut a = SseAssembler::new(200);
        a.push(b": OPENROUTER PROCESSING\n\nevent: message\n")
            .unwrap();
        a.push(format!("data:{}\n\n", delta(json!({"reasoning": "think "}))).as_bytes())
            .unwrap();
        a.push(
            format!(
                "data: {}\n\n",
                delta(json!({"reasoning_content": "more", "content": "ok"}))
            )
            .as_bytes(),
        )
        .unwrap();
        a.push(format!("data: {}\n\n", end("stop")).as_bytes())
            .unwrap();
        a.push(b"data: {\"choices\": [], \"usage\": {\"prompt_tokens\": 5, \"completion_tokens\": 2}}\n\n")
            .unwrap();
        let r = a.finish().unwrap();
        assert_eq!(r.reasoning_content.as_deref(), Some("think more"));
        assert_eq!(
            r.usage,
            Usage {
                prompt_tokens: 5,
                completion_tokens: 2,
                cached_prompt_tokens: 0
            }
        );
        assert_eq!(r.finish_reason.as_deref(), Some("stop"));
    }

    #[test]
    fn cut_streams_are_transient() {
        let err = assemble(&[delta(json!({"content": "Hel"}))])
            .finish()
            .unwrap_err();
        assert!(
            matches!(&err, LlmError::Transient(m) if m.contains("no [DONE]")),
            "{err:?}"
        );
        let mut a = assemble(&[delta(json!({"content": "Hel"}))]);
        a.push(b"data: {\"choices\": [{\"delta\": {\"cont").unwrap();
        let err = a.finish().unwrap_err();
        assert!(
            matches!(&err, LlmError::Transient(m) if m.contains("middle of a line")),
            "{err:?}"
        );
    }

    #[test]
    fn errors_in_the_stream_are_classified() {
        let mut a = SseAssembler::new(200);
        let err = a
            .push(b"data: {\"error\": {\"message\": \"Provider disconnected\", \"code\": 502}}\n\n")
            .unwrap_err();
        assert!(matches!(err, LlmError::Transient(_)), "{err:?}");
        let mut a = SseAssembler::new(200);
        assert!(matches!(
            a.push(b"data: <html>\n").unwrap_err(),
            LlmError::InvalidResponse(_)
        ));
        let err = SseAssembler::new(200);
        let mut err = err;
        err.push(b"data: [DONE]\n").unwrap();
        assert!(matches!(
            err.finish().unwrap_err(),
            LlmError::InvalidResponse(_)
        ));
    }

    #[test]
    fn sse_sniffing() {
        assert!(looks_like_sse(b"\ndata: {}"));
        assert!(looks_like_sse(b": keep-alive\n"));
        assert!(!looks_like_sse(b"{\"choices\": []}"));
    }

    mod fuzz {
        use proptest::prelude::*;

        use super::*;

        /// A valid stream: a tool call whose arguments come in pieces, then text, usage.
        fn sample() -> String {
            let lines = [
                delta(
                    json!({"role": "assistant", "content": "Let me ", "tool_calls": [{
                    "index": 0, "id": "call_1", "type": "function",
                    "function": {"name": "shell_exec", "arguments": "{\"comm"}}]}),
                ),
                delta(
                    json!({"tool_calls": [{"index": 0, "function": {"arguments": "and\": \"ls é\"}"}}]}),
                ),
                delta(json!({"content": "look."})),
                end("tool_calls"),
                json!({"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 5}}),
            ];
            let mut out = String::new();
            for l in lines {
                out.push_str(&format!("data: {l}\n\n"));
            }
            out.push_str("data: [DONE]\n\n");
            out
        }

        fn read(pieces: &[&[u8]]) -> Result<ChatResponse, LlmError> {
            let mut a = SseAssembler::new(200);
            for p in pieces {
                a.push(p)?;
                if a.is_done() {
                    break;
                }
            }
            a.finish()
        }

        proptest! {
            /// Whatever a server sends, the assembler answers (a reply or an error), never
            /// panics.
            #[test]
            fn fuzz_any_bytes_never_panic(chunks in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..300), 0..12)) {
                let pieces: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
                let _ = read(&pieces);
            }

            /// Text made of stream-like lines (data:, event:, comments, [DONE]) never panics.
            #[test]
            fn fuzz_stream_like_text_never_panics(lines in prop::collection::vec("(data: |event: |: |)[ -~]{0,80}", 0..20)) {
                let text = lines.join("\n");
                let _ = read(&[text.as_bytes()]);
            }

            /// Network reads may cut a valid stream anywhere (inside a line, inside a UTF-8
            /// character): the reply is the same as from one read.
            #[test]
            fn fuzz_a_valid_stream_cut_anywhere_gives_the_same_reply(cuts in prop::collection::vec(0usize..2000, 0..12)) {
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
