//! Retry behaviour: what is retried, how long the client waits, what it returns in the end.
#![allow(clippy::unwrap_used)]

mod support;

use std::net::TcpListener;
use std::time::{Duration, Instant};

use adapter_openai::{OpenAiClient, OpenAiConfig};
use domain::ports::LlmClient;
use domain::LlmError;
use serde_json::json;
use support::*;
use wiremock::ResponseTemplate;

fn rate_limited() -> ResponseTemplate {
    ResponseTemplate::new(429).set_body_json(openai_error(
        "Rate limit reached for gpt-4o-mini in organization org-abc on requests per min (RPM): Limit 3, Used 3, Requested 1.",
        "requests",
        json!("rate_limit_exceeded"),
    ))
}

fn server_error() -> ResponseTemplate {
    ResponseTemplate::new(500).set_body_json(openai_error(
        "The server had an error while processing your request. Sorry about that!",
        "server_error",
        json!(null),
    ))
}

#[tokio::test]
async fn rate_limit_waits_for_retry_after_then_succeeds() {
    let (server, seq) = serve(vec![
        rate_limited().insert_header("retry-after", "1"),
        ok(text_completion("finally")),
    ])
    .await;
    let client = OpenAiClient::new(config(&server)).unwrap();

    let started = Instant::now();
    let reply = client.chat(hello_request()).await.unwrap();

    assert_eq!(reply.content.as_deref(), Some("finally"));
    let arrivals = seq.arrivals();
    assert_eq!(arrivals.len(), 2);
    let gap = arrivals[1] - arrivals[0];
    assert!(gap >= Duration::from_millis(950), "waited only {gap:?}");
    assert!(started.elapsed() >= Duration::from_millis(950));
    assert!(gap < Duration::from_secs(5), "waited {gap:?}");
}

#[tokio::test]
async fn retry_after_ms_is_honoured() {
    let (server, seq) = serve(vec![
        rate_limited().insert_header("retry-after-ms", "300"),
        ok(text_completion("ok")),
    ])
    .await;
    OpenAiClient::new(config(&server))
        .unwrap()
        .chat(hello_request())
        .await
        .unwrap();
    let arrivals = seq.arrivals();
    let gap = arrivals[1] - arrivals[0];
    assert!(gap >= Duration::from_millis(280), "waited only {gap:?}");
    assert!(gap < Duration::from_secs(3), "waited {gap:?}");
}

#[tokio::test]
async fn long_retry_after_is_capped() {
    let (server, seq) = serve(vec![
        rate_limited().insert_header("retry-after", "3600"),
        ok(text_completion("ok")),
    ])
    .await;
    let client =
        OpenAiClient::new(config(&server).with_max_retry_after(Duration::from_millis(50))).unwrap();
    let started = Instant::now();
    client.chat(hello_request()).await.unwrap();
    assert_eq!(seq.count(), 2);
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn rate_limit_without_retry_after_uses_backoff_and_ends_rate_limited() {
    let (server, seq) = serve(vec![rate_limited()]).await;
    let client = OpenAiClient::new(config(&server).with_max_retries(2)).unwrap();

    let err = client.chat(hello_request()).await.unwrap_err();

    assert_eq!(seq.count(), 3, "1 attempt + 2 retries");
    let LlmError::RateLimited {
        retry_after,
        message,
    } = err
    else {
        panic!("expected RateLimited, got {err:?}");
    };
    assert_eq!(retry_after, None);
    assert!(message.contains("HTTP 429"), "{message}");
    assert!(message.contains("Rate limit reached"), "{message}");
}

#[tokio::test]
async fn server_errors_are_retried_until_success() {
    let (server, seq) = serve(vec![
        server_error(),
        server_error(),
        server_error(),
        ok(text_completion("recovered")),
    ])
    .await;
    let client = OpenAiClient::new(config(&server)).unwrap();

    let reply = client.chat(hello_request()).await.unwrap();

    assert_eq!(reply.content.as_deref(), Some("recovered"));
    assert_eq!(seq.count(), 4);
    assert_eq!(server.received_requests().await.unwrap().len(), 4);
}

#[tokio::test]
async fn the_last_error_is_returned_when_retries_run_out() {
    let (server, seq) = serve(vec![
        server_error(),
        ResponseTemplate::new(502).set_body_string("<html><body>502 Bad Gateway</body></html>"),
    ])
    .await;
    let client = OpenAiClient::new(config(&server).with_max_retries(2)).unwrap();

    let err = client.chat(hello_request()).await.unwrap_err();

    assert_eq!(seq.count(), 3);
    let LlmError::Transient(message) = err else {
        panic!("expected Transient, got {err:?}");
    };
    assert!(message.contains("HTTP 502"), "{message}");
    assert!(message.contains("502 Bad Gateway"), "{message}");
}

#[tokio::test]
async fn zero_retries_means_one_attempt() {
    let (server, seq) = serve(vec![server_error(), ok(text_completion("no"))]).await;
    let client = OpenAiClient::new(config(&server).with_max_retries(0)).unwrap();
    let err = client.chat(hello_request()).await.unwrap_err();
    assert!(matches!(err, LlmError::Transient(_)), "{err:?}");
    assert_eq!(seq.count(), 1);
}

#[tokio::test]
async fn connection_refused_is_transient_after_retries() {
    // Grab a free port, then close it so nothing listens there.
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let config = OpenAiConfig::compatible(format!("http://127.0.0.1:{port}/v1"), MODEL)
        .with_backoff(Duration::from_millis(1), Duration::from_millis(5))
        .with_max_retries(2)
        .with_request_timeout(Duration::from_secs(5));
    let client = OpenAiClient::new(config).unwrap();

    let started = Instant::now();
    let err = client.chat(hello_request()).await.unwrap_err();

    let LlmError::Transient(message) = &err else {
        panic!("expected Transient, got {err:?}");
    };
    assert!(message.contains("could not connect"), "{message}");
    assert!(message.contains(&format!("127.0.0.1:{port}")), "{message}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn slow_server_times_out_as_transient() {
    let (server, seq) = serve(vec![
        ok(text_completion("too late")).set_delay(Duration::from_secs(3))
    ])
    .await;
    let client = OpenAiClient::new(
        config(&server)
            .with_request_timeout(Duration::from_millis(200))
            .with_max_retries(1),
    )
    .unwrap();

    let started = Instant::now();
    let err = client.chat(hello_request()).await.unwrap_err();

    let LlmError::Transient(message) = &err else {
        panic!("expected Transient, got {err:?}");
    };
    assert!(message.contains("timed out"), "{message}");
    assert_eq!(seq.count(), 2, "the timeout is retried");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn truncated_body_is_transient_and_retried() {
    let truncated = r#"{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hel"#;
    let (server, seq) = serve(vec![
        ResponseTemplate::new(200).set_body_raw(truncated, "application/json"),
        ok(text_completion("Hello")),
    ])
    .await;
    let reply = OpenAiClient::new(config(&server))
        .unwrap()
        .chat(hello_request())
        .await
        .unwrap();
    assert_eq!(reply.content.as_deref(), Some("Hello"));
    assert_eq!(seq.count(), 2);
}

#[tokio::test]
async fn upstream_error_in_a_200_body_is_retried() {
    // OpenRouter reports upstream failures as HTTP 200 with an error object.
    let (server, seq) = serve(vec![
        ok(json!({"error": {"message": "Provider returned error", "code": 502, "metadata": {"provider_name": "X"}}})),
        ok(text_completion("ok")),
    ])
    .await;
    let reply = OpenAiClient::new(config(&server))
        .unwrap()
        .chat(hello_request())
        .await
        .unwrap();
    assert_eq!(reply.content.as_deref(), Some("ok"));
    assert_eq!(seq.count(), 2);
}
