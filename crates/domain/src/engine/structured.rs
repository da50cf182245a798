//! Structured (JSON) answers from an LLM, robust to weak models and picky servers.
//!
//! [`ask_json`] asks with the JSON response format; when the server rejects that format it
//! asks again with a plain prompt (and remembers, for the rest of the run, not to ask for it).
//! The JSON is extracted from the reply even when wrapped in prose or ``` fences; a reply
//! with no valid JSON gets ONE repair re-ask naming the problem.

use serde_json::Value;

use crate::engine::context::RunContext;
use crate::engine::failure::{CallProblem, Failure};
use crate::error::LlmError;
use crate::ports::llm::{CallPurpose, ChatMessage, ChatRequest, ResponseFormat};
use crate::ports::LlmClient;

/// Why no JSON answer could be had, when the run can go on.
#[derive(Debug)]
pub(crate) enum AskProblem {
    /// The model answered, but never with usable JSON (message for logs and events).
    Invalid(String),
    /// The call itself failed (after the adapter's retries), or the run is being cancelled.
    Call(CallProblem),
}

impl std::fmt::Display for AskProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AskProblem::Invalid(s) => write!(f, "{s}"),
            AskProblem::Call(p) => p.fmt(f),
        }
    }
}

/// A JSON question's failure.
pub(crate) type AskError = Failure<AskProblem>;

/// A JSON answer and the conversation that produced it (for follow-up re-asks).
#[derive(Debug)]
pub(crate) struct JsonAnswer {
    pub value: Value,
    pub transcript: Vec<ChatMessage>,
}

fn rejects_response_format(e: &LlmError) -> bool {
    match e {
        LlmError::Permanent(m) | LlmError::InvalidResponse(m) => {
            let m = m.to_lowercase();
            m.contains("response_format")
                || m.contains("json_object")
                || m.contains("json_schema")
                || m.contains("response format")
        }
        _ => false,
    }
}

/// Asks `messages` for one JSON value. The last message should say what JSON to write.
pub(crate) async fn ask_json(
    ctx: &RunContext,
    scope: &str,
    llm: &dyn LlmClient,
    purpose: CallPurpose,
    messages: Vec<ChatMessage>,
    step_id: Option<&str>,
) -> Result<JsonAnswer, AskError> {
    ask_json_shaped(ctx, scope, llm, purpose, messages, step_id, None).await
}

/// As [`ask_json`], with the answer's JSON schema as the response format when `schema` is
/// given (`(name, schema)`; see `response_schemas`).
pub(crate) async fn ask_json_shaped(
    ctx: &RunContext,
    scope: &str,
    llm: &dyn LlmClient,
    purpose: CallPurpose,
    mut messages: Vec<ChatMessage>,
    step_id: Option<&str>,
    schema: Option<(&str, Value)>,
) -> Result<JsonAnswer, AskError> {
    let mut repaired = false;
    loop {
        let mut request = ChatRequest::new(purpose, messages.clone());
        if !ctx.json_format_rejected() {
            request.response_format = match &schema {
                Some((name, schema)) => ResponseFormat::JsonSchema {
                    name: (*name).to_string(),
                    schema: schema.clone(),
                },
                None => ResponseFormat::JsonObject,
            };
        }
        let reply = match ctx.chat(scope, llm, request, step_id).await {
            Ok(r) => r,
            Err(Failure::Recoverable(CallProblem::Llm(e)))
                if rejects_response_format(&e) && !ctx.json_format_rejected() =>
            {
                ctx.mark_json_format_rejected();
                tracing::warn!(error = %e, "server rejected the JSON response format; using a plain prompt");
                continue;
            }
            // The adapter already extracted JSON and made its one repair re-ask.
            Err(Failure::Recoverable(CallProblem::Llm(LlmError::InvalidResponse(m)))) => {
                return Err(Failure::Recoverable(AskProblem::Invalid(m)))
            }
            Err(Failure::Fatal(e)) => return Err(Failure::Fatal(e)),
            Err(Failure::Recoverable(p)) => return Err(Failure::Recoverable(AskProblem::Call(p))),
        };
        let text = reply.content.clone().unwrap_or_default();
        messages.push(ChatMessage::from_reply(&reply));
        match extract_json(&text) {
            Some(value) => {
                return Ok(JsonAnswer {
                    value,
                    transcript: messages,
                })
            }
            None if !repaired => {
                repaired = true;
                let problem = if text.trim().is_empty() {
                    "the answer was empty".to_string()
                } else {
                    "the answer contained no valid JSON object".to_string()
                };
                messages.push(ChatMessage::user(crate::prompts::json_repair(&problem)));
            }
            None => {
                return Err(Failure::Recoverable(AskProblem::Invalid(format!(
                    "no valid JSON after a repair request; last answer: {}",
                    crate::prompts::truncate_chars(text.trim(), 200)
                ))))
            }
        }
    }
}

/// The first JSON object or array in `text`: the whole text, a ```json fence, or the first
/// balanced `{...}` / `[...]` that parses.
pub fn extract_json(text: &str) -> Option<Value> {
    let t = text.trim();
    if let Ok(v) = serde_json::from_str::<Value>(t) {
        if v.is_object() || v.is_array() {
            return Some(v);
        }
    }
    if let Some(start) = t.find("```") {
        let after = &t[start + 3..];
        let body_start = after.find('\n').map(|i| i + 1).unwrap_or(0);
        let body = &after[body_start..];
        if let Some(end) = body.find("```") {
            if let Ok(v) = serde_json::from_str::<Value>(body[..end].trim()) {
                return Some(v);
            }
        }
    }
    let bytes = t.as_bytes();
    let mut from = 0;
    while let Some(rel) = t[from..].find(['{', '[']) {
        let start = from + rel;
        if let Some(end) = balanced_end(bytes, start) {
            if let Ok(v) = serde_json::from_str::<Value>(&t[start..=end]) {
                return Some(v);
            }
        }
        from = start + 1;
    }
    None
}

/// Index of the bracket closing the one at `start`, skipping strings.
fn balanced_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, &b) in bytes.iter().enumerate().skip(start) {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_is_found_in_prose_and_fences() {
        assert_eq!(extract_json(r#"{"a": 1}"#), Some(json!({"a": 1})));
        assert_eq!(
            extract_json("Here you go:\n```json\n{\"a\": [1, 2]}\n```\nthanks"),
            Some(json!({"a": [1, 2]}))
        );
        assert_eq!(
            extract_json(r#"Sure! {"title": "x {y}", "steps": ["a"]} hope it helps"#),
            Some(json!({"title": "x {y}", "steps": ["a"]}))
        );
        assert_eq!(
            extract_json(r#"bad {oops} then {"ok": true}"#),
            Some(json!({"ok": true}))
        );
        assert_eq!(extract_json("no json here"), None);
        assert_eq!(extract_json("{\"unterminated\": "), None);
        assert_eq!(extract_json("42"), None);
    }
}
