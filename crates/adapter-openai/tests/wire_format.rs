//! Request bodies as sent, and replies in the shapes real servers use.
#![allow(clippy::unwrap_used)]

mod support;

use adapter_openai::OpenAiClient;
use domain::llm::{
    CallPurpose, ChatMessage, ChatRequest, ResponseFormat, Role, ToolCall, ToolChoice, ToolSchema,
    Usage,
};
use domain::ports::LlmClient;
use serde_json::json;
use support::*;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer};

#[tokio::test]
async fn plain_text_reply_is_parsed_and_usage_counted() {
    let (server, seq) = serve(vec![ok(text_completion("Hello! How can I help?"))]).await;
    let client = OpenAiClient::new(config(&server)).unwrap();

    let reply = client.chat(hello_request()).await.unwrap();

    assert_eq!(reply.content.as_deref(), Some("Hello! How can I help?"));
    assert!(reply.tool_calls.is_empty());
    assert_eq!(reply.reasoning_content, None);
    assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
    assert_eq!(
        reply.usage,
        Usage {
            prompt_tokens: 19,
            completion_tokens: 10,
            cached_prompt_tokens: 0
        }
    );
    assert_eq!(seq.count(), 1);
    assert_eq!(
        received_bodies(&server).await,
        vec![json!({
            "model": MODEL,
            "messages": [
                {"role": "system", "content": "You are terse."},
                {"role": "user", "content": "Say hello."}
            ],
            "stream": false
        })]
    );
}

#[tokio::test]
async fn full_request_body_is_serialized_exactly() {
    let (server, _seq) = serve(vec![ok(text_completion("{\"temp\": 18}"))]).await;
    let client = OpenAiClient::new(config(&server)).unwrap();

    let assistant = ChatMessage {
        role: Role::Assistant,
        content: None,
        tool_calls: vec![ToolCall {
            id: "call_abc123".into(),
            name: "get_weather".into(),
            arguments: "{\"city\":\"Paris\"}".into(),
        }],
        tool_call_id: None,
        reasoning_content: None,
    };
    let mut request = ChatRequest::new(
        CallPurpose::Execute,
        vec![
            ChatMessage::system("sys"),
            ChatMessage::user("weather in Paris? Answer in JSON."),
            assistant,
            ChatMessage::tool_result("call_abc123", "18°C, sunny"),
            ChatMessage::assistant("It is 18°C."),
        ],
    )
    .with_tools(
        vec![ToolSchema {
            name: "get_weather".into(),
            description: "Current weather of a city".into(),
            parameters: json!({
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"]
            }),
        }],
        ToolChoice::Function("get_weather".into()),
    );
    request.temperature = Some(0.25);
    request.max_tokens = Some(256);
    request.response_format = ResponseFormat::JsonObject;

    client.chat(request).await.unwrap();

    assert_eq!(
        received_bodies(&server).await,
        vec![json!({
            "model": MODEL,
            "messages": [
                {"role": "system", "content": "sys"},
                {"role": "user", "content": "weather in Paris? Answer in JSON."},
                {"role": "assistant", "content": null, "tool_calls": [{
                    "id": "call_abc123",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}
                }]},
                {"role": "tool", "content": "18°C, sunny", "tool_call_id": "call_abc123"},
                {"role": "assistant", "content": "It is 18°C."}
            ],
            "tools": [{"type": "function", "function": {
                "name": "get_weather",
                "description": "Current weather of a city",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"]
                }
            }}],
            "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
            "response_format": {"type": "json_object"},
            "temperature": 0.25,
            "max_tokens": 256,
            "stream": false
        })]
    );
}

#[tokio::test]
async fn tool_choice_modes_and_json_schema_format() {
    let (server, _seq) = serve(vec![ok(text_completion("{\"ok\": true}"))]).await;
    let client = OpenAiClient::new(config(&server)).unwrap();
    let tool = ToolSchema {
        name: "f".into(),
        description: "d".into(),
        parameters: json!({"type": "object", "properties": {}}),
    };
    for choice in [ToolChoice::Auto, ToolChoice::None, ToolChoice::Required] {
        client
            .chat(hello_request().with_tools(vec![tool.clone()], choice))
            .await
            .unwrap();
    }
    let mut request = hello_request();
    request.tool_choice = ToolChoice::Required; // no tools: not sent
    request.response_format = ResponseFormat::JsonSchema {
        name: "plan".into(),
        schema: json!({"type": "object"}),
    };
    client.chat(request).await.unwrap();

    let bodies = received_bodies(&server).await;
    assert_eq!(bodies[0]["tool_choice"], json!("auto"));
    assert_eq!(bodies[1]["tool_choice"], json!("none"));
    assert_eq!(bodies[2]["tool_choice"], json!("required"));
    assert!(bodies[3].get("tool_choice").is_none());
    assert!(bodies[3].get("tools").is_none());
    assert_eq!(
        bodies[3]["response_format"],
        json!({"type": "json_schema", "json_schema": {"name": "plan", "schema": {"type": "object"}}})
    );
}

#[tokio::test]
async fn authorization_header_only_with_a_key() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("content-type", "application/json"))
        .respond_with(ok(text_completion("hi")))
        .mount(&server)
        .await;

    let with_key = OpenAiClient::new(config(&server).with_api_key(API_KEY)).unwrap();
    with_key.chat(hello_request()).await.unwrap();
    let without_key = OpenAiClient::new(config(&server)).unwrap();
    without_key.chat(hello_request()).await.unwrap();

    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[0].headers.get("authorization").unwrap(),
        &format!("Bearer {API_KEY}")
    );
    assert!(requests[1].headers.get("authorization").is_none());
}

#[tokio::test]
async fn trailing_slash_in_base_url_is_ignored() {
    let (server, seq) = serve(vec![ok(text_completion("hi"))]).await;
    let client =
        OpenAiClient::new(config(&server).with_base_url(format!("{}/v1/", server.uri()))).unwrap();
    client.chat(hello_request()).await.unwrap();
    assert_eq!(seq.count(), 1);
}

#[tokio::test]
async fn tool_call_with_string_arguments() {
    let body = completion(
        json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [{
                "id": "call_abc123",
                "type": "function",
                "function": {"name": "get_weather", "arguments": "{\n\"city\": \"Boston, MA\"\n}"}
            }],
            "refusal": null,
            "annotations": []
        }),
        "tool_calls",
    );
    let (server, _seq) = serve(vec![ok(body)]).await;
    let reply = OpenAiClient::new(config(&server))
        .unwrap()
        .chat(hello_request())
        .await
        .unwrap();

    assert_eq!(reply.content, None);
    assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(
        reply.tool_calls,
        vec![ToolCall {
            id: "call_abc123".into(),
            name: "get_weather".into(),
            arguments: "{\n\"city\": \"Boston, MA\"\n}".into(),
        }]
    );
}

#[tokio::test]
async fn tool_call_with_object_arguments_ollama_style() {
    let body = json!({
        "id": "chatcmpl-655",
        "object": "chat.completion",
        "created": 1735000000,
        "model": "llama3.2",
        "system_fingerprint": "fp_ollama",
        "choices": [{
            "index": 0,
            "message": {
                "role": "assistant",
                "content": "",
                "tool_calls": [{
                    "id": "call_9x2k",
                    "index": 0,
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": {"city": "Toronto", "days": 2}}
                }]
            },
            "finish_reason": "tool_calls"
        }],
        "usage": {"prompt_tokens": 160, "completion_tokens": 18, "total_tokens": 178}
    });
    let (server, _seq) = serve(vec![ok(body)]).await;
    let reply = OpenAiClient::new(config(&server))
        .unwrap()
        .chat(hello_request())
        .await
        .unwrap();

    assert_eq!(reply.tool_calls.len(), 1);
    assert_eq!(reply.tool_calls[0].id, "call_9x2k");
    assert_eq!(reply.tool_calls[0].name, "get_weather");
    let args: serde_json::Value = serde_json::from_str(&reply.tool_calls[0].arguments).unwrap();
    assert_eq!(args, json!({"city": "Toronto", "days": 2}));
    assert_eq!(reply.text(), None);
    assert_eq!(reply.usage.prompt_tokens, 160);
}

#[tokio::test]
async fn tool_calls_without_id_type_or_arguments() {
    let body = completion(
        json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [
                {"function": {"name": "list_files", "arguments": "{\"dir\":\".\"}"}},
                {"id": null, "function": {"name": "now"}}
            ]
        }),
        "tool_calls",
    );
    let (server, _seq) = serve(vec![ok(body)]).await;
    let reply = OpenAiClient::new(config(&server))
        .unwrap()
        .chat(hello_request())
        .await
        .unwrap();

    assert_eq!(
        reply.tool_calls,
        vec![
            ToolCall {
                id: "call_0".into(),
                name: "list_files".into(),
                arguments: "{\"dir\":\".\"}".into(),
            },
            ToolCall {
                id: "call_1".into(),
                name: "now".into(),
                arguments: "{}".into(),
            },
        ]
    );
}

#[tokio::test]
async fn content_as_an_array_of_parts() {
    let body = completion(
        json!({
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Hello, "},
                {"type": "text", "text": "world."}
            ]
        }),
        "stop",
    );
    let (server, _seq) = serve(vec![ok(body)]).await;
    let reply = OpenAiClient::new(config(&server))
        .unwrap()
        .chat(hello_request())
        .await
        .unwrap();
    assert_eq!(reply.content.as_deref(), Some("Hello, world."));
}

#[tokio::test]
async fn minimal_reply_without_usage_or_finish_reason() {
    let body = json!({"choices": [{"message": {"content": "bare"}}]});
    let (server, _seq) = serve(vec![ok(body)]).await;
    let reply = OpenAiClient::new(config(&server))
        .unwrap()
        .chat(hello_request())
        .await
        .unwrap();
    assert_eq!(reply.content.as_deref(), Some("bare"));
    assert_eq!(reply.usage, Usage::default());
    assert_eq!(reply.finish_reason, None);
}

#[tokio::test]
async fn cached_prompt_tokens_are_read_from_prompt_tokens_details() {
    // OpenAI reports prompt caching this way; vLLM and DeepSeek-compatible servers too.
    let mut body = text_completion("cached");
    body["usage"] = json!({
        "prompt_tokens": 2006,
        "completion_tokens": 300,
        "total_tokens": 2306,
        "prompt_tokens_details": {"cached_tokens": 1920, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0}
    });
    // A server that writes counts as strings, and one that sends a null.
    let mut as_string = text_completion("string");
    as_string["usage"]["prompt_tokens_details"] = json!({"cached_tokens": "7"});
    let mut as_null = text_completion("null");
    as_null["usage"]["prompt_tokens_details"] = json!({"cached_tokens": null});
    let mut negative = text_completion("negative");
    negative["usage"]["prompt_tokens_details"] = json!({"cached_tokens": -3});
    let (server, _seq) = serve(vec![ok(body), ok(as_string), ok(as_null), ok(negative)]).await;
    let client = OpenAiClient::new(config(&server)).unwrap();

    let reply = client.chat(hello_request()).await.unwrap();
    assert_eq!(
        reply.usage,
        Usage {
            prompt_tokens: 2006,
            completion_tokens: 300,
            cached_prompt_tokens: 1920
        }
    );
    let mut cached = Vec::new();
    for _ in 0..3 {
        cached.push(
            client
                .chat(hello_request())
                .await
                .unwrap()
                .usage
                .cached_prompt_tokens,
        );
    }
    assert_eq!(cached, vec![7, 0, 0]);
}

#[tokio::test]
async fn deepseek_reasoning_content_is_kept_and_sent_back() {
    let body = json!({
        "id": "930c60df-bf64-41c9-a88e-3ec75f81e00e",
        "object": "chat.completion",
        "created": 1737521975,
        "model": "deepseek-reasoner",
        "choices": [{
            "index": 0,
            "message": {
                "role": "assistant",
                "content": "9.8 is greater than 9.11.",
                "reasoning_content": "Compare the tenths digit: 8 > 1."
            },
            "logprobs": null,
            "finish_reason": "stop"
        }],
        "usage": {
            "prompt_tokens": 18,
            "completion_tokens": 240,
            "total_tokens": 258,
            "prompt_tokens_details": {"cached_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 220},
            "prompt_cache_hit_tokens": 0,
            "prompt_cache_miss_tokens": 18
        },
        "system_fingerprint": "fp_1c5d8833bc"
    });
    let (server, _seq) = serve(vec![ok(body), ok(text_completion("done"))]).await;
    let client = OpenAiClient::new(config(&server)).unwrap();

    let first = client.chat(hello_request()).await.unwrap();
    assert_eq!(
        first.reasoning_content.as_deref(),
        Some("Compare the tenths digit: 8 > 1.")
    );
    assert_eq!(first.content.as_deref(), Some("9.8 is greater than 9.11."));

    let mut follow_up = hello_request();
    follow_up.messages.push(ChatMessage::from_reply(&first));
    follow_up.messages.push(ChatMessage::user("Why?"));
    client.chat(follow_up).await.unwrap();

    let bodies = received_bodies(&server).await;
    assert_eq!(
        bodies[1]["messages"][2],
        json!({
            "role": "assistant",
            "content": "9.8 is greater than 9.11.",
            "reasoning_content": "Compare the tenths digit: 8 > 1."
        })
    );
    // Not sent on messages that have none.
    assert!(bodies[1]["messages"][1].get("reasoning_content").is_none());
}
