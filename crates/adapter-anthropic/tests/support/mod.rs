//! Shared helpers for the integration tests: configs pointed at a local wiremock server,
//! Messages API payloads as the API sends them (bodies, SSE events, error bodies), and a
//! responder that plays a sequence of replies and records when each request came.
#![allow(dead_code, clippy::unwrap_used)]

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use adapter_anthropic::{AnthropicClient, AnthropicConfig};
use domain::llm::{CallPurpose, ChatMessage, ChatRequest};
use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

pub const MODEL: &str = "claude-sonnet-4-5";
pub const API_KEY: &str = "sk-ant-api03-TESTKEY0123456789abcdefSECRET";

/// A config for `server` with the key, tiny backoffs, 3 retries and a 5 s timeout.
pub fn config(server: &MockServer) -> AnthropicConfig {
    AnthropicConfig::new(MODEL)
        .with_base_url(server.uri())
        .with_api_key(API_KEY)
        .with_backoff(Duration::from_millis(1), Duration::from_millis(10))
        .with_max_retries(3)
        .with_request_timeout(Duration::from_secs(5))
}

pub fn client(server: &MockServer) -> AnthropicClient {
    AnthropicClient::new(config(server)).unwrap()
}

pub fn streaming(server: &MockServer) -> AnthropicClient {
    AnthropicClient::new(config(server).with_stream(true)).unwrap()
}

pub fn hello_request() -> ChatRequest {
    ChatRequest::new(
        CallPurpose::Other,
        vec![
            ChatMessage::system("You are terse."),
            ChatMessage::user("Say hello."),
        ],
    )
}

/// A `message` object as the API returns it, around `content`.
pub fn message(content: Value, stop_reason: &str, usage: Value) -> Value {
    json!({
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": null,
        "usage": usage
    })
}

pub fn usage(input: u64, output: u64) -> Value {
    json!({
        "input_tokens": input,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": output,
        "service_tier": "standard"
    })
}

pub fn text_message(text: &str) -> Value {
    message(
        json!([{"type": "text", "text": text}]),
        "end_turn",
        usage(21, 9),
    )
}

/// An error body: `{"type": "error", "error": {"type", "message"}, "request_id"}`.
pub fn api_error(error_type: &str, message: &str) -> Value {
    json!({
        "type": "error",
        "error": {"type": error_type, "message": message},
        "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy"
    })
}

pub fn ok(body: Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(body)
}

pub fn status(code: u16, error_type: &str, message: &str) -> ResponseTemplate {
    ResponseTemplate::new(code).set_body_json(api_error(error_type, message))
}

/// A `text/event-stream` reply of `events`, each as `event: TYPE` and `data: JSON`.
pub fn sse(events: &[Value]) -> ResponseTemplate {
    sse_raw(&sse_text(events))
}

pub fn sse_text(events: &[Value]) -> String {
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect()
}

/// A `text/event-stream` reply with exactly `body`.
pub fn sse_raw(body: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(body.to_owned(), "text/event-stream")
}

pub fn message_start(input_tokens: u64, cache_read: u64, cache_creation: u64) -> Value {
    json!({"type": "message_start", "message": {
        "id": "msg_014p7gG3wDgGV9EUtLvnow3U", "type": "message", "role": "assistant",
        "model": "claude-sonnet-4-5-20250929", "content": [], "stop_reason": null,
        "stop_sequence": null,
        "usage": {"input_tokens": input_tokens, "cache_creation_input_tokens": cache_creation,
                  "cache_read_input_tokens": cache_read, "output_tokens": 1}}})
}

pub fn text_start(index: u64) -> Value {
    json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})
}

pub fn text_delta(index: u64, text: &str) -> Value {
    json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}})
}

pub fn tool_start(index: u64, id: &str, name: &str) -> Value {
    json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}})
}

pub fn json_delta(index: u64, partial: &str) -> Value {
    json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": partial}})
}

pub fn block_stop(index: u64) -> Value {
    json!({"type": "content_block_stop", "index": index})
}

pub fn message_delta(stop_reason: &str, output_tokens: u64) -> Value {
    json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null}, "usage": {"output_tokens": output_tokens}})
}

pub fn message_stop() -> Value {
    json!({"type": "message_stop"})
}

pub fn ping() -> Value {
    json!({"type": "ping"})
}

/// A whole streamed reply saying `text`.
pub fn text_stream(text: &str) -> Vec<Value> {
    vec![
        message_start(25, 0, 0),
        text_start(0),
        text_delta(0, text),
        block_stop(0),
        message_delta("end_turn", 5),
        message_stop(),
    ]
}

/// `text` cut into pieces of `size` characters.
pub fn pieces(text: &str, size: usize) -> Vec<String> {
    text.chars()
        .collect::<Vec<_>>()
        .chunks(size)
        .map(|c| c.iter().collect())
        .collect()
}

/// Plays `responses` in order (repeating the last one) and records when each request came.
#[derive(Clone)]
pub struct Sequence {
    responses: Arc<Vec<ResponseTemplate>>,
    arrivals: Arc<Mutex<Vec<Instant>>>,
}

impl Sequence {
    pub fn arrivals(&self) -> Vec<Instant> {
        self.arrivals.lock().unwrap().clone()
    }

    pub fn count(&self) -> usize {
        self.arrivals.lock().unwrap().len()
    }
}

impl Respond for Sequence {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        let mut arrivals = self.arrivals.lock().unwrap();
        let index = arrivals.len().min(self.responses.len() - 1);
        arrivals.push(Instant::now());
        self.responses[index].clone()
    }
}

/// Starts a server answering `POST /v1/messages` with `responses` in order.
pub async fn serve(responses: Vec<ResponseTemplate>) -> (MockServer, Sequence) {
    assert!(!responses.is_empty());
    let server = MockServer::start().await;
    let sequence = Sequence {
        responses: Arc::new(responses),
        arrivals: Arc::default(),
    };
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(sequence.clone())
        .mount(&server)
        .await;
    (server, sequence)
}

/// All requests the server received.
pub async fn received(server: &MockServer) -> Vec<Request> {
    server.received_requests().await.unwrap()
}

/// The JSON bodies of all requests the server received.
pub async fn received_bodies(server: &MockServer) -> Vec<Value> {
    received(server)
        .await
        .iter()
        .map(|r| r.body_json::<Value>().unwrap())
        .collect()
}

/// A log sink the test can read back.
#[derive(Clone, Default)]
pub struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    /// Captures every log line of this thread, down to TRACE, until the guard is dropped.
    pub fn install() -> (Captured, tracing::subscriber::DefaultGuard) {
        let logs = Captured::default();
        let writer = logs.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish();
        (logs, tracing::subscriber::set_default(subscriber))
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}
