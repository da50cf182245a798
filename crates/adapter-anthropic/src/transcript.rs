//! Making an outgoing transcript valid for the Messages API, which refuses (HTTP 400) a
//! `tool_use` block not answered by a `tool_result` in the next user turn, and a
//! `tool_result` whose call the previous assistant turn did not make (docs/design.md,
//! "Transcripts"). Repairs, each reported as one line: a tool message for an unknown or
//! already answered call is dropped; a call left unanswered gets [`NO_RESULT`].

use std::collections::HashSet;

use domain::llm::{ChatMessage, Role};

/// The tool result given to a call that has no answer.
pub(crate) const NO_RESULT: &str = "(no result recorded)";

/// `messages` made valid, and one line per repair made (empty when it was valid).
pub(crate) fn repair(messages: Vec<ChatMessage>) -> (Vec<ChatMessage>, Vec<String>) {
    let mut out = Vec::with_capacity(messages.len());
    let mut repairs = Vec::new();
    // The calls of the latest assistant turn: still unanswered, and answered.
    let mut open: Vec<String> = Vec::new();
    let mut answered: HashSet<String> = HashSet::new();
    for (index, message) in messages.into_iter().enumerate() {
        if message.role == Role::Tool {
            let id = message.tool_call_id.clone().unwrap_or_default();
            if let Some(at) = open.iter().position(|call| *call == id) {
                open.remove(at);
                answered.insert(id);
                out.push(message);
            } else if answered.contains(&id) {
                repairs.push(format!(
                    "dropped message #{index}: a second result for call '{id}'"
                ));
            } else {
                repairs.push(format!(
                    "dropped message #{index}: a result for call '{id}', which the assistant \
                     turn before it did not make"
                ));
            }
            continue;
        }
        answer_open_calls(&mut out, &mut open, &mut repairs);
        answered.clear();
        if message.role == Role::Assistant {
            let mut seen = HashSet::new();
            open = message
                .tool_calls
                .iter()
                .filter(|call| seen.insert(call.id.clone()))
                .map(|call| call.id.clone())
                .collect();
        }
        out.push(message);
    }
    answer_open_calls(&mut out, &mut open, &mut repairs);
    (out, repairs)
}

fn answer_open_calls(
    out: &mut Vec<ChatMessage>,
    open: &mut Vec<String>,
    repairs: &mut Vec<String>,
) {
    for id in open.drain(..) {
        repairs.push(format!(
            "answered call '{id}', which had no result, with {NO_RESULT:?}"
        ));
        out.push(ChatMessage::tool_result(id, NO_RESULT));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::llm::ToolCall;

    fn calls(ids: &[&str]) -> ChatMessage {
        ChatMessage {
            tool_calls: ids
                .iter()
                .map(|id| ToolCall {
                    id: (*id).into(),
                    name: "file_read".into(),
                    arguments: "{}".into(),
                })
                .collect(),
            content: None,
            ..ChatMessage::assistant("")
        }
    }

    fn shape(messages: &[ChatMessage]) -> Vec<String> {
        messages
            .iter()
            .map(|m| match m.role {
                Role::Tool => format!(
                    "result:{}:{}",
                    m.tool_call_id.as_deref().unwrap_or("-"),
                    m.content.as_deref().unwrap_or("")
                ),
                Role::Assistant => format!(
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
        ];
        let (out, repairs) = repair(messages.clone());
        assert_eq!(out, messages);
        assert!(repairs.is_empty(), "{repairs:?}");
    }

    #[test]
    fn orphans_and_second_results_are_dropped_and_open_calls_answered() {
        let (out, repairs) = repair(vec![
            ChatMessage::user("u"),
            ChatMessage::tool_result("ghost", "x"),
            calls(&["a", "b"]),
            ChatMessage::tool_result("a", "ra"),
            ChatMessage::tool_result("a", "again"),
            ChatMessage::user("next"),
        ]);
        assert_eq!(
            shape(&out),
            [
                "user",
                "calls:a,b",
                "result:a:ra",
                "result:b:(no result recorded)",
                "user"
            ]
        );
        assert_eq!(repairs.len(), 3, "{repairs:?}");
        assert!(repairs[0].contains("'ghost'"));
    }
}
