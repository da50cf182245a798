//! Shared helpers for the integration tests: configs pointed at a local wiremock server,
//! real-shaped OpenAI payloads, and a responder that plays a sequence of replies.
#![allow(dead_code, clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use adapter_openai::OpenAiConfig;
use domain::llm::{CallPurpose, ChatMessage, ChatRequest};
use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

pub const MODEL: &str = "gpt-4o-mini";
pub const API_KEY: &str = "sk-proj-TESTKEY0123456789abcdefSECRET";

/// A config for `server` with tiny backoffs, 3 retries and a 5 s timeout.
pub fn config(server: &MockServer) -> OpenAiConfig {
    OpenAiConfig::compatible(format!("{}/v1", server.uri()), MODEL)
        .with_backoff(Duration::from_millis(1), Duration::from_millis(10))
        .with_max_retries(3)
        .with_request_timeout(Duration::from_secs(5))
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

/// A `chat.completion` object as OpenAI returns it, around `message`.
pub fn completion(message: Value, finish_reason: &str) -> Value {
    json!({
        "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
        "object": "chat.completion",
        "created": 1741569952,
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [{
            "index": 0,
            "message": message,
            "logprobs": null,
            "finish_reason": finish_reason
        }],
        "usage": {
            "prompt_tokens": 19,
            "completion_tokens": 10,
            "total_tokens": 29,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0
            }
        },
        "service_tier": "default",
        "system_fingerprint": "fp_06737a9306"
    })
}

pub fn text_completion(text: &str) -> Value {
    completion(
        json!({
            "role": "assistant",
            "content": text,
            "refusal": null,
            "annotations": []
        }),
        "stop",
    )
}

/// An OpenAI error body.
pub fn openai_error(message: &str, kind: &str, code: Value) -> Value {
    json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
}

pub fn ok(body: Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(body)
}

/// Plays `responses` in order (repeating the last one) and records when each request came.
#[derive(Clone)]
pub struct Sequence {
    responses: Arc<Vec<ResponseTemplate>>,
    arrivals: Arc<Mutex<Vec<Instant>>>,
}

impl Sequence {
    pub fn new(responses: Vec<ResponseTemplate>) -> Sequence {
        assert!(!responses.is_empty());
        Sequence {
            responses: Arc::new(responses),
            arrivals: Arc::default(),
        }
    }

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

/// Starts a server answering `POST /v1/chat/completions` with `responses` in order.
pub async fn serve(responses: Vec<ResponseTemplate>) -> (MockServer, Sequence) {
    let server = MockServer::start().await;
    let sequence = Sequence::new(responses);
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(sequence.clone())
        .mount(&server)
        .await;
    (server, sequence)
}

/// The JSON bodies of all requests the server received.
pub async fn received_bodies(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| r.body_json::<Value>().unwrap())
        .collect()
}

/// A `text/event-stream` reply: one `data:` event per chunk, then `data: [DONE]`.
pub fn sse(chunks: &[Value]) -> ResponseTemplate {
    let mut body = String::new();
    for c in chunks {
        body.push_str(&format!("data: {c}\n\n"));
    }
    body.push_str("data: [DONE]\n\n");
    sse_raw(&body)
}

/// A `text/event-stream` reply with exactly `body`.
pub fn sse_raw(body: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(body.to_owned(), "text/event-stream")
}

/// One `chat.completion.chunk` as OpenAI streams it, around `delta`.
pub fn chunk(delta: Value, finish_reason: Option<&str>) -> Value {
    json!({
        "id": "chatcmpl-AzS2lVqsRmJbq0vaL3Gn5uYDnUeLQ",
        "object": "chat.completion.chunk",
        "created": 1739350000,
        "model": "gpt-4o-mini-2024-07-18",
        "service_tier": "default",
        "system_fingerprint": "fp_72ed7ab54c",
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish_reason}],
        "usage": null
    })
}

/// OpenAI's last chunk with `stream_options.include_usage`: no choices, the usage.
pub fn usage_chunk(prompt: u64, completion: u64) -> Value {
    json!({
        "id": "chatcmpl-AzS2lVqsRmJbq0vaL3Gn5uYDnUeLQ",
        "object": "chat.completion.chunk",
        "created": 1739350000,
        "model": "gpt-4o-mini-2024-07-18",
        "system_fingerprint": "fp_72ed7ab54c",
        "choices": [],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    })
}
