//! End to end: the domain's `web_search` tool over a real provider and a local server.
#![allow(clippy::unwrap_used)]

mod support;

use std::sync::Arc;

use adapter_search::{Brave, SearxNg};
use domain::ports::{Tool, ToolContext};
use domain::tools::builtin::WebSearch;
use serde_json::json;
use support::*;
use wiremock::matchers::{path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn ctx() -> ToolContext {
    test_support::tool_context(&std::env::temp_dir(), "run_1")
}

#[tokio::test]
async fn web_search_over_searxng() {
    let server = MockServer::start().await;
    Mock::given(path("/search"))
        .and(query_param("q", "rust async runtime"))
        .and(query_param("format", "json"))
        .respond_with(ResponseTemplate::new(200).set_body_json(searxng_reply()))
        .expect(1)
        .mount(&server)
        .await;
    let tool = WebSearch::new(Arc::new(SearxNg::new(&server.uri(), fast()).unwrap()));
    let out = tool
        .execute(
            json!({"query": "rust async runtime", "max_results": 2}),
            &ctx(),
        )
        .await
        .unwrap();
    assert!(!out.is_error);
    assert_eq!(
        out.content,
        "Results for \"rust async runtime\" (searxng):\n\
         1. Tokio - An asynchronous Rust runtime\n   https://tokio.rs/\n   \
         Tokio is an asynchronous runtime for the Rust programming language. It provides the building blocks needed for writing network applications.\n\
         2. Asynchronous Programming in Rust — async book\n   https://rust-lang.github.io/async-book/\n   \
         Async & await: what's the deal?\n"
    );
}

#[tokio::test]
async fn web_search_failure_reaches_the_model_as_a_tool_error() {
    let server = MockServer::start().await;
    Mock::given(path("/res/v1/web/search"))
        .respond_with(ResponseTemplate::new(401))
        .mount(&server)
        .await;
    let brave = Brave::new(BRAVE_KEY, fast())
        .unwrap()
        .with_base_url(&server.uri())
        .unwrap();
    let tool = WebSearch::new(Arc::new(brave));
    let err = tool
        .execute(json!({"query": "anything"}), &ctx())
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "search provider brave rejected the API key (HTTP 401)"
    );
}
