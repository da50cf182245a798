//! Provider presets against replies in each provider's real shape (from their public docs):
//! vLLM, llama.cpp's server, Ollama's /v1 layer, DeepSeek, OpenRouter.
#![allow(clippy::unwrap_used)]

mod support;

use adapter_openai::{OpenAiClient, Provider};
use domain::llm::{ChatMessage, Role, ToolCall};
use domain::ports::LlmClient;
use domain::LlmError;
use serde_json::json;
use support::*;

fn preset(provider: Provider, server: &wiremock::MockServer) -> OpenAiClient {
    let config = provider
        .config(MODEL)
        .with_base_url(format!("{}/v1", server.uri()))
        .with_backoff(
            std::time::Duration::from_millis(1),
            std::time::Duration::from_millis(10),
        );
    OpenAiClient::new(config).unwrap()
}

#[tokio::test]
async fn vllm_tool_call_reply_with_null_fields() {
    let body = json!({
        "id": "chatcmpl-9f1c7a3e2b8d4c0f",
        "object": "chat.completion",
        "created": 1736500000,
        "model": "Qwen/Qwen2.5-7B-Instruct",
        "choices": [{
            "index": 0,
            "message": {
                "role": "assistant",
                "reasoning_content": null,
                "content": null,
                "tool_calls": [{
                    "id": "chatcmpl-tool-5d2a8f6c1e",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}
                }]
            },
            "logprobs": null,
            "finish_reason": "tool_calls",
            "stop_reason": null
        }],
        "usage": {"prompt_tokens": 301, "total_tokens": 322, "completion_tokens": 21, "prompt_tokens_details": null},
        "prompt_logprobs": null,
        "kv_transfer_params": null
    });
    let (server, _seq) = serve(vec![ok(body)]).await;
    let reply = preset(Provider::Vllm, &server)
        .chat(hello_request())
        .await
        .unwrap();
    assert_eq!(
        reply.tool_calls,
        vec![ToolCall {
            id: "chatcmpl-tool-5d2a8f6c1e".into(),
            name: "get_weather".into(),
            arguments: "{\"city\": \"Paris\"}".into()
        }]
    );
    assert_eq!(reply.reasoning_content, None);
    assert_eq!(reply.usage.prompt_tokens, 301);
}

#[tokio::test]
async fn vllm_reasoning_field_is_read() {
    // Newer vLLM reasoning parsers name the field `reasoning`.
    let body = completion(
        json!({"role": "assistant", "content": "42", "reasoning": "6 times 7"}),
        "stop",
    );
    let (server, _seq) = serve(vec![ok(body)]).await;
    let reply = preset(Provider::Vllm, &server)
        .chat(hello_request())
        .await
        .unwrap();
    assert_eq!(reply.reasoning_content.as_deref(), Some("6 times 7"));
}

#[tokio::test]
async fn llamacpp_server_reply_with_timings() {
    let body = json!({
        "choices": [{"finish_reason": "stop", "index": 0, "message": {"role": "assistant", "content": "Hello! How can I help you today?"}}],
        "created": 1736000000,
        "model": "gpt-3.5-turbo",
        "system_fingerprint": "b4500-adc5dd92",
        "object": "chat.completion",
        "usage": {"completion_tokens": 10, "prompt_tokens": 24, "total_tokens": 34},
        "id": "chatcmpl-q8cXyZ2VfR1p",
        "timings": {"prompt_n": 24, "prompt_ms": 41.2, "prompt_per_token_ms": 1.7, "prompt_per_second": 582.5,
                    "predicted_n": 10, "predicted_ms": 150.3, "predicted_per_token_ms": 15.0, "predicted_per_second": 66.5}
    });
    let (server, _seq) = serve(vec![ok(body)]).await;
    let client = preset(Provider::LlamaCpp, &server);
    let reply = client.chat(hello_request()).await.unwrap();
    assert_eq!(
        reply.content.as_deref(),
        Some("Hello! How can I help you today?")
    );
    assert_eq!(reply.usage.completion_tokens, 10);
    let requests = server.received_requests().await.unwrap();
    assert!(requests[0].headers.get("authorization").is_none());
}

#[tokio::test]
async fn ollama_preset_needs_no_key_and_reads_object_arguments() {
    let body = json!({
        "id": "chatcmpl-655", "object": "chat.completion", "created": 1735000000,
        "model": "llama3.2", "system_fingerprint": "fp_ollama",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "",
            "tool_calls": [{"id": "call_9x2k", "index": 0, "type": "function",
                "function": {"name": "file_write", "arguments": {"path": "a.txt", "content": "hi"}}}]},
            "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 160, "completion_tokens": 18, "total_tokens": 178}
    });
    let (server, _seq) = serve(vec![ok(body)]).await;
    let config = Provider::Ollama
        .from_env(MODEL, |var| {
            (var == "OPENAI_BASE_URL").then(|| format!("{}/v1", server.uri()))
        })
        .unwrap();
    let reply = OpenAiClient::new(config)
        .unwrap()
        .chat(hello_request())
        .await
        .unwrap();
    let args: serde_json::Value = serde_json::from_str(&reply.tool_calls[0].arguments).unwrap();
    assert_eq!(args, json!({"path": "a.txt", "content": "hi"}));
    let requests = server.received_requests().await.unwrap();
    assert!(requests[0].headers.get("authorization").is_none());
}

#[tokio::test]
async fn deepseek_preset_sends_reasoning_back_within_the_turn_only() {
    let thinking = json!({
        "id": "930c60df-bf64-41c9-a88e-3ec75f81e00e", "object": "chat.completion",
        "created": 1737521975, "model": "deepseek-reasoner",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": null,
            "reasoning_content": "I need the file first.",
            "tool_calls": [{"index": 0, "id": "call_00_a1", "type": "function",
                "function": {"name": "file_read", "arguments": "{\"path\":\"a.txt\"}"}}]},
            "logprobs": null, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 18, "completion_tokens": 40, "total_tokens": 58,
                  "prompt_cache_hit_tokens": 0, "prompt_cache_miss_tokens": 18,
                  "completion_tokens_details": {"reasoning_tokens": 30}},
        "system_fingerprint": "fp_1c5d8833bc"
    });
    let (server, _seq) = serve(vec![ok(thinking), ok(text_completion("done"))]).await;
    let client = preset(Provider::DeepSeek, &server);

    let mut request = hello_request();
    // An earlier turn whose reasoning must not be sent again.
    request.messages.insert(
        1,
        ChatMessage {
            reasoning_content: Some("old thoughts".into()),
            ..ChatMessage::assistant("earlier answer")
        },
    );
    let first = client.chat(request.clone()).await.unwrap();
    assert_eq!(
        first.reasoning_content.as_deref(),
        Some("I need the file first.")
    );
    request.messages.push(ChatMessage::from_reply(&first));
    request
        .messages
        .push(ChatMessage::tool_result("call_00_a1", "hello"));
    client.chat(request).await.unwrap();

    let bodies = received_bodies(&server).await;
    let messages = bodies[1]["messages"].as_array().unwrap();
    assert_eq!(messages[1]["role"], "assistant");
    assert!(
        messages[1].get("reasoning_content").is_none(),
        "{messages:?}"
    );
    assert_eq!(messages[3]["reasoning_content"], "I need the file first.");
    assert_eq!(messages[4]["role"], "tool");
}

#[tokio::test]
async fn openai_preset_never_sends_reasoning_content() {
    let (server, _seq) = serve(vec![ok(text_completion("ok"))]).await;
    let mut request = hello_request();
    request.messages.push(ChatMessage {
        reasoning_content: Some("from another provider".into()),
        ..ChatMessage::assistant("hi")
    });
    preset(Provider::OpenAi, &server)
        .chat(request)
        .await
        .unwrap();
    let body = &received_bodies(&server).await[0];
    assert!(body["messages"][2].get("reasoning_content").is_none());
    assert_eq!(body["messages"][2]["role"], "assistant");
}

#[tokio::test]
async fn openrouter_reply_with_extra_fields() {
    let body = json!({
        "id": "gen-1740000000-AbCdEfGhIjKlMnOp",
        "provider": "DeepInfra",
        "model": "meta-llama/llama-3.3-70b-instruct",
        "object": "chat.completion",
        "created": 1740000000,
        "choices": [{
            "logprobs": null,
            "finish_reason": "stop",
            "native_finish_reason": "stop",
            "index": 0,
            "message": {"role": "assistant", "content": "Hi!", "refusal": null, "reasoning": null}
        }],
        "usage": {"prompt_tokens": 14, "completion_tokens": 3, "total_tokens": 17,
                  "cost": 0.0000051, "is_byok": false,
                  "prompt_tokens_details": {"cached_tokens": 0},
                  "completion_tokens_details": {"reasoning_tokens": 0}}
    });
    let (server, _seq) = serve(vec![ok(body)]).await;
    let reply = preset(Provider::OpenRouter, &server)
        .chat(hello_request())
        .await
        .unwrap();
    assert_eq!(reply.content.as_deref(), Some("Hi!"));
    assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
    assert_eq!(reply.usage.prompt_tokens, 14);
}

#[tokio::test]
async fn openrouter_error_in_a_200_with_numeric_code() {
    // 401 inside a 200: auth, not retried.
    let (server, seq) = serve(vec![ok(json!({
        "error": {"message": "No auth credentials found", "code": 401},
        "user_id": "user_2abc"
    }))])
    .await;
    let err = preset(Provider::OpenRouter, &server)
        .chat(hello_request())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, LlmError::Auth(m) if m.contains("No auth credentials")),
        "{err:?}"
    );
    assert_eq!(seq.count(), 1);

    // 429 inside a 200: rate limited, retried.
    let (server, seq) = serve(vec![
        ok(
            json!({"error": {"message": "Rate limit exceeded: free-models-per-min", "code": 429,
                  "metadata": {"headers": {"X-RateLimit-Limit": "20"}}}}),
        ),
        ok(text_completion("ok")),
    ])
    .await;
    let reply = preset(Provider::OpenRouter, &server)
        .chat(hello_request())
        .await
        .unwrap();
    assert_eq!(reply.content.as_deref(), Some("ok"));
    assert_eq!(seq.count(), 2);
}

#[tokio::test]
async fn unknown_finish_reason_in_a_whole_reply_is_kept() {
    let (server, _seq) = serve(vec![ok(completion(
        json!({"role": "assistant", "content": "cut"}),
        "content_filter_custom",
    ))])
    .await;
    let reply = preset(Provider::Vllm, &server)
        .chat(hello_request())
        .await
        .unwrap();
    assert_eq!(
        reply.finish_reason.as_deref(),
        Some("content_filter_custom")
    );
    assert_eq!(reply.content.as_deref(), Some("cut"));
}

#[tokio::test]
async fn presets_post_to_their_base_url() {
    let (server, seq) = serve(vec![ok(text_completion("ok"))]).await;
    for provider in Provider::ALL {
        let config = provider
            .configure(MODEL, Some(&format!("{}/v1/", server.uri())), Some("sk-x"))
            .unwrap();
        OpenAiClient::new(config)
            .unwrap()
            .chat(hello_request())
            .await
            .unwrap();
    }
    assert_eq!(seq.count(), Provider::ALL.len());
    let bodies = received_bodies(&server).await;
    assert!(bodies.iter().all(|b| b["messages"][0]["role"] == "system"));
    assert!(bodies
        .iter()
        .all(|b| b["messages"][1]["role"] == serde_json::to_value(Role::User).unwrap()));
}
