//! What is retried and what is not: 529 and 500 (with and without `retry-after`), 429, and
//! the client errors that never are.
#![allow(clippy::unwrap_used)]

mod support;

use std::time::{Duration, Instant};

use adapter_anthropic::{AnthropicClient, AnthropicConfig};
use domain::ports::LlmClient;
use domain::LlmError;
use support::*;

#[tokio::test]
async fn overloaded_529_waits_for_retry_after_then_succeeds() {
    let (server, seq) = serve(vec![
        status(529, "overloaded_error", "Overloaded").insert_header("retry-after", "1"),
        ok(text_message("finally")),
    ])
    .await;
    let started = Instant::now();
    let reply = client(&server).chat(hello_request()).await.unwrap();
    assert_eq!(reply.content.as_deref(), Some("finally"));
    let arrivals = seq.arrivals();
    assert_eq!(arrivals.len(), 2);
    let gap = arrivals[1] - arrivals[0];
    assert!(gap >= Duration::from_millis(950), "waited only {gap:?}");
    assert!(gap < Duration::from_secs(5), "waited {gap:?}");
    assert!(started.elapsed() >= Duration::from_millis(950));
}

#[tokio::test]
async fn rate_limits_and_server_errors_are_retried_until_success() {
    let (server, seq) = serve(vec![
        status(
            429,
            "rate_limit_error",
            "Number of request tokens has exceeded your per-minute rate limit",
        )
        .insert_header("retry-after", "0"),
        status(500, "api_error", "Internal server error"),
        status(529, "overloaded_error", "Overloaded"),
        ok(text_message("ok")),
    ])
    .await;
    let reply = client(&server).chat(hello_request()).await.unwrap();
    assert_eq!(reply.content.as_deref(), Some("ok"));
    assert_eq!(seq.count(), 4);
}

#[tokio::test]
async fn the_last_error_is_returned_when_retries_run_out() {
    let (server, seq) = serve(vec![status(529, "overloaded_error", "Overloaded")]).await;
    let err = client(&server).chat(hello_request()).await.unwrap_err();
    assert!(
        matches!(&err, LlmError::Transient(m) if m.contains("HTTP 529") && m.contains("overloaded_error")),
        "{err:?}"
    );
    assert_eq!(seq.count(), 4);

    let (server, seq) = serve(vec![
        status(429, "rate_limit_error", "slow down").insert_header("retry-after", "0")
    ])
    .await;
    let err = client(&server).chat(hello_request()).await.unwrap_err();
    assert!(
        matches!(&err, LlmError::RateLimited { retry_after: Some(d), .. } if d.is_zero()),
        "{err:?}"
    );
    assert_eq!(seq.count(), 4);
}

#[tokio::test]
async fn client_errors_are_never_retried() {
    let cases = [
        (
            400,
            "invalid_request_error",
            "messages.1.content.0: unexpected `tool_use_id`",
        ),
        (401, "authentication_error", "invalid x-api-key"),
        (
            403,
            "permission_error",
            "Your API key does not have permission to use the specified resource.",
        ),
        (404, "not_found_error", "model: claude-nonexistent-9"),
    ];
    for (code, error_type, message) in cases {
        let (server, seq) = serve(vec![status(code, error_type, message)]).await;
        let err = client(&server).chat(hello_request()).await.unwrap_err();
        assert_eq!(seq.count(), 1, "HTTP {code} was retried");
        assert!(!err.is_retryable(), "{err:?}");
        // The server's message is shown.
        assert!(err.to_string().contains(message), "{err}");
        match code {
            401 | 403 => assert!(matches!(err, LlmError::Auth(_)), "{err:?}"),
            _ => assert!(matches!(err, LlmError::Permanent(_)), "{err:?}"),
        }
    }
}

#[tokio::test]
async fn a_prompt_too_long_is_context_too_long() {
    let (server, seq) = serve(vec![status(
        400,
        "invalid_request_error",
        "prompt is too long: 215038 tokens > 200000 maximum",
    )])
    .await;
    let err = client(&server).chat(hello_request()).await.unwrap_err();
    assert!(matches!(err, LlmError::ContextTooLong(_)), "{err:?}");
    assert_eq!(seq.count(), 1);
}

#[tokio::test]
async fn connection_refused_is_transient_after_the_retries() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let config = AnthropicConfig::new(MODEL)
        .with_base_url(format!("http://{addr}"))
        .with_backoff(Duration::from_millis(1), Duration::from_millis(5))
        .with_max_retries(2);
    let err = AnthropicClient::new(config)
        .unwrap()
        .chat(hello_request())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, LlmError::Transient(m) if m.contains("could not connect")),
        "{err:?}"
    );
}
