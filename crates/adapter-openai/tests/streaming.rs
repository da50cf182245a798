//! Streamed replies (`"stream": true`) in the shapes real servers send, and cut streams.
#![allow(clippy::unwrap_used)]

mod support;

use std::time::Duration;

use adapter_openai::{OpenAiClient, OpenAiConfig, Provider};
use domain::llm::{ToolCall, Usage};
use domain::ports::LlmClient;
use domain::LlmError;
use serde_json::{json, Value};
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

fn streaming(server: &wiremock::MockServer) -> OpenAiClient {
    OpenAiClient::new(config(server).with_stream(true)).unwrap()
}

#[tokio::test]
async fn streamed_tool_call_arguments_split_across_many_chunks() {
    // OpenAI: the first delta has id, type and name; the arguments come in small pieces;
    // usage arrives in a last chunk with no choices.
    let args = r#"{"command": "echo 'hello planwright' > greeting.txt"}"#;
    let mut chunks = vec![chunk(
        json!({"role": "assistant", "content": null, "tool_calls": [{
            "index": 0, "id": "call_DdmO9pD3xa9XTPNJ32zg2hcA", "type": "function",
            "function": {"name": "shell_exec", "arguments": ""}}], "refusal": null}),
        None,
    )];
    let pieces: Vec<String> = args
        .chars()
        .collect::<Vec<_>>()
        .chunks(3)
        .map(|c| c.iter().collect())
        .collect();
    for piece in &pieces {
        chunks.push(chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}),
            None,
        ));
    }
    chunks.push(chunk(json!({}), Some("tool_calls")));
    chunks.push(usage_chunk(82, 18));
    let (server, seq) = serve(vec![sse(&chunks)]).await;

    let reply = streaming(&server).chat(hello_request()).await.unwrap();

    assert!(pieces.len() > 15, "{}", pieces.len());
    assert_eq!(
        reply.tool_calls,
        vec![ToolCall {
            id: "call_DdmO9pD3xa9XTPNJ32zg2hcA".into(),
            name: "shell_exec".into(),
            arguments: args.into(),
        }]
    );
    assert_eq!(reply.content, None);
    assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(
        reply.usage,
        Usage {
            prompt_tokens: 82,
            completion_tokens: 18,
            cached_prompt_tokens: 0
        }
    );
    assert_eq!(seq.count(), 1);
    let body = &received_bodies(&server).await[0];
    assert_eq!(body["stream"], json!(true));
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
}

#[tokio::test]
async fn two_parallel_streamed_tool_calls_interleaved_by_index() {
    let chunks = vec![
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function", "function": {"name": "file_read", "arguments": ""}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 1, "id": "call_b", "type": "function", "function": {"name": "file_list", "arguments": ""}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 1, "function": {"arguments": "{\"path\":"}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"path\": \"a.txt\"}"}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 1, "function": {"arguments": " \".\"}"}}]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
    ];
    let (server, _seq) = serve(vec![sse(&chunks)]).await;
    let reply = streaming(&server).chat(hello_request()).await.unwrap();
    let got: Vec<(&str, &str, &str)> = reply
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("call_a", "file_read", "{\"path\": \"a.txt\"}"),
            ("call_b", "file_list", "{\"path\": \".\"}")
        ]
    );
}

#[tokio::test]
async fn streamed_tool_calls_without_index_fall_back_to_id_and_position() {
    // Some compatible servers omit `index`: a delta with a new id starts a call, deltas
    // without id or index continue the latest one.
    let bare = |delta: Value, finish: Option<&str>| json!({"object": "chat.completion.chunk", "choices": [{"delta": delta, "finish_reason": finish}]});
    let chunks = vec![
        bare(
            json!({"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "file_write", "arguments": "{\"path\": \"a.txt\", "}}]}),
            None,
        ),
        bare(
            json!({"tool_calls": [{"function": {"arguments": "\"content\": \"x\"}"}}]}),
            None,
        ),
        bare(
            json!({"tool_calls": [{"id": "call_2", "type": "function", "function": {"name": "file_read", "arguments": "{\"path\": \"a.txt\"}"}}]}),
            None,
        ),
        bare(json!({}), Some("tool_calls")),
    ];
    let (server, _seq) = serve(vec![sse(&chunks)]).await;
    let reply = streaming(&server).chat(hello_request()).await.unwrap();
    assert_eq!(reply.tool_calls.len(), 2, "{:?}", reply.tool_calls);
    assert_eq!(reply.tool_calls[0].id, "call_1");
    assert_eq!(
        reply.tool_calls[0].arguments,
        "{\"path\": \"a.txt\", \"content\": \"x\"}"
    );
    assert_eq!(reply.tool_calls[1].name, "file_read");
}

#[tokio::test]
async fn ollama_streams_a_whole_tool_call_in_one_chunk() {
    // Ollama's /v1 layer: the complete call in one delta, then a `stop` chunk.
    let chunks = vec![
        json!({"id": "chatcmpl-374", "object": "chat.completion.chunk", "created": 1735000000,
               "model": "llama3.2", "system_fingerprint": "fp_ollama",
               "choices": [{"index": 0, "delta": {"role": "assistant", "content": "",
                   "tool_calls": [{"id": "call_x4n1hz0m", "index": 0, "type": "function",
                       "function": {"name": "get_weather", "arguments": "{\"city\":\"Toronto\"}"}}]},
                   "finish_reason": null}]}),
        json!({"id": "chatcmpl-374", "object": "chat.completion.chunk", "created": 1735000000,
               "model": "llama3.2", "system_fingerprint": "fp_ollama",
               "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                   "finish_reason": "tool_calls"}]}),
    ];
    let (server, _seq) = serve(vec![sse(&chunks)]).await;
    let config = Provider::Ollama
        .config(MODEL)
        .with_base_url(format!("{}/v1", server.uri()))
        .with_stream(true);
    let reply = OpenAiClient::new(config)
        .unwrap()
        .chat(hello_request())
        .await
        .unwrap();
    assert_eq!(reply.tool_calls[0].name, "get_weather");
    assert_eq!(reply.tool_calls[0].arguments, "{\"city\":\"Toronto\"}");
    assert_eq!(reply.text(), None);
    let body = &received_bodies(&server).await[0];
    assert!(
        body.get("stream_options").is_none(),
        "not sent to Ollama: {body}"
    );
}

#[tokio::test]
async fn deepseek_streams_reasoning_then_content() {
    let ds = |delta: Value, finish: Option<&str>, usage: Value| {
        json!({"id": "a5d7d1b0-5c3e-4b2f-9a57-0d8e1f2a3b4c", "object": "chat.completion.chunk",
               "created": 1737521975, "model": "deepseek-reasoner", "system_fingerprint": "fp_7e73fd9a08",
               "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
               "usage": usage})
    };
    let chunks = vec![
        ds(
            json!({"role": "assistant", "content": null, "reasoning_content": ""}),
            None,
            Value::Null,
        ),
        ds(
            json!({"content": null, "reasoning_content": "Compare "}),
            None,
            Value::Null,
        ),
        ds(
            json!({"content": null, "reasoning_content": "tenths."}),
            None,
            Value::Null,
        ),
        ds(
            json!({"content": "9.8", "reasoning_content": null}),
            None,
            Value::Null,
        ),
        ds(
            json!({"content": " is larger.", "reasoning_content": null}),
            None,
            Value::Null,
        ),
        ds(
            json!({"content": "", "reasoning_content": null}),
            Some("stop"),
            json!({"prompt_tokens": 18, "completion_tokens": 40, "total_tokens": 58,
                   "prompt_cache_hit_tokens": 0, "prompt_cache_miss_tokens": 18,
                   "completion_tokens_details": {"reasoning_tokens": 30}}),
        ),
    ];
    let (server, _seq) = serve(vec![sse(&chunks)]).await;
    let reply = streaming(&server).chat(hello_request()).await.unwrap();
    assert_eq!(reply.reasoning_content.as_deref(), Some("Compare tenths."));
    assert_eq!(reply.content.as_deref(), Some("9.8 is larger."));
    assert_eq!(reply.usage.completion_tokens, 40);
}

#[tokio::test]
async fn openrouter_stream_with_comments_and_extra_fields() {
    let body = format!(
        ": OPENROUTER PROCESSING\n\n: OPENROUTER PROCESSING\n\ndata: {}\n\ndata: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
        json!({"id": "gen-1740000000-abc", "provider": "OpenAI", "model": "openai/gpt-4o-mini",
               "object": "chat.completion.chunk", "created": 1740000000,
               "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hi"},
                            "finish_reason": null, "native_finish_reason": null, "logprobs": null}]}),
        json!({"id": "gen-1740000000-abc", "provider": "OpenAI", "model": "openai/gpt-4o-mini",
               "object": "chat.completion.chunk", "created": 1740000000,
               "choices": [{"index": 0, "delta": {"role": "assistant", "content": " there"},
                            "finish_reason": "stop", "native_finish_reason": "stop", "logprobs": null}]}),
        json!({"id": "gen-1740000000-abc", "provider": "OpenAI", "model": "openai/gpt-4o-mini",
               "object": "chat.completion.chunk", "created": 1740000000,
               "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                            "finish_reason": null, "native_finish_reason": null, "logprobs": null}],
               "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15, "cost": 0.0000036}}),
    );
    let (server, _seq) = serve(vec![sse_raw(&body)]).await;
    let reply = streaming(&server).chat(hello_request()).await.unwrap();
    assert_eq!(reply.content.as_deref(), Some("Hi there"));
    assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
    assert_eq!(reply.usage.prompt_tokens, 12);
}

#[tokio::test]
async fn llamacpp_stream_with_timings_in_the_last_chunk() {
    let chunks = vec![
        json!({"choices": [{"finish_reason": null, "index": 0, "delta": {"content": "Hello"}}],
               "created": 1736000000, "id": "chatcmpl-q8cX", "model": "gpt-3.5-turbo",
               "system_fingerprint": "b4500-adc5dd92", "object": "chat.completion.chunk"}),
        json!({"choices": [{"finish_reason": "stop", "index": 0, "delta": {}}],
               "created": 1736000000, "id": "chatcmpl-q8cX", "model": "gpt-3.5-turbo",
               "system_fingerprint": "b4500-adc5dd92", "object": "chat.completion.chunk",
               "usage": {"completion_tokens": 2, "prompt_tokens": 9, "total_tokens": 11},
               "timings": {"prompt_n": 9, "prompt_ms": 12.5, "predicted_n": 2, "predicted_ms": 30.1}}),
    ];
    let (server, _seq) = serve(vec![sse(&chunks)]).await;
    let reply = streaming(&server).chat(hello_request()).await.unwrap();
    assert_eq!(reply.content.as_deref(), Some("Hello"));
    assert_eq!(reply.usage.prompt_tokens, 9);
}

#[tokio::test]
async fn cached_prompt_tokens_come_from_the_final_usage_chunk() {
    let mut last = usage_chunk(1200, 40);
    last["usage"]["prompt_tokens_details"] = json!({"cached_tokens": 1024, "audio_tokens": 0});
    let chunks = vec![
        chunk(json!({"role": "assistant", "content": "Hi"}), None),
        chunk(json!({}), Some("stop")),
        last,
    ];
    // A server that sends details without a usable count.
    let mut odd = usage_chunk(50, 5);
    odd["usage"]["prompt_tokens_details"] = json!({"cached_tokens": "n/a"});
    let odd_chunks = vec![chunk(json!({"content": "Hi"}), Some("stop")), odd];
    let (server, _seq) = serve(vec![sse(&chunks), sse(&odd_chunks)]).await;
    let client = streaming(&server);

    let reply = client.chat(hello_request()).await.unwrap();
    assert_eq!(
        reply.usage,
        Usage {
            prompt_tokens: 1200,
            completion_tokens: 40,
            cached_prompt_tokens: 1024
        }
    );
    let reply = client.chat(hello_request()).await.unwrap();
    assert_eq!(
        reply.usage,
        Usage {
            prompt_tokens: 50,
            completion_tokens: 5,
            cached_prompt_tokens: 0
        }
    );
}

#[tokio::test]
async fn a_stream_cut_midway_is_retried() {
    // The first body stops after two content chunks: no finish_reason, no [DONE].
    let cut = format!(
        "data: {}\n\ndata: {}\n\n",
        chunk(json!({"role": "assistant", "content": "Hel"}), None),
        chunk(json!({"content": "lo"}), None)
    );
    let (server, seq) = serve(vec![
        sse_raw(&cut),
        sse(&[
            chunk(json!({"role": "assistant", "content": "Hello"}), None),
            chunk(json!({}), Some("stop")),
        ]),
    ])
    .await;
    let reply = streaming(&server).chat(hello_request()).await.unwrap();
    assert_eq!(reply.content.as_deref(), Some("Hello"));
    assert_eq!(seq.count(), 2);
}

#[tokio::test]
async fn a_stream_cut_in_the_middle_of_a_line_ends_transient_after_retries() {
    let cut = format!(
        "data: {}\n\ndata: {{\"choices\": [{{\"index\": 0, \"delta\": {{\"cont",
        chunk(json!({"role": "assistant", "content": "Hel"}), None)
    );
    let (server, seq) = serve(vec![sse_raw(&cut)]).await;
    let client = OpenAiClient::new(config(&server).with_stream(true).with_max_retries(2)).unwrap();
    let err = client.chat(hello_request()).await.unwrap_err();
    let LlmError::Transient(message) = &err else {
        panic!("expected Transient, got {err:?}");
    };
    assert!(message.contains("truncated"), "{message}");
    assert_eq!(seq.count(), 3, "1 attempt + 2 retries");
}

#[tokio::test]
async fn an_error_event_in_the_stream_is_classified() {
    // OpenRouter reports a provider failure mid-stream as a chunk with an error object.
    let body = format!(
        "data: {}\n\ndata: {}\n\n",
        chunk(json!({"role": "assistant", "content": "Hi"}), None),
        json!({"id": "gen-1", "object": "chat.completion.chunk", "created": 1740000000,
               "model": "openai/gpt-4o-mini", "provider": "OpenAI",
               "error": {"code": "server_error", "message": "Provider disconnected unexpectedly"},
               "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}]})
    );
    let (server, seq) = serve(vec![
        sse_raw(&body),
        sse(&[chunk(json!({"content": "ok"}), Some("stop"))]),
    ])
    .await;
    let reply = streaming(&server).chat(hello_request()).await.unwrap();
    assert_eq!(reply.content.as_deref(), Some("ok"));
    assert_eq!(
        seq.count(),
        2,
        "an unrecognised upstream error is transient"
    );

    let auth = format!(
        "data: {}\n\n",
        json!({"error": {"code": 401, "message": "No auth credentials found"}})
    );
    let (server, seq) = serve(vec![sse_raw(&auth)]).await;
    let err = streaming(&server).chat(hello_request()).await.unwrap_err();
    assert!(matches!(err, LlmError::Auth(_)), "{err:?}");
    assert_eq!(seq.count(), 1);
}

#[tokio::test]
async fn a_server_ignoring_stream_true_is_read_as_json() {
    let (server, _seq) = serve(vec![ok(text_completion("not streamed"))]).await;
    let reply = streaming(&server).chat(hello_request()).await.unwrap();
    assert_eq!(reply.content.as_deref(), Some("not streamed"));
    assert_eq!(reply.usage.prompt_tokens, 19);
}

#[tokio::test]
async fn an_event_stream_under_a_json_content_type_is_still_read() {
    let body = format!(
        "data: {}\n\ndata: [DONE]\n\n",
        chunk(json!({"content": "sse"}), Some("stop"))
    );
    let (server, _seq) = serve(vec![
        wiremock::ResponseTemplate::new(200).set_body_raw(body, "application/json")
    ])
    .await;
    let reply = streaming(&server).chat(hello_request()).await.unwrap();
    assert_eq!(reply.content.as_deref(), Some("sse"));
}

#[tokio::test]
async fn unknown_finish_reasons_are_kept() {
    let (server, _seq) = serve(vec![sse(&[
        chunk(json!({"content": "partial"}), None),
        chunk(json!({}), Some("eos_token")),
    ])])
    .await;
    let reply = streaming(&server).chat(hello_request()).await.unwrap();
    assert_eq!(reply.finish_reason.as_deref(), Some("eos_token"));
    assert_eq!(reply.content.as_deref(), Some("partial"));
}

/// Serves raw HTTP on 127.0.0.1: the first connection gets the headers and part of a chunked
/// event stream and is then dropped; later ones get a complete stream.
async fn dropping_server() -> (String, tokio::task::JoinHandle<usize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let handle = tokio::spawn(async move {
        let mut served = 0;
        while served < 2 {
            let Ok(Ok((mut socket, _))) =
                tokio::time::timeout(Duration::from_secs(10), listener.accept()).await
            else {
                break;
            };
            served += 1;
            read_request(&mut socket).await;
            start_stream(&mut socket).await;
            if served == 1 {
                socket.flush().await.unwrap();
                drop(socket); // the connection dies mid-stream
                continue;
            }
            let rest = format!(
                "data: {}\n\ndata: [DONE]\n\n",
                chunk(json!({"content": "lo"}), Some("stop"))
            );
            socket
                .write_all(format!("{:x}\r\n{rest}\r\n0\r\n\r\n", rest.len()).as_bytes())
                .await
                .unwrap();
            socket.flush().await.unwrap();
        }
        served
    });
    (format!("http://{addr}/v1"), handle)
}

/// Writes the headers of a chunked event stream and its first chunk (`Hel`).
async fn start_stream(socket: &mut tokio::net::TcpStream) {
    let head =
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
    let first = format!(
        "data: {}\n\n",
        chunk(json!({"role": "assistant", "content": "Hel"}), None)
    );
    socket.write_all(head.as_bytes()).await.unwrap();
    socket
        .write_all(format!("{:x}\r\n{first}\r\n", first.len()).as_bytes())
        .await
        .unwrap();
}

/// Reads one request (headers and a `content-length` body).
async fn read_request(socket: &mut tokio::net::TcpStream) {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = socket.read(&mut buf).await.unwrap();
        if n == 0 {
            return;
        }
        data.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&data).to_string();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("content-length")
                        .then(|| v.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            if data.len() >= end + 4 + length {
                return;
            }
        }
    }
}

#[tokio::test]
async fn a_connection_dropped_mid_stream_is_retried() {
    let (base, server) = dropping_server().await;
    let config = OpenAiConfig::compatible(base, MODEL)
        .with_stream(true)
        .with_backoff(Duration::from_millis(1), Duration::from_millis(10))
        .with_max_retries(2)
        .with_request_timeout(Duration::from_secs(5));
    let reply = OpenAiClient::new(config)
        .unwrap()
        .chat(hello_request())
        .await
        .unwrap();
    assert_eq!(reply.content.as_deref(), Some("Hello"));
    assert_eq!(server.await.unwrap(), 2);
}

/// A stream that stalls after its first piece fails after `stream_idle_timeout`, as a
/// transient error naming the stall, not after the whole request timeout.
#[tokio::test]
async fn a_stalled_stream_fails_after_the_idle_timeout() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        read_request(&mut socket).await;
        start_stream(&mut socket).await;
        socket.flush().await.unwrap();
        // Holds the connection open, silent, until the test is over.
        let _ = stop_rx.await;
    });
    let config = OpenAiConfig::compatible(format!("http://{addr}/v1"), MODEL)
        .with_stream(true)
        .with_stream_idle_timeout(Duration::from_millis(200))
        .with_max_retries(0)
        .with_request_timeout(Duration::from_secs(600));
    let err = OpenAiClient::new(config)
        .unwrap()
        .chat(hello_request())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, LlmError::Transient(m) if m.contains("stalled")),
        "{err:?}"
    );
    let _ = stop_tx.send(());
}
