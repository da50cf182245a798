//! Replies larger than `max_response_bytes` (issue 29: a 200 MB reply failed cleanly but
//! peaked at 2.3 GB of memory): reading stops at the limit, streamed or not, and the call
//! fails as an invalid response, not retried. A raw TCP server counts what it could send.
#![allow(clippy::unwrap_used)]

mod support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use adapter_openai::{OpenAiClient, OpenAiConfig};
use domain::ports::LlmClient;
use domain::LlmError;
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// The client's limit in these tests.
const LIMIT: u64 = 1 << 20;
/// What the server would send in all: far above the limit.
const HUGE: u64 = 96 << 20;
/// More than the limit plus what the sockets' buffers can hold, far less than [`HUGE`].
const READ_AT_MOST: u64 = 24 << 20;

/// How the server frames its endless reply.
#[derive(Clone, Copy)]
enum Framing {
    /// `transfer-encoding: chunked` JSON with no length announced.
    ChunkedJson,
    /// A `content-length` announcing the whole huge body.
    AnnouncedJson,
    /// A server-sent-event stream of content deltas that never ends.
    EventStream,
}

/// A server answering each connection with a reply of [`HUGE`] bytes; the counters are
/// the connections accepted and the body bytes it managed to write.
async fn huge_reply_server(framing: Framing) -> (String, Arc<AtomicU64>, Arc<AtomicU64>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let connections = Arc::new(AtomicU64::new(0));
    let written = Arc::new(AtomicU64::new(0));
    let (conns, sent) = (connections.clone(), written.clone());
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            conns.fetch_add(1, Ordering::SeqCst);
            let sent = sent.clone();
            tokio::spawn(async move {
                read_request(&mut socket).await;
                let head = match framing {
                    Framing::ChunkedJson => "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n".to_string(),
                    Framing::AnnouncedJson => format!("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {HUGE}\r\n\r\n"),
                    Framing::EventStream => "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n".to_string(),
                };
                if socket.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                let piece: Vec<u8> = match framing {
                    Framing::EventStream => {
                        let line = format!(
                            "data: {}\n\n",
                            chunk(serde_json::json!({"content": "x".repeat(900)}), None)
                        );
                        line.repeat(64).into_bytes()
                    }
                    _ => {
                        let mut p = br#"{"choices":[{"message":{"content":""#.to_vec();
                        p.resize(64 * 1024, b'x');
                        p
                    }
                };
                let chunked = !matches!(framing, Framing::AnnouncedJson);
                while sent.load(Ordering::SeqCst) < HUGE {
                    let mut frame = Vec::with_capacity(piece.len() + 16);
                    if chunked {
                        frame.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
                    }
                    frame.extend_from_slice(&piece);
                    if chunked {
                        frame.extend_from_slice(b"\r\n");
                    }
                    if socket.write_all(&frame).await.is_err() {
                        return;
                    }
                    sent.fetch_add(piece.len() as u64, Ordering::SeqCst);
                }
            });
        }
    });
    (format!("http://{addr}/v1"), connections, written)
}

async fn read_request(socket: &mut tokio::net::TcpStream) {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let Ok(n) = socket.read(&mut buf).await else {
            return;
        };
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

async fn assert_stops_early(framing: Framing, stream: bool) {
    let (base, connections, written) = huge_reply_server(framing).await;
    let client = OpenAiClient::new(
        OpenAiConfig::compatible(base, MODEL)
            .with_stream(stream)
            .with_max_response_bytes(LIMIT)
            .with_backoff(Duration::from_millis(1), Duration::from_millis(10))
            .with_max_retries(3)
            .with_request_timeout(Duration::from_secs(60)),
    )
    .unwrap();
    let err = client.chat(hello_request()).await.unwrap_err();
    assert!(
        matches!(&err, LlmError::InvalidResponse(m) if m.contains("max_response_bytes")),
        "{err:?}"
    );
    // Not retried: one connection.
    assert_eq!(connections.load(Ordering::SeqCst), 1);
    let sent = written.load(Ordering::SeqCst);
    assert!(
        sent < READ_AT_MOST,
        "the server could write {sent} bytes: the client read on past its limit"
    );
}

#[tokio::test]
async fn a_huge_json_reply_is_read_only_up_to_the_limit() {
    assert_stops_early(Framing::ChunkedJson, false).await;
}

#[tokio::test]
async fn a_huge_announced_length_is_refused_before_reading() {
    assert_stops_early(Framing::AnnouncedJson, false).await;
}

#[tokio::test]
async fn a_huge_event_stream_is_read_only_up_to_the_limit() {
    assert_stops_early(Framing::EventStream, true).await;
}

#[tokio::test]
async fn a_reply_under_the_limit_is_read_whole() {
    let (server, _) = serve(vec![ok(text_completion("hi"))]).await;
    let client = OpenAiClient::new(config(&server).with_max_response_bytes(4096)).unwrap();
    let reply = client.chat(hello_request()).await.unwrap();
    assert_eq!(reply.content.as_deref(), Some("hi"));
}
