//! The request bodies and headers the client sends to `POST /v1/messages`: the top-level
//! system, tool_use / tool_result blocks, merged turns, tools and tool choice, max_tokens,
//! and the prompt-cache breakpoints.
#![allow(clippy::unwrap_used)]

mod support;

use adapter_anthropic::AnthropicClient;
use domain::llm::{
    CallPurpose, ChatMessage, ChatRequest, ResponseFormat, ToolCall, ToolChoice, ToolSchema,
};
use domain::ports::LlmClient;
use domain::LlmError;
use serde_json::{json, Value};
use support::*;

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
    }
}

fn tool(name: &str, description: &str, properties: Value) -> ToolSchema {
    ToolSchema {
        name: name.into(),
        description: description.into(),
        parameters: json!({"type": "object", "properties": properties, "required": ["path"]}),
    }
}

/// The third call of a step: the step's prompt, two parallel calls (one failed), a note
/// from the engine, one more call and its result.
fn step_request() -> ChatRequest {
    let mut request = ChatRequest::new(
        CallPurpose::Execute,
        vec![
            ChatMessage::system("You are Planwright's executor. Use the tools."),
            ChatMessage::user(
                "Step 2 of 3: count the lines of notes.txt and write the count to count.txt.",
            ),
            ChatMessage {
                tool_calls: vec![
                    call("toolu_01A", "file_read", r#"{"path": "notes.txt"}"#),
                    call("toolu_01B", "file_list", r#"{"path": "missing"}"#),
                ],
                ..ChatMessage::assistant("I'll read the file and look at the folder.")
            },
            ChatMessage::tool_result("toolu_01A", "line one\nline two\n"),
            ChatMessage::tool_result("toolu_01B", "Error: no such folder: missing"),
            ChatMessage::user("Note: notes.txt has 2 lines."),
            ChatMessage {
                tool_calls: vec![call(
                    "toolu_01C",
                    "file_write",
                    r#"{"path": "count.txt", "content": "2"}"#,
                )],
                ..ChatMessage::assistant("")
            },
            ChatMessage::tool_result("toolu_01C", "wrote 1 byte to count.txt"),
        ],
    )
    .with_tools(
        vec![
            tool(
                "file_read",
                "Read a file",
                json!({"path": {"type": "string"}}),
            ),
            tool(
                "file_list",
                "List a folder",
                json!({"path": {"type": "string"}}),
            ),
            tool(
                "file_write",
                "Write a file",
                json!({"path": {"type": "string"}, "content": {"type": "string"}}),
            ),
        ],
        ToolChoice::Auto,
    );
    request.temperature = Some(0.2);
    request
}

#[tokio::test]
async fn a_step_transcript_is_sent_in_the_messages_format() {
    let (server, _seq) = serve(vec![ok(text_message("Done."))]).await;
    client(&server).chat(step_request()).await.unwrap();

    let requests = received(&server).await;
    assert_eq!(requests.len(), 1);
    let headers = &requests[0].headers;
    assert_eq!(headers.get("x-api-key").unwrap(), API_KEY);
    assert_eq!(headers.get("anthropic-version").unwrap(), "2023-06-01");
    assert_eq!(headers.get("content-type").unwrap(), "application/json");
    assert!(headers.get("authorization").is_none());

    let body: Value = requests[0].body_json().unwrap();
    // The system prompt is top-level, not a message; user and assistant alternate.
    assert_eq!(
        body["system"][0]["text"],
        "You are Planwright's executor. Use the tools."
    );
    let roles: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant", "user"]);
    // Both results and the note are one user turn, results first; the failure is marked.
    let merged = &body["messages"][2]["content"];
    assert_eq!(merged.as_array().unwrap().len(), 3);
    assert_eq!(
        merged[1],
        json!({"type": "tool_result", "tool_use_id": "toolu_01B",
               "content": "Error: no such folder: missing", "is_error": true})
    );
    assert!(merged[0].get("is_error").is_none());
    assert_eq!(
        body["messages"][1]["content"][2]["input"],
        json!({"path": "missing"})
    );
    assert_eq!(body["max_tokens"], 8192);
    insta::assert_json_snapshot!("step_request", body);
}

#[tokio::test]
async fn cache_breakpoints_sit_on_the_tools_the_system_the_step_prompt_and_the_last_turn() {
    let (server, _seq) = serve(vec![ok(text_message("Done."))]).await;
    client(&server).chat(step_request()).await.unwrap();
    let body = &received_bodies(&server).await[0];

    let marked: Vec<String> = marked_paths(body, "");
    assert_eq!(
        marked,
        [
            "/messages/0/content/0",
            "/messages/4/content/0",
            "/system/0",
            "/tools/2"
        ]
    );
    for path in &marked {
        assert_eq!(
            body.pointer(path).unwrap()["cache_control"],
            json!({"type": "ephemeral"})
        );
    }

    // Off: no breakpoint at all.
    let (server, _seq) = serve(vec![ok(text_message("Done."))]).await;
    AnthropicClient::new(config(&server).with_prompt_caching(false))
        .unwrap()
        .chat(step_request())
        .await
        .unwrap();
    let body = &received_bodies(&server).await[0];
    assert!(marked_paths(body, "").is_empty(), "{body}");
}

/// The JSON pointers of every object holding a `cache_control`, sorted.
fn marked_paths(value: &Value, at: &str) -> Vec<String> {
    let mut out = Vec::new();
    match value {
        Value::Object(map) => {
            if map.contains_key("cache_control") {
                out.push(at.to_owned());
            }
            for (k, v) in map {
                out.extend(marked_paths(v, &format!("{at}/{k}")));
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                out.extend(marked_paths(v, &format!("{at}/{i}")));
            }
        }
        _ => {}
    }
    out.sort();
    out
}

#[tokio::test]
async fn tool_choice_max_tokens_and_stream_are_mapped() {
    let (server, _seq) = serve(vec![ok(text_message("ok"))]).await;
    let client = client(&server);
    let tools = vec![tool("file_read", "Read", json!({}))];
    for (choice, wire) in [
        (ToolChoice::Auto, json!({"type": "auto"})),
        (ToolChoice::None, json!({"type": "none"})),
        (ToolChoice::Required, json!({"type": "any"})),
        (
            ToolChoice::Function("file_read".into()),
            json!({"type": "tool", "name": "file_read"}),
        ),
    ] {
        let mut request = hello_request().with_tools(tools.clone(), choice);
        request.max_tokens = Some(256);
        client.chat(request).await.unwrap();
        let body = received_bodies(&server).await.pop().unwrap();
        assert_eq!(body["tool_choice"], wire);
        assert_eq!(body["max_tokens"], 256);
        assert!(body.get("stream").is_none());
    }

    let (server, _seq) = serve(vec![sse(&text_stream("hi"))]).await;
    streaming(&server).chat(hello_request()).await.unwrap();
    let body = &received_bodies(&server).await[0];
    assert_eq!(body["stream"], true);
    assert!(body.get("tools").is_none() && body.get("tool_choice").is_none());
}

#[tokio::test]
async fn a_response_format_is_refused_without_a_request() {
    let (server, seq) = serve(vec![ok(text_message("{}"))]).await;
    let mut request = hello_request();
    request.response_format = ResponseFormat::JsonObject;
    let err = client(&server).chat(request).await.unwrap_err();
    assert!(
        matches!(err, LlmError::ResponseFormatUnsupported(_)),
        "{err:?}"
    );
    assert_eq!(seq.count(), 0);
}

#[tokio::test]
async fn an_unanswered_call_gets_a_result_and_an_orphan_result_is_dropped() {
    let (server, _seq) = serve(vec![ok(text_message("ok"))]).await;
    let request = ChatRequest::new(
        CallPurpose::Execute,
        vec![
            ChatMessage::user("go"),
            ChatMessage::tool_result("toolu_ghost", "stray"),
            ChatMessage {
                tool_calls: vec![call("toolu_1", "file_read", "{}")],
                ..ChatMessage::assistant("")
            },
            ChatMessage::user("what happened?"),
        ],
    );
    client(&server).chat(request).await.unwrap();
    let body = &received_bodies(&server).await[0];
    assert_eq!(body["messages"].as_array().unwrap().len(), 3, "{body}");
    assert_eq!(
        body["messages"][2]["content"][0],
        json!({"type": "tool_result", "tool_use_id": "toolu_1", "content": "(no result recorded)"})
    );
    assert!(!body.to_string().contains("toolu_ghost"));
}
