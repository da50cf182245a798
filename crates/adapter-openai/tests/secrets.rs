//! The API key never shows: not in `Debug`, errors, or log lines.
#![allow(clippy::unwrap_used)]

mod support;

use std::io::Write;
use std::sync::{Arc, Mutex};

use adapter_openai::{OpenAiClient, OpenAiConfig};
use domain::ports::LlmClient;
use serde_json::json;
use support::*;
use wiremock::ResponseTemplate;

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
    let config = OpenAiConfig::new(MODEL).with_api_key(API_KEY);
    let client = OpenAiClient::new(config.clone()).unwrap();
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
        ResponseTemplate::new(500).set_body_json(openai_error(&echo, "server_error", json!(null))),
        ResponseTemplate::new(429)
            .insert_header("retry-after-ms", "5")
            .set_body_json(openai_error(
                &echo,
                "requests",
                json!("rate_limit_exceeded"),
            )),
        ResponseTemplate::new(401).set_body_json(openai_error(
            &echo,
            "invalid_request_error",
            json!("invalid_api_key"),
        )),
    ])
    .await;
    let client = OpenAiClient::new(config(&server).with_api_key(API_KEY)).unwrap();

    let err = client.chat(hello_request()).await.unwrap_err();

    assert_eq!(seq.count(), 3);
    assert!(!err.to_string().contains(API_KEY), "{err}");
    assert!(!format!("{err:?}").contains(API_KEY), "{err:?}");
    let logs = logs.text();
    assert!(logs.contains("retrying"), "retries were not logged: {logs}");
    assert!(!logs.contains(API_KEY), "{logs}");
    assert!(!logs.contains("TESTKEY"), "{logs}");
}
