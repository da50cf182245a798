//! `--ca-cert` against a real TLS server: Python's `ssl` module serving a certificate signed
//! by the test CA in `testdata/tls/` (its README). With the CA the handshake succeeds and the
//! reply is read; without it the platform verifier refuses the server, and the error says so.
#![allow(clippy::unwrap_used)]

mod support;

use std::time::Duration;

use adapter_openai::{OpenAiClient, OpenAiConfig};
use domain::ports::LlmClient;
use support::*;

#[path = "../../../testdata/tls/https_reply.rs"]
mod https_reply;
use https_reply::{https_reply, TLS_DIR};

fn tls_config(port: u16) -> OpenAiConfig {
    let mut config = OpenAiConfig::new(MODEL);
    config.base_url = format!("https://localhost:{port}/v1");
    config.max_retries = 0;
    config.request_timeout = Duration::from_secs(20);
    config
}

#[tokio::test]
async fn a_server_signed_by_the_given_ca_is_trusted_and_others_are_not() {
    let Some(server) = https_reply(&text_completion("hello over TLS")) else {
        return;
    };

    let mut trusting = tls_config(server.port);
    trusting.extra_root_certs = vec![std::fs::read(format!("{TLS_DIR}/ca.pem")).unwrap()];
    let reply = OpenAiClient::new(trusting)
        .unwrap()
        .chat(hello_request())
        .await
        .unwrap();
    assert_eq!(reply.text(), Some("hello over TLS"));

    let err = OpenAiClient::new(tls_config(server.port))
        .unwrap()
        .chat(hello_request())
        .await
        .unwrap_err();
    let shown = err.to_string();
    assert!(shown.to_lowercase().contains("certificate"), "{shown}");
}
