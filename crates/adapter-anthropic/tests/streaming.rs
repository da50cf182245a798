//! Streamed replies (`"stream": true`) as the Messages API sends them: interleaved text and
//! tool_use blocks with the input in pieces, errors in the stream, cut and stalled streams,
//! and a call dropped midway.
#![allow(clippy::unwrap_used)]

mod support;

use std::time::Duration;

use adapter_anthropic::{AnthropicClient, AnthropicConfig};
use domain::llm::{ToolCall, Usage};
use domain::ports::LlmClient;
use domain::LlmError;
use serde_json::{json, Value};
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A tool_use block at `index` whose input arrives in pieces of three characters.
fn tool_block(index: u64, id: &str, name: &str, input: &str) -> Vec<Value> {
    let mut events = vec![tool_start(index, id, name), json_delta(index, "")];
    events.extend(pieces(input, 3).iter().map(|p| json_delta(index, p)));
    events.push(block_stop(index));
    events
}

#[tokio::test]
async fn text_and_tool_use_blocks_interleave_and_inputs_arrive_in_pieces() {
    let list = r#"{"path": "src", "depth": 2}"#;
    let read = r#"{"path": "src/main.rs"}"#;
    let mut events = vec![
        message_start(12, 4096, 0),
        text_start(0),
        text_delta(0, "I'll list "),
        ping(),
        text_delta(0, "the folder"),
        block_stop(0),
    ];
    events.extend(tool_block(1, "toolu_01Ab", "file_list", list));
    events.extend([
        text_start(2),
        text_delta(2, "and read the entry point."),
        block_stop(2),
    ]);
    events.extend(tool_block(3, "toolu_01Cd", "file_read", read));
    events.extend([message_delta("tool_use", 96), message_stop()]);
    assert!(events.len() > 20);
    let (server, seq) = serve(vec![sse(&events)]).await;

    let reply = streaming(&server).chat(hello_request()).await.unwrap();

    assert_eq!(
        reply.content.as_deref(),
        Some("I'll list the folder\n\nand read the entry point.")
    );
    assert_eq!(
        reply.tool_calls,
        vec![
            ToolCall {
                id: "toolu_01Ab".into(),
                name: "file_list".into(),
                arguments: list.into()
            },
            ToolCall {
                id: "toolu_01Cd".into(),
                name: "file_read".into(),
                arguments: read.into()
            }
        ]
    );
    assert_eq!(reply.finish_reason.as_deref(), Some("tool_use"));
    assert_eq!(
        reply.usage,
        Usage {
            prompt_tokens: 12 + 4096,
            completion_tokens: 96,
            cached_prompt_tokens: 4096
        }
    );
    assert_eq!(seq.count(), 1);
}

#[tokio::test]
async fn an_overloaded_error_event_mid_stream_is_retried() {
    let mut broken = vec![message_start(10, 0, 0), text_start(0), text_delta(0, "Hel")];
    broken.push(
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    );
    let (server, seq) = serve(vec![sse(&broken), sse(&text_stream("Hello"))]).await;
    let reply = streaming(&server).chat(hello_request()).await.unwrap();
    assert_eq!(reply.content.as_deref(), Some("Hello"));
    assert_eq!(seq.count(), 2);
}

#[tokio::test]
async fn an_error_event_is_classified_by_its_type() {
    let events = [
        message_start(10, 0, 0),
        json!({"type": "error", "error": {"type": "invalid_request_error", "message": "tools.0.name: String should match pattern"}}),
    ];
    let (server, seq) = serve(vec![sse(&events)]).await;
    let err = streaming(&server).chat(hello_request()).await.unwrap_err();
    assert!(
        matches!(&err, LlmError::Permanent(m) if m.contains("should match pattern") && m.contains("invalid_request_error")),
        "{err:?}"
    );
    assert_eq!(seq.count(), 1);

    let events =
        [json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})];
    let (server, seq) = serve(vec![sse(&events)]).await;
    let err = streaming(&server).chat(hello_request()).await.unwrap_err();
    assert!(
        matches!(&err, LlmError::Transient(m) if m.contains("Overloaded")),
        "{err:?}"
    );
    assert_eq!(seq.count(), 4);
}

#[tokio::test]
async fn a_stream_cut_in_the_middle_of_a_tool_call_is_retried_never_returned() {
    let mut cut = vec![message_start(10, 0, 0)];
    cut.extend(tool_block(
        0,
        "toolu_1",
        "shell_exec",
        r#"{"command": "rm -rf build"}"#,
    ));
    cut.truncate(cut.len() - 4); // the last pieces and the block's stop never come
    let mut whole = vec![message_start(10, 0, 0)];
    whole.extend(tool_block(
        0,
        "toolu_2",
        "shell_exec",
        r#"{"command": "ls"}"#,
    ));
    whole.extend([message_delta("tool_use", 20), message_stop()]);
    let (server, seq) = serve(vec![sse(&cut), sse(&whole)]).await;
    let reply = streaming(&server).chat(hello_request()).await.unwrap();
    assert_eq!(reply.tool_calls.len(), 1);
    assert_eq!(reply.tool_calls[0].arguments, r#"{"command": "ls"}"#);
    assert_eq!(seq.count(), 2);

    let (server, seq) = serve(vec![sse(&cut)]).await;
    let err = streaming(&server).chat(hello_request()).await.unwrap_err();
    assert!(
        matches!(&err, LlmError::Transient(m) if m.contains("'shell_exec'")),
        "{err:?}"
    );
    assert_eq!(seq.count(), 4);
}

#[tokio::test]
async fn max_tokens_while_streaming_a_tool_call_is_a_retryable_error() {
    let mut events = vec![
        message_start(10, 0, 0),
        text_start(0),
        text_delta(0, "Writing."),
        block_stop(0),
    ];
    events.extend(tool_block(
        1,
        "toolu_1",
        "file_write",
        r#"{"path": "a.md", "content": "lo"#,
    ));
    events.extend([message_delta("max_tokens", 64), message_stop()]);
    let (server, seq) = serve(vec![sse(&events)]).await;
    let client =
        AnthropicClient::new(config(&server).with_stream(true).with_max_retries(1)).unwrap();
    let err = client.chat(hello_request()).await.unwrap_err();
    assert!(err.is_retryable());
    assert!(
        matches!(&err, LlmError::Transient(m) if m.contains("max_tokens (8192)")),
        "{err:?}"
    );
    assert_eq!(seq.count(), 2);
}

/// Reads one request (headers and a `content-length` body).
async fn read_request(socket: &mut TcpStream) {
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

/// Writes the headers of a chunked event stream and its first events.
async fn start_stream(socket: &mut TcpStream) {
    let head =
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
    let first = sse_text(&[message_start(10, 0, 0), text_start(0), text_delta(0, "Hel")]);
    socket.write_all(head.as_bytes()).await.unwrap();
    socket
        .write_all(format!("{:x}\r\n{first}\r\n", first.len()).as_bytes())
        .await
        .unwrap();
    socket.flush().await.unwrap();
}

fn raw_config(addr: std::net::SocketAddr) -> AnthropicConfig {
    AnthropicConfig::new(MODEL)
        .with_base_url(format!("http://{addr}"))
        .with_api_key(API_KEY)
        .with_stream(true)
        .with_max_retries(0)
        .with_request_timeout(Duration::from_secs(600))
}

/// A stream that stalls after its first events fails after `stream_idle_timeout`, as a
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
        // Holds the connection open, silent, until the test is over.
        let _ = stop_rx.await;
    });
    let config = raw_config(addr).with_stream_idle_timeout(Duration::from_millis(200));
    let err = AnthropicClient::new(config)
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

/// Dropping a call's future (the engine cancelling a step) closes its connection: the
/// server sees the end of its socket while the stream is still open.
#[tokio::test]
async fn dropping_a_call_midway_closes_its_connection() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (started_tx, started_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        read_request(&mut socket).await;
        start_stream(&mut socket).await;
        let _ = started_tx.send(());
        // Reads until the client closes the connection (0 bytes) or resets it.
        let mut buf = [0u8; 64];
        loop {
            match socket.read(&mut buf).await {
                Ok(0) | Err(_) => return true,
                Ok(_) => {}
            }
        }
    });
    let client = AnthropicClient::new(raw_config(addr)).unwrap();
    let call = tokio::spawn(async move { client.chat(hello_request()).await });
    started_rx.await.unwrap();
    call.abort();
    assert!(call.await.unwrap_err().is_cancelled());
    let closed = tokio::time::timeout(Duration::from_secs(10), server)
        .await
        .expect("the connection stayed open after the call was dropped")
        .unwrap();
    assert!(closed);
}
