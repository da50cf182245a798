//! Making an outgoing transcript valid for strict servers, whatever their wire format: each
//! assistant tool call is answered by a tool message right after its turn, and no tool
//! message answers a call that is not there (docs/design.md, "Transcripts": the OpenAI
//! format and Anthropic's Messages API both refuse such transcripts with HTTP 400s). The
//! LLM adapters call [`repaired`] before encoding a request.

use std::collections::HashSet;

use super::{ChatMessage, ChatRequest, Role};

/// A past call's arguments that were not what the wire wants, as the JSON object sent back
/// in their place, so the model still sees what it wrote (the engine answered that call with
/// an error): `{"invalid_arguments": TEXT}`. Servers that parse a transcript's arguments
/// refuse the text itself (Anthropic's API wants an object; llama.cpp's server answered
/// HTTP 500 to every later request of the run).
pub fn invalid_arguments(arguments: &str) -> serde_json::Value {
    serde_json::json!({ "invalid_arguments": arguments })
}

/// The text of the tool message given to a call that has no answer.
pub const NO_RESULT: &str = "(no result recorded)";

/// The request with its transcript made valid (see [`repair`]), each repair logged as a
/// warning.
pub fn repaired(mut request: ChatRequest) -> ChatRequest {
    let (messages, repairs) = repair(std::mem::take(&mut request.messages));
    for repair in &repairs {
        tracing::warn!(purpose = ?request.purpose, repair = %repair, "repaired the transcript before sending");
    }
    request.messages = messages;
    request
}

/// Returns `messages` with orphaned or duplicate tool messages dropped and a synthetic
/// answer ([`NO_RESULT`]) added for each unanswered tool call, plus one line per repair made
/// (empty when the transcript was already valid).
pub fn repair(messages: Vec<ChatMessage>) -> (Vec<ChatMessage>, Vec<String>) {
    let mut out: Vec<ChatMessage> = Vec::with_capacity(messages.len());
    let mut repairs = Vec::new();
    // Calls of the latest assistant turn still waiting for their tool message, in order.
    let mut pending: Vec<String> = Vec::new();
    // Calls of that turn already answered.
    let mut answered: HashSet<String> = HashSet::new();

    for (index, message) in messages.into_iter().enumerate() {
        if message.role == Role::Tool {
            let id = message.tool_call_id.clone().unwrap_or_default();
            if let Some(pos) = pending.iter().position(|p| *p == id) {
                pending.remove(pos);
                answered.insert(id);
                out.push(message);
            } else if answered.contains(&id) {
                repairs.push(format!(
                    "dropped message #{index}: a second tool message for call '{id}'"
                ));
            } else {
                repairs.push(format!(
                    "dropped message #{index}: tool message for call '{id}', which no \
                     preceding assistant turn made"
                ));
            }
            continue;
        }
        close_turn(&mut out, &mut pending, &mut repairs);
        answered.clear();
        if message.role == Role::Assistant {
            let mut seen = HashSet::new();
            pending = message
                .tool_calls
                .iter()
                .map(|c| c.id.clone())
                .filter(|id| seen.insert(id.clone()))
                .collect();
        }
        out.push(message);
    }
    close_turn(&mut out, &mut pending, &mut repairs);
    (out, repairs)
}

/// Answers every call still pending with a synthetic tool message.
fn close_turn(out: &mut Vec<ChatMessage>, pending: &mut Vec<String>, repairs: &mut Vec<String>) {
    for id in pending.drain(..) {
        repairs.push(format!(
            "added a tool message {NO_RESULT:?} for call '{id}', which had no answer"
        ));
        out.push(ChatMessage::tool_result(id, NO_RESULT));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ToolCall;

    fn calls(ids: &[&str]) -> ChatMessage {
        ChatMessage {
            role: Role::Assistant,
            content: None,
            tool_calls: ids
                .iter()
                .map(|id| ToolCall {
                    id: (*id).into(),
                    name: "f".into(),
                    arguments: "{}".into(),
                })
                .collect(),
            tool_call_id: None,
            reasoning_content: None,
        }
    }

    fn shape(messages: &[ChatMessage]) -> Vec<String> {
        messages
            .iter()
            .map(|m| match m.role {
                Role::Tool => format!(
                    "tool:{}:{}",
                    m.tool_call_id.as_deref().unwrap_or("-"),
                    m.content.as_deref().unwrap_or("")
                ),
                Role::Assistant if !m.tool_calls.is_empty() => format!(
                    "calls:{}",
                    m.tool_calls
                        .iter()
                        .map(|c| c.id.as_str())
                        .collect::<Vec<_>>()
                        .join(",")
                ),
                role => format!("{role:?}").to_lowercase(),
            })
            .collect()
    }

    #[test]
    fn a_valid_transcript_is_untouched() {
        let messages = vec![
            ChatMessage::system("s"),
            ChatMessage::user("u"),
            calls(&["a", "b"]),
            ChatMessage::tool_result("b", "rb"),
            ChatMessage::tool_result("a", "ra"),
            ChatMessage::assistant("done"),
        ];
        let (out, repairs) = repair(messages.clone());
        assert_eq!(out, messages);
        assert!(repairs.is_empty());
    }

    #[test]
    fn orphans_and_duplicates_are_dropped() {
        let (out, repairs) = repair(vec![
            ChatMessage::user("u"),
            ChatMessage::tool_result("ghost", "x"),
            calls(&["a"]),
            ChatMessage::tool_result("a", "ra"),
            ChatMessage::tool_result("a", "again"),
            ChatMessage::user("next"),
            ChatMessage::tool_result("a", "late"),
        ]);
        assert_eq!(shape(&out), ["user", "calls:a", "tool:a:ra", "user"]);
        assert_eq!(repairs.len(), 3, "{repairs:?}");
        assert!(repairs[0].contains("'ghost'"));
    }

    #[test]
    fn unanswered_calls_get_a_synthetic_answer_in_place() {
        let (out, repairs) = repair(vec![
            ChatMessage::user("u"),
            calls(&["a", "b"]),
            ChatMessage::tool_result("a", "ra"),
            ChatMessage::user("go on"),
            calls(&["c"]),
        ]);
        assert_eq!(
            shape(&out),
            [
                "user",
                "calls:a,b",
                "tool:a:ra",
                "tool:b:(no result recorded)",
                "user",
                "calls:c",
                "tool:c:(no result recorded)"
            ]
        );
        assert_eq!(repairs.len(), 2);
    }
}
