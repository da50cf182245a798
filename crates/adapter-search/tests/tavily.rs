//! Tavily against a local wiremock server speaking its API.
#![allow(clippy::unwrap_used)]

mod support;

use adapter_search::Tavily;
use domain::ports::{SearchHit, SearchProvider};
use domain::ToolError;
use serde_json::{json, Value};
use support::*;
use wiremock::matchers::{body_partial_json, header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn tavily(server: &MockServer) -> Tavily {
    Tavily::new(TAVILY_KEY, fast())
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
    Mock::given(method("POST"))
        .and(path("/search"))
        .and(header(
            "authorization",
            format!("Bearer {TAVILY_KEY}").as_str(),
        ))
        .and(header("content-type", "application/json"))
        .and(body_partial_json(
            json!({"query": "rust async runtime", "max_results": 2}),
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(tavily_reply()))
        .expect(1)
        .mount(&server)
        .await;
    let tavily = tavily(&server);
    assert_eq!(tavily.name(), "tavily");

    let hits = tavily.search("rust async runtime", 2).await.unwrap();
    assert_eq!(hits.len(), 2, "max_results honoured though 3 came back");
    assert_eq!(
        hits[0],
        SearchHit {
            title: "Tokio - An asynchronous Rust runtime".into(),
            url: "https://tokio.rs/".into(),
            snippet: "Tokio is an event-driven, non-blocking I/O platform for writing asynchronous applications with the Rust programming language.".into(),
        }
    );
    assert_eq!(hits[1].url, "https://rust-lang.github.io/async-book/");
    let long = &hits[1].snippet;
    assert!(long.chars().count() <= 300, "{}", long.chars().count());
    assert!(long.ends_with('…'), "{long}");
    assert!(
        long.starts_with("This book aims to be a thorough guide"),
        "{long}"
    );

    // The key goes in the header only, never in the body (the older API form).
    let requests = server.received_requests().await.unwrap();
    let body: Value = serde_json::from_slice(&requests[0].body).unwrap();
    assert!(body.get("api_key").is_none(), "{body}");
    assert!(!String::from_utf8_lossy(&requests[0].body).contains(TAVILY_KEY));
}

#[tokio::test]
async fn a_rejected_key_is_clear_and_does_not_show_it() {
    let server = MockServer::start().await;
    Mock::given(path("/search"))
        .respond_with(ResponseTemplate::new(401).set_body_json(json!({
            "detail": {"error": format!("Unauthorized: missing or invalid API key {TAVILY_KEY}.")}
        })))
        .expect(1)
        .mount(&server)
        .await;
    let err = failed(tavily(&server).search("q", 5).await.unwrap_err());
    assert_eq!(
        err,
        "search provider tavily rejected the API key (HTTP 401)"
    );
}

#[tokio::test]
async fn rate_limit_is_reported_with_the_wait() {
    let server = MockServer::start().await;
    Mock::given(path("/search"))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "30")
                .set_body_json(json!({"detail": {"error": "Rate limit exceeded"}})),
        )
        .expect(1)
        .mount(&server)
        .await;
    let err = failed(tavily(&server).search("q", 5).await.unwrap_err());
    assert_eq!(
        err,
        "search provider tavily answered HTTP 429: rate limited, try again later (retry after 30 s)"
    );
}

#[tokio::test]
async fn a_used_up_plan_is_explained() {
    let server = MockServer::start().await;
    Mock::given(path("/search"))
        .respond_with(ResponseTemplate::new(432).set_body_json(json!({
            "detail": {"error": "This request exceeds your plan's set usage limit."}
        })))
        .mount(&server)
        .await;
    let err = failed(tavily(&server).search("q", 5).await.unwrap_err());
    assert!(err.contains("HTTP 432"), "{err}");
    assert!(err.contains("credit limit is used up"), "{err}");
}

#[tokio::test]
async fn a_server_error_is_retried_once() {
    let server = MockServer::start().await;
    Mock::given(path("/search"))
        .respond_with(ResponseTemplate::new(503))
        .up_to_n_times(1)
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(path("/search"))
        .respond_with(ResponseTemplate::new(200).set_body_json(tavily_reply()))
        .expect(1)
        .mount(&server)
        .await;
    assert_eq!(tavily(&server).search("q", 5).await.unwrap().len(), 3);
}

#[tokio::test]
async fn bad_requests_carry_tavily_detail() {
    let server = MockServer::start().await;
    Mock::given(path("/search"))
        .respond_with(ResponseTemplate::new(400).set_body_json(json!({
            "detail": {"error": "Query is too long. Max query length is 400 characters."}
        })))
        .mount(&server)
        .await;
    let err = failed(tavily(&server).search("q", 5).await.unwrap_err());
    assert_eq!(
        err,
        "search provider tavily refused the request (HTTP 400): Query is too long. Max query length is 400 characters."
    );
}

#[tokio::test]
async fn garbage_is_an_unexpected_response() {
    let server = MockServer::start().await;
    Mock::given(path("/search"))
        .respond_with(ResponseTemplate::new(200).set_body_string(""))
        .mount(&server)
        .await;
    let err = failed(tavily(&server).search("q", 5).await.unwrap_err());
    assert!(err.starts_with("unexpected response from tavily:"), "{err}");
    assert!(err.contains("an empty body"), "{err}");
}

#[tokio::test]
async fn no_results_are_an_empty_list() {
    let server = MockServer::start().await;
    Mock::given(path("/search"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "query": "zzzz", "follow_up_questions": null, "answer": null, "images": [],
            "results": [], "response_time": 0.8
        })))
        .mount(&server)
        .await;
    assert_eq!(tavily(&server).search("zzzz", 5).await.unwrap(), vec![]);
}

#[tokio::test]
async fn an_unreachable_server_is_retried_then_reported() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let tavily = Tavily::new(TAVILY_KEY, fast())
        .unwrap()
        .with_base_url(&format!("http://127.0.0.1:{port}"))
        .unwrap();
    let err = failed(tavily.search("q", 5).await.unwrap_err());
    assert!(
        err.starts_with("could not connect to search provider tavily"),
        "{err}"
    );
    assert!(!err.contains(TAVILY_KEY), "{err}");
}
