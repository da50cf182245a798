//! The opt-in text tool protocol for models without native tool calling.
#![allow(clippy::unwrap_used)]

mod support;

use adapter_openai::{OpenAiClient, Provider, ToolProtocol};
use domain::llm::{CallPurpose, ChatMessage, ChatRequest, ToolChoice, ToolSchema};
use domain::ports::LlmClient;
use domain::LlmError;
use serde_json::json;
use support::*;
use wiremock::ResponseTemplate;

fn tools() -> Vec<ToolSchema> {
    vec![
        ToolSchema {
            name: "shell_exec".into(),
            description: "Run a shell command in the workspace".into(),
            parameters: json!({"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}),
        },
        ToolSchema {
            name: "complete_step".into(),
            description: "Finish the step".into(),
            parameters: json!({"type": "object", "properties": {"success": {"type": "boolean"}, "result": {"type": "string"}}}),
        },
    ]
}

fn step_request() -> ChatRequest {
    ChatRequest::new(
        CallPurpose::Execute,
        vec![
            ChatMessage::system("You are an executor."),
            ChatMessage::user("Count the words in a.txt."),
        ],
    )
    .with_tools(tools(), ToolChoice::Auto)
}

/// An Ollama `/v1` reply whose content is the text of a tool call.
fn ollama_text(content: &str) -> ResponseTemplate {
    ok(json!({
        "id": "chatcmpl-812", "object": "chat.completion", "created": 1735000000,
        "model": "gemma2:2b", "system_fingerprint": "fp_ollama",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 210, "completion_tokens": 25, "total_tokens": 235}
    }))
}

fn text_client(server: &wiremock::MockServer) -> OpenAiClient {
    let config = Provider::Ollama
        .config("gemma2:2b")
        .with_base_url(format!("{}/v1", server.uri()))
        .with_tool_protocol(ToolProtocol::Text);
    OpenAiClient::new(config).unwrap()
}

#[tokio::test]
async fn text_protocol_turns_a_json_reply_into_tool_calls() {
    let (server, _seq) = serve(vec![ollama_text(
        "I will count them.\n```json\n{\"tool\": \"shell_exec\", \"arguments\": {\"command\": \"wc -w < a.txt\"}}\n```",
    )])
    .await;
    let reply = text_client(&server).chat(step_request()).await.unwrap();

    assert_eq!(reply.tool_calls.len(), 1);
    assert_eq!(reply.tool_calls[0].id, "call_t1");
    assert_eq!(reply.tool_calls[0].name, "shell_exec");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&reply.tool_calls[0].arguments).unwrap(),
        json!({"command": "wc -w < a.txt"})
    );
    assert_eq!(reply.content.as_deref(), Some("I will count them."));
    assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));

    let body = &received_bodies(&server).await[0];
    assert!(body.get("tools").is_none(), "{body}");
    assert!(body.get("tool_choice").is_none(), "{body}");
    let system = body["messages"][0]["content"].as_str().unwrap();
    assert!(system.starts_with("You are an executor.\n\nYou can call tools."));
    assert!(
        system.contains("- shell_exec: Run a shell command"),
        "{system}"
    );
    assert!(
        system.contains("- complete_step: Finish the step"),
        "{system}"
    );
}

#[tokio::test]
async fn text_protocol_sends_calls_and_results_back_as_text() {
    let (server, _seq) = serve(vec![
        ollama_text("{\"tool\": \"shell_exec\", \"arguments\": {\"command\": \"wc -w < a.txt\"}}"),
        ollama_text("[{\"tool\": \"complete_step\", \"arguments\": {\"success\": true, \"result\": \"2 words\"}}]"),
    ])
    .await;
    let client = text_client(&server);
    let mut request = step_request();
    let first = client.chat(request.clone()).await.unwrap();
    request.messages.push(ChatMessage::from_reply(&first));
    request
        .messages
        .push(ChatMessage::tool_result(&first.tool_calls[0].id, "2"));
    let second = client.chat(request).await.unwrap();

    assert_eq!(second.tool_calls[0].id, "call_t2", "ids stay unique");
    assert_eq!(second.tool_calls[0].name, "complete_step");
    let body = &received_bodies(&server).await[1];
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 4);
    assert_eq!(
        messages[2],
        json!({"role": "assistant", "content": "{\"tool\":\"shell_exec\",\"arguments\":{\"command\":\"wc -w < a.txt\"}}"})
    );
    assert_eq!(
        messages[3],
        json!({"role": "user", "content": "Result of shell_exec (call call_t1):\n2"})
    );
}

#[tokio::test]
async fn text_protocol_plain_answers_stay_text() {
    let (server, _seq) = serve(vec![ollama_text("The file has 2 words.")]).await;
    let reply = text_client(&server).chat(step_request()).await.unwrap();
    assert!(reply.tool_calls.is_empty());
    assert_eq!(reply.content.as_deref(), Some("The file has 2 words."));
}

#[tokio::test]
async fn a_model_without_tools_gets_a_hint_towards_the_text_protocol() {
    // Ollama's reply when a model's template has no tool support.
    let (server, seq) = serve(vec![ResponseTemplate::new(400).set_body_json(json!({
        "error": {"message": "registry.ollama.ai/library/gemma2:2b does not support tools",
                  "type": "api_error", "param": null, "code": null}
    }))])
    .await;
    let config = Provider::Ollama
        .config("gemma2:2b")
        .with_base_url(format!("{}/v1", server.uri()));
    let err = OpenAiClient::new(config)
        .unwrap()
        .chat(step_request())
        .await
        .unwrap_err();
    let LlmError::Permanent(message) = &err else {
        panic!("expected Permanent, got {err:?}");
    };
    assert!(message.contains("text tool protocol"), "{message}");
    assert_eq!(seq.count(), 1);
}
