//! Whole (not streamed) replies as the Messages API sends them: text, parallel tool_use,
//! cache usage, stop reasons that are failures, and replies that cannot be used.
#![allow(clippy::unwrap_used)]

mod support;

use adapter_anthropic::AnthropicClient;
use domain::llm::{ToolCall, Usage};
use domain::ports::LlmClient;
use domain::LlmError;
use serde_json::json;
use support::*;
use wiremock::ResponseTemplate;

#[tokio::test]
async fn a_text_reply() {
    let (server, seq) = serve(vec![ok(text_message("Hello!"))]).await;
    let reply = client(&server).chat(hello_request()).await.unwrap();
    assert_eq!(reply.content.as_deref(), Some("Hello!"));
    assert!(reply.tool_calls.is_empty());
    assert_eq!(reply.finish_reason.as_deref(), Some("end_turn"));
    assert_eq!(
        reply.usage,
        Usage {
            prompt_tokens: 21,
            completion_tokens: 9,
            cached_prompt_tokens: 0
        }
    );
    assert_eq!(seq.count(), 1);
}

#[tokio::test]
async fn parallel_tool_use_blocks_are_tool_calls_in_order() {
    let body = message(
        json!([
            {"type": "text", "text": "I'll check both files."},
            {"type": "tool_use", "id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "name": "file_read",
             "input": {"path": "a.txt"}},
            {"type": "tool_use", "id": "toolu_01LmXW3NcVxZ9pQq5yZ2B8kD", "name": "file_read",
             "input": {"path": "b.txt", "max_lines": 20}}
        ]),
        "tool_use",
        usage(480, 112),
    );
    let (server, _seq) = serve(vec![ok(body)]).await;
    let reply = client(&server).chat(hello_request()).await.unwrap();
    assert_eq!(reply.content.as_deref(), Some("I'll check both files."));
    let calls: Vec<(&str, &str, serde_json::Value)> = reply
        .tool_calls
        .iter()
        .map(|c| {
            let ToolCall {
                id,
                name,
                arguments,
            } = c;
            (
                id.as_str(),
                name.as_str(),
                serde_json::from_str(arguments).unwrap(),
            )
        })
        .collect();
    assert_eq!(
        calls,
        [
            (
                "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
                "file_read",
                json!({"path": "a.txt"})
            ),
            (
                "toolu_01LmXW3NcVxZ9pQq5yZ2B8kD",
                "file_read",
                json!({"path": "b.txt", "max_lines": 20})
            )
        ]
    );
    assert_eq!(reply.finish_reason.as_deref(), Some("tool_use"));
}

#[tokio::test]
async fn cache_reads_are_cached_prompt_tokens_and_writes_count_in_the_prompt() {
    let body = message(
        json!([{"type": "text", "text": "ok"}]),
        "end_turn",
        json!({"input_tokens": 37, "cache_creation_input_tokens": 412,
               "cache_read_input_tokens": 5120, "output_tokens": 15}),
    );
    let (server, _seq) = serve(vec![ok(body)]).await;
    let reply = client(&server).chat(hello_request()).await.unwrap();
    assert_eq!(
        reply.usage,
        Usage {
            prompt_tokens: 37 + 412 + 5120,
            completion_tokens: 15,
            cached_prompt_tokens: 5120
        }
    );
}

#[tokio::test]
async fn max_tokens_in_the_middle_of_a_tool_call_is_a_retryable_error_never_a_call() {
    let cut = message(
        json!([
            {"type": "text", "text": "Writing the report."},
            {"type": "tool_use", "id": "toolu_01", "name": "file_write",
             "input": {"path": "report.md"}}
        ]),
        "max_tokens",
        usage(900, 64),
    );
    let (server, seq) = serve(vec![ok(cut)]).await;
    let err = client(&server).chat(hello_request()).await.unwrap_err();
    assert!(err.is_retryable(), "{err:?}");
    assert!(
        matches!(&err, LlmError::Transient(m) if m.contains("max_tokens") && m.contains("'file_write'")),
        "{err:?}"
    );
    // Retried like any transient failure: 1 + 3 retries.
    assert_eq!(seq.count(), 4);

    // The next attempt may fit: then its calls are returned.
    let cut = message(
        json!([{"type": "tool_use", "id": "toolu_01", "name": "file_write", "input": {}}]),
        "max_tokens",
        usage(900, 64),
    );
    let whole = message(
        json!([{"type": "tool_use", "id": "toolu_02", "name": "file_write",
                "input": {"path": "r.md", "content": "x"}}]),
        "tool_use",
        usage(900, 60),
    );
    let (server, seq) = serve(vec![ok(cut), ok(whole)]).await;
    let reply = client(&server).chat(hello_request()).await.unwrap();
    assert_eq!(reply.tool_calls[0].id, "toolu_02");
    assert_eq!(seq.count(), 2);
}

#[tokio::test]
async fn a_refusal_is_a_permanent_error_with_what_the_model_wrote() {
    let body = message(
        json!([{"type": "text", "text": "I can't help with"}]),
        "refusal",
        usage(30, 4),
    );
    let (server, seq) = serve(vec![ok(body)]).await;
    let err = client(&server).chat(hello_request()).await.unwrap_err();
    assert!(
        matches!(&err, LlmError::Permanent(m) if m.contains("refused") && m.contains("I can't help with")),
        "{err:?}"
    );
    assert_eq!(seq.count(), 1);
}

#[tokio::test]
async fn unknown_content_blocks_are_ignored() {
    let body = message(
        json!([
            {"type": "thinking", "thinking": "Let me think.", "signature": "EqQBCgIYAhIM"},
            {"type": "some_future_block", "data": 1},
            {"type": "text", "text": "Answer."}
        ]),
        "end_turn",
        usage(10, 10),
    );
    let (server, _seq) = serve(vec![ok(body)]).await;
    let (logs, _guard) = Captured::install();
    let reply = client(&server).chat(hello_request()).await.unwrap();
    assert_eq!(reply.content.as_deref(), Some("Answer."));
    assert!(reply.tool_calls.is_empty());
    let logs = logs.text();
    assert!(
        logs.contains("WARN") && logs.contains("some_future_block"),
        "{logs}"
    );
}

#[tokio::test]
async fn an_error_object_in_a_200_body_is_classified_and_retried_when_transient() {
    let (server, seq) = serve(vec![
        ok(api_error("overloaded_error", "Overloaded")),
        ok(text_message("ok")),
    ])
    .await;
    let reply = client(&server).chat(hello_request()).await.unwrap();
    assert_eq!(reply.content.as_deref(), Some("ok"));
    assert_eq!(seq.count(), 2);

    let (server, seq) = serve(vec![ok(api_error(
        "invalid_request_error",
        "max_tokens: too large",
    ))])
    .await;
    let err = client(&server).chat(hello_request()).await.unwrap_err();
    assert!(
        matches!(&err, LlmError::Permanent(m) if m.contains("max_tokens: too large")),
        "{err:?}"
    );
    assert_eq!(seq.count(), 1);
}

#[tokio::test]
async fn unusable_replies_are_invalid_and_not_retried() {
    let (server, seq) = serve(vec![
        ResponseTemplate::new(200).set_body_raw("<html>captive portal</html>", "text/html")
    ])
    .await;
    let err = client(&server).chat(hello_request()).await.unwrap_err();
    assert!(
        matches!(&err, LlmError::InvalidResponse(m) if m.contains("captive portal")),
        "{err:?}"
    );
    assert_eq!(seq.count(), 1);

    let (server, seq) = serve(vec![ok(json!({"type": "message", "role": "assistant"}))]).await;
    let err = client(&server).chat(hello_request()).await.unwrap_err();
    assert!(matches!(&err, LlmError::InvalidResponse(_)), "{err:?}");
    assert_eq!(seq.count(), 1);
}

#[tokio::test]
async fn a_reply_over_max_response_bytes_stops_being_read() {
    let big = "x".repeat(4096);
    let (server, seq) = serve(vec![ok(text_message(&big))]).await;
    let client = AnthropicClient::new(config(&server).with_max_response_bytes(1024)).unwrap();
    let err = client.chat(hello_request()).await.unwrap_err();
    assert!(
        matches!(&err, LlmError::InvalidResponse(m) if m.contains("max_response_bytes")),
        "{err:?}"
    );
    assert_eq!(seq.count(), 1);

    let events = vec![
        message_start(5, 0, 0),
        text_start(0),
        text_delta(0, &big),
        block_stop(0),
        message_delta("end_turn", 900),
        message_stop(),
    ];
    let (server, _seq) = serve(vec![sse(&events)]).await;
    let client = AnthropicClient::new(
        config(&server)
            .with_stream(true)
            .with_max_response_bytes(1024),
    )
    .unwrap();
    let err = client.chat(hello_request()).await.unwrap_err();
    assert!(matches!(&err, LlmError::InvalidResponse(_)), "{err:?}");
}
