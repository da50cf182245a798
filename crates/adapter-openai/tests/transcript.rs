//! Every outgoing request is valid: each assistant tool call is followed by its tool
//! message, and no tool message is orphaned (docs/design.md, "Transcripts").
#![allow(clippy::unwrap_used)]

mod support;

use std::io::Write;
use std::sync::{Arc, Mutex};

use adapter_openai::OpenAiClient;
use domain::llm::{CallPurpose, ChatMessage, ChatRequest, Role, ToolCall};
use domain::ports::LlmClient;
use serde_json::json;
use support::*;

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn assistant_calls(ids: &[&str]) -> ChatMessage {
    ChatMessage {
        role: Role::Assistant,
        content: None,
        tool_calls: ids
            .iter()
            .map(|id| ToolCall {
                id: (*id).into(),
                name: "shell_exec".into(),
                arguments: "{\"command\":\"true\"}".into(),
            })
            .collect(),
        tool_call_id: None,
        reasoning_content: None,
    }
}

#[tokio::test]
async fn orphaned_tool_messages_are_dropped_and_missing_answers_added() {
    let logs = Captured::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::WARN)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let (server, _seq) = serve(vec![ok(text_completion("ok"))]).await;
    let request = ChatRequest::new(
        CallPurpose::Execute,
        vec![
            ChatMessage::system("sys"),
            ChatMessage::user("go"),
            ChatMessage::tool_result("call_ghost", "orphan"),
            assistant_calls(&["call_1", "call_2"]),
            ChatMessage::tool_result("call_1", "one"),
            ChatMessage::user("continue"),
        ],
    );
    OpenAiClient::new(config(&server))
        .unwrap()
        .chat(request)
        .await
        .unwrap();

    let body = &received_bodies(&server).await[0];
    let shape: Vec<(String, String)> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap().to_owned(),
                m["content"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    let expected: Vec<(String, String)> = [
        ("system", "sys"),
        ("user", "go"),
        ("assistant", ""),
        ("tool", "one"),
        ("tool", "(no result recorded)"),
        ("user", "continue"),
    ]
    .iter()
    .map(|(r, c)| ((*r).to_owned(), (*c).to_owned()))
    .collect();
    assert_eq!(shape, expected);
    assert_eq!(body["messages"][4]["tool_call_id"], json!("call_2"));

    let logs = String::from_utf8_lossy(&logs.0.lock().unwrap()).to_string();
    assert!(logs.contains("repaired the transcript"), "{logs}");
    assert!(logs.contains("call_ghost"), "{logs}");
    assert!(logs.contains("call_2"), "{logs}");
}
