//! Brave Web Search against a local wiremock server speaking its API.
#![allow(clippy::unwrap_used)]

mod support;

use adapter_search::Brave;
use domain::ports::{SearchHit, SearchProvider};
use domain::ToolError;
use serde_json::json;
use support::*;
use wiremock::matchers::{header, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

const ENDPOINT: &str = "/res/v1/web/search";

fn brave(server: &MockServer) -> Brave {
    Brave::new(BRAVE_KEY, fast())
        .unwrap()
        .with_base_url(&server.uri())
        .unwrap()
}

fn failed(err: ToolError) -> String {
    match err {
        ToolError::Failed(m) => m,
        other => panic!("expected Failed, got {other:?}"),
    }
}

#[tokio::test]
async fn real_reply_gives_clean_hits() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(ENDPOINT))
        .and(header("x-subscription-token", BRAVE_KEY))
        .and(header("accept", "application/json"))
        .and(query_param("q", "rust async runtime"))
        .and(query_param("count", "10"))
        .respond_with(ResponseTemplate::new(200).set_body_json(brave_reply()))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(ENDPOINT))
        .and(query_param("count", "2"))
        .respond_with(ResponseTemplate::new(200).set_body_json(brave_reply()))
        .expect(1)
        .mount(&server)
        .await;
    let brave = brave(&server);
    assert_eq!(brave.name(), "brave");
    assert_eq!(brave.base_url(), server.uri());

    let hits = brave.search("rust async runtime", 10).await.unwrap();
    assert_eq!(
        hits,
        vec![
            SearchHit {
                title: "Tokio - An asynchronous Rust runtime".into(),
                url: "https://tokio.rs/".into(),
                snippet: "August 1, 2024 — Tokio is an asynchronous runtime for the Rust programming language.".into(),
            },
            SearchHit {
                title: "Async in depth | Tokio & friends".into(),
                url: "https://tokio.rs/tokio/tutorial/async".into(),
                snippet: "Futures are lazy: nothing happens until they are polled.".into(),
            },
            SearchHit {
                title: "async-std".into(),
                url: "https://async.rs/".into(),
                snippet: "Async version of the Rust standard library".into(),
            },
        ]
    );

    // The server sends more than asked for: the cap still holds.
    let two = brave.search("rust async runtime", 2).await.unwrap();
    assert_eq!(two.len(), 2);
}

#[tokio::test]
async fn count_is_capped_at_twenty() {
    let server = MockServer::start().await;
    Mock::given(path(ENDPOINT))
        .and(query_param("count", "20"))
        .respond_with(ResponseTemplate::new(200).set_body_json(brave_reply()))
        .expect(1)
        .mount(&server)
        .await;
    assert_eq!(brave(&server).search("q", 50).await.unwrap().len(), 3);
}

#[tokio::test]
async fn a_rejected_key_is_clear_and_does_not_show_it() {
    let server = MockServer::start().await;
    Mock::given(path(ENDPOINT))
        .respond_with(ResponseTemplate::new(401).set_body_json(json!({
            "type": "ErrorResponse",
            "error": {
                "id": "c8e0b1c4-7a47-4d6c-9f4e-0e2a8d3f0c11",
                "status": 401,
                "code": "SUBSCRIPTION_TOKEN_INVALID",
                "detail": format!("The provided subscription token {BRAVE_KEY} is invalid."),
                "meta": {"component": "authentication"}
            },
            "time": 1718000000
        })))
        .expect(1)
        .mount(&server)
        .await;
    let err = failed(brave(&server).search("q", 5).await.unwrap_err());
    assert_eq!(err, "search provider brave rejected the API key (HTTP 401)");
}

#[tokio::test]
async fn rate_limit_uses_brave_reset_headers() {
    let server = MockServer::start().await;
    Mock::given(path(ENDPOINT))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("x-ratelimit-limit", "1, 2000")
                .insert_header("x-ratelimit-remaining", "0, 1500")
                .insert_header("x-ratelimit-reset", "1, 1419704")
                .set_body_json(json!({
                    "type": "ErrorResponse",
                    "error": {"id": "x", "status": 429, "code": "RATE_LIMITED", "detail": "Request rate limit exceeded for plan."},
                    "time": 1718000000
                })),
        )
        .expect(1)
        .mount(&server)
        .await;
    let err = failed(brave(&server).search("q", 5).await.unwrap_err());
    assert!(err.contains("rate limited, try again later"), "{err}");
    assert!(err.contains("retry after 1 s"), "{err}");
}

#[tokio::test]
async fn a_server_error_is_retried_once() {
    let server = MockServer::start().await;
    Mock::given(path(ENDPOINT))
        .respond_with(ResponseTemplate::new(500))
        .up_to_n_times(1)
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(path(ENDPOINT))
        .respond_with(ResponseTemplate::new(200).set_body_json(brave_reply()))
        .expect(1)
        .mount(&server)
        .await;
    assert_eq!(brave(&server).search("q", 5).await.unwrap().len(), 3);
}

#[tokio::test]
async fn other_refusals_carry_brave_detail() {
    let server = MockServer::start().await;
    Mock::given(path(ENDPOINT))
        .respond_with(ResponseTemplate::new(422).set_body_json(json!({
            "type": "ErrorResponse",
            "error": {"id": "x", "status": 422, "code": "VALIDATION", "detail": "Unable to validate request parameter(s)."},
            "time": 1718000000
        })))
        .mount(&server)
        .await;
    let err = failed(brave(&server).search("q", 5).await.unwrap_err());
    assert_eq!(
        err,
        "search provider brave refused the request (HTTP 422): Unable to validate request parameter(s). (VALIDATION)"
    );
}

#[tokio::test]
async fn garbage_is_an_unexpected_response() {
    let server = MockServer::start().await;
    Mock::given(path(ENDPOINT))
        .respond_with(ResponseTemplate::new(200).set_body_string("{\"web\": {\"results\": [tru"))
        .mount(&server)
        .await;
    let err = failed(brave(&server).search("q", 5).await.unwrap_err());
    assert!(err.starts_with("unexpected response from brave:"), "{err}");
}

#[tokio::test]
async fn no_results_are_an_empty_list() {
    let server = MockServer::start().await;
    // Brave leaves `web` out when nothing matched.
    Mock::given(path(ENDPOINT))
        .and(query_param("q", "no web"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "query": {"original": "no web", "more_results_available": false},
            "type": "search",
            "mixed": {"type": "mixed", "main": [], "top": [], "side": []}
        })))
        .mount(&server)
        .await;
    Mock::given(path(ENDPOINT))
        .and(query_param("q", "empty web"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "query": {"original": "empty web"},
            "type": "search",
            "web": {"type": "search", "results": [], "family_friendly": true}
        })))
        .mount(&server)
        .await;
    let brave = brave(&server);
    assert_eq!(brave.search("no web", 5).await.unwrap(), vec![]);
    assert_eq!(brave.search("empty web", 5).await.unwrap(), vec![]);
}
