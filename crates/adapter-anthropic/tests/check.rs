//! `check_model`: the endpoint, the key and the model name checked without spending tokens
//! (`GET /v1/models/{model}`), for `planwright doctor` and a check before a run.
#![allow(clippy::unwrap_used)]

mod support;

use domain::LlmError;
use serde_json::json;
use support::*;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

async fn models(reply: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(format!("/v1/models/{MODEL}")))
        .and(header("anthropic-version", "2023-06-01"))
        .respond_with(reply)
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn a_known_model_with_a_good_key_passes() {
    let server = models(ok(json!({
        "type": "model", "id": "claude-sonnet-4-5-20250929",
        "display_name": "Claude Sonnet 4.5", "created_at": "2025-09-29T00:00:00Z"
    })))
    .await;
    client(&server).check_model().await.unwrap();
    let requests = received(&server).await;
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].headers.get("x-api-key").unwrap(), API_KEY);
}

#[tokio::test]
async fn a_bad_key_or_an_unknown_model_is_said_with_the_servers_message() {
    let server = models(status(401, "authentication_error", "invalid x-api-key")).await;
    let err = client(&server).check_model().await.unwrap_err();
    assert!(
        matches!(&err, LlmError::Auth(m) if m.contains("invalid x-api-key")),
        "{err:?}"
    );

    let server = models(status(404, "not_found_error", "model: claude-sonnet-4-5")).await;
    let err = client(&server).check_model().await.unwrap_err();
    assert!(
        matches!(&err, LlmError::Permanent(m) if m.contains("model: claude-sonnet-4-5")),
        "{err:?}"
    );
    assert_eq!(received(&server).await.len(), 1);
}
