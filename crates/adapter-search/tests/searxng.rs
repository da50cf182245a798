//! SearxNG against a local wiremock server speaking its JSON API.
#![allow(clippy::unwrap_used)]

mod support;

use std::time::Duration;

use adapter_search::SearxNg;
use domain::ports::{SearchHit, SearchProvider};
use domain::ToolError;
use serde_json::json;
use support::*;
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

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
        .and(path("/search"))
        .and(query_param("q", "rust async runtime"))
        .and(query_param("format", "json"))
        .respond_with(ResponseTemplate::new(200).set_body_json(searxng_reply()))
        .expect(2)
        .mount(&server)
        .await;
    let searx = SearxNg::new(&server.uri(), fast()).unwrap();
    assert_eq!(searx.name(), "searxng");

    let hits = searx.search("rust async runtime", 10).await.unwrap();
    assert_eq!(
        hits,
        vec![
            SearchHit {
                title: "Tokio - An asynchronous Rust runtime".into(),
                url: "https://tokio.rs/".into(),
                snippet: "Tokio is an asynchronous runtime for the Rust programming language. It provides the building blocks needed for writing network applications.".into(),
            },
            SearchHit {
                title: "Asynchronous Programming in Rust — async book".into(),
                url: "https://rust-lang.github.io/async-book/".into(),
                snippet: "Async & await: what's the deal?".into(),
            },
            SearchHit {
                title: "async-std".into(),
                url: "https://async.rs/".into(),
                snippet: String::new(),
            },
        ]
    );

    let two = searx.search("rust async runtime", 2).await.unwrap();
    assert_eq!(two.len(), 2);
    assert_eq!(two[1].url, "https://rust-lang.github.io/async-book/");
}

#[tokio::test]
async fn instance_under_a_path_and_a_search_suffix() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/searx/search"))
        .and(query_param("format", "json"))
        .respond_with(ResponseTemplate::new(200).set_body_json(searxng_reply()))
        .expect(2)
        .mount(&server)
        .await;
    for base in [
        format!("{}/searx/", server.uri()),
        format!("{}/searx/search", server.uri()),
    ] {
        let searx = SearxNg::new(&base, fast()).unwrap();
        assert_eq!(searx.base_url(), format!("{}/searx", server.uri()));
        assert_eq!(searx.search("q", 1).await.unwrap().len(), 1);
    }
}

#[tokio::test]
async fn json_format_disabled_is_explained() {
    let server = MockServer::start().await;
    Mock::given(path("/search"))
        .respond_with(ResponseTemplate::new(403).set_body_string("<html>403 Forbidden</html>"))
        .mount(&server)
        .await;
    let err = failed(
        SearxNg::new(&server.uri(), fast())
            .unwrap()
            .search("q", 5)
            .await
            .unwrap_err(),
    );
    assert!(err.contains("HTTP 403"), "{err}");
    assert!(err.contains("settings.yml"), "{err}");
}

#[tokio::test]
async fn rate_limit_is_reported_with_the_wait() {
    let server = MockServer::start().await;
    Mock::given(path("/search"))
        .respond_with(ResponseTemplate::new(429).insert_header("retry-after", "7"))
        .expect(1)
        .mount(&server)
        .await;
    let err = failed(
        SearxNg::new(&server.uri(), fast())
            .unwrap()
            .search("q", 5)
            .await
            .unwrap_err(),
    );
    assert!(err.contains("rate limited, try again later"), "{err}");
    assert!(err.contains("retry after 7 s"), "{err}");
}

#[tokio::test]
async fn a_server_error_is_retried_once() {
    let server = MockServer::start().await;
    Mock::given(path("/search"))
        .respond_with(ResponseTemplate::new(502))
        .up_to_n_times(1)
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(path("/search"))
        .respond_with(ResponseTemplate::new(200).set_body_json(searxng_reply()))
        .expect(1)
        .mount(&server)
        .await;
    let hits = SearxNg::new(&server.uri(), fast())
        .unwrap()
        .search("q", 5)
        .await
        .unwrap();
    assert_eq!(hits.len(), 3);
}

#[tokio::test]
async fn a_server_failing_twice_is_an_error() {
    let server = MockServer::start().await;
    Mock::given(path("/search"))
        .respond_with(ResponseTemplate::new(500))
        .expect(2)
        .mount(&server)
        .await;
    let err = failed(
        SearxNg::new(&server.uri(), fast())
            .unwrap()
            .search("q", 5)
            .await
            .unwrap_err(),
    );
    assert!(err.contains("searxng is failing (HTTP 500"), "{err}");
}

#[tokio::test]
async fn garbage_is_an_unexpected_response() {
    let server = MockServer::start().await;
    Mock::given(path("/search"))
        .respond_with(
            ResponseTemplate::new(200).set_body_string("<!DOCTYPE html><html>results</html>"),
        )
        .mount(&server)
        .await;
    let searx = SearxNg::new(&server.uri(), fast()).unwrap();
    let err = failed(searx.search("q", 5).await.unwrap_err());
    assert!(
        err.starts_with("unexpected response from searxng:"),
        "{err}"
    );
    assert!(err.contains("<!DOCTYPE html>"), "{err}");

    let server = MockServer::start().await;
    Mock::given(path("/search"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"results": "nope"})))
        .mount(&server)
        .await;
    let searx = SearxNg::new(&server.uri(), fast()).unwrap();
    let err = failed(searx.search("q", 5).await.unwrap_err());
    assert!(
        err.starts_with("unexpected response from searxng:"),
        "{err}"
    );
}

#[tokio::test]
async fn no_results_and_missing_fields_are_fine() {
    let server = MockServer::start().await;
    Mock::given(path("/search"))
        .and(query_param("q", "nothing"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "query": "nothing", "number_of_results": 0, "results": [],
            "answers": [], "corrections": [], "infoboxes": [], "suggestions": [],
            "unresponsive_engines": []
        })))
        .mount(&server)
        .await;
    Mock::given(path("/search"))
        .and(query_param("q", "odd"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "results": [
                {"title": "no url"},
                {"url": "https://x.example/", "title": 42, "content": null},
                "not an object"
            ]
        })))
        .mount(&server)
        .await;
    Mock::given(path("/search"))
        .and(query_param("q", "bare"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({})))
        .mount(&server)
        .await;
    let searx = SearxNg::new(&server.uri(), fast()).unwrap();
    assert_eq!(searx.search("nothing", 5).await.unwrap(), vec![]);
    assert_eq!(searx.search("bare", 5).await.unwrap(), vec![]);
    assert_eq!(
        searx.search("odd", 5).await.unwrap(),
        vec![SearchHit {
            title: "https://x.example/".into(),
            url: "https://x.example/".into(),
            snippet: String::new(),
        }]
    );
    assert_eq!(searx.search("odd", 0).await.unwrap(), vec![]);
}

#[tokio::test]
async fn a_slow_server_times_out() {
    let server = MockServer::start().await;
    Mock::given(path("/search"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(searxng_reply())
                .set_delay(Duration::from_secs(3)),
        )
        .mount(&server)
        .await;
    let searx = SearxNg::new(
        &server.uri(),
        fast().with_timeout(Duration::from_millis(200)),
    )
    .unwrap();
    let err = failed(searx.search("q", 5).await.unwrap_err());
    assert!(err.contains("did not answer within 200ms"), "{err}");
}

#[tokio::test]
async fn an_unreachable_instance_is_reported() {
    // A port nothing listens on any more.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let searx = SearxNg::new(&format!("http://user:pw@127.0.0.1:{port}"), fast()).unwrap();
    let err = failed(searx.search("q", 5).await.unwrap_err());
    assert!(
        err.starts_with(&format!(
            "could not connect to search provider searxng at http://127.0.0.1:{port}"
        )),
        "{err}"
    );
    assert!(!err.contains("pw"), "{err}");
    let shown = format!("{searx:?}");
    assert!(!shown.contains("pw"), "{shown}");
}
