//! The API key never shows: not in `Debug`, errors, or log lines, even when a server echoes
//! it back.
#![allow(clippy::unwrap_used)]

mod support;

use adapter_anthropic::{AnthropicClient, AnthropicConfig};
use domain::ports::LlmClient;
use support::*;

#[test]
fn debug_output_redacts_the_key() {
    let config = AnthropicConfig::new(MODEL).with_api_key(API_KEY);
    let client = AnthropicClient::new(config.clone()).unwrap();
    for shown in [
        format!("{config:?}"),
        format!("{config:#?}"),
        format!("{client:?}"),
        format!("{client:#?}"),
    ] {
        assert!(!shown.contains(API_KEY), "{shown}");
        assert!(shown.contains("[REDACTED]"), "{shown}");
    }
}

#[tokio::test]
async fn logs_and_errors_never_contain_the_key() {
    let (logs, _guard) = Captured::install();

    let echo = format!("bad key {API_KEY}");
    let (server, seq) = serve(vec![
        status(529, "overloaded_error", &echo),
        status(429, "rate_limit_error", &echo).insert_header("retry-after", "0"),
        status(401, "authentication_error", &echo),
    ])
    .await;

    let err = client(&server).chat(hello_request()).await.unwrap_err();

    assert_eq!(seq.count(), 3);
    assert!(!err.to_string().contains(API_KEY), "{err}");
    assert!(!format!("{err:?}").contains(API_KEY), "{err:?}");
    assert!(err.to_string().contains("[REDACTED]"), "{err}");
    let logs = logs.text();
    assert!(logs.contains("retrying"), "retries were not logged: {logs}");
    assert!(!logs.contains(API_KEY), "{logs}");
    assert!(!logs.contains("TESTKEY"), "{logs}");
}
