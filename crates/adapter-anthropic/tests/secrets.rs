//! The API key never shows: not in `Debug`, errors, or log lines, even when a server echoes
//! it back.
#![allow(clippy::unwrap_used)]

mod support;

use std::io::Write;
use std::sync::{Arc, Mutex};

use adapter_anthropic::{AnthropicClient, AnthropicConfig};
use domain::ports::LlmClient;
use support::*;

/// A log sink the test can read back.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

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
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

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
    let logs = Captured::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

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
