//! The API keys never show: not in `Debug`, errors, or log lines — even when a server echoes
//! them back.
#![allow(clippy::unwrap_used)]

mod support;

use adapter_search::{Brave, SearchConfig, Tavily};
use domain::ports::SearchProvider;
use serde_json::json;
use support::*;
use wiremock::matchers::path;
use wiremock::{Mock, MockServer, ResponseTemplate};

#[test]
fn debug_output_redacts_the_keys() {
    let brave = Brave::new(BRAVE_KEY, fast()).unwrap();
    let tavily = Tavily::new(TAVILY_KEY, fast()).unwrap();
    let config = SearchConfig::from_lookup(&|name| match name {
        "BRAVE_API_KEY" => Some(BRAVE_KEY.to_owned()),
        "TAVILY_API_KEY" => Some(TAVILY_KEY.to_owned()),
        "SEARXNG_URL" => Some("http://me:hunter2@localhost:8888".to_owned()),
        _ => None,
    })
    .unwrap();
    for shown in [
        format!("{brave:?}"),
        format!("{brave:#?}"),
        format!("{tavily:?}"),
        format!("{tavily:#?}"),
        format!("{config:?}"),
        format!("{config:#?}"),
    ] {
        assert!(!shown.contains(BRAVE_KEY), "{shown}");
        assert!(!shown.contains(TAVILY_KEY), "{shown}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("[REDACTED]"), "{shown}");
    }
    assert_eq!(brave.base_url(), "https://api.search.brave.com");
    assert_eq!(tavily.base_url(), "https://api.tavily.com");
}

#[tokio::test]
async fn logs_and_errors_never_contain_the_key() {
    let logs = Captured::default();
    let _guard = logs.install();

    let echo = |key: &str| json!({"detail": {"error": format!("bad key {key}")}});
    let server = MockServer::start().await;
    for (route, status) in [
        ("/401", 401),
        ("/429", 429),
        ("/500", 500),
        ("/400", 400),
        ("/200", 200),
    ] {
        for key in [BRAVE_KEY, TAVILY_KEY] {
            let body = if status == 200 {
                format!("not json {key}")
            } else {
                echo(key).to_string()
            };
            let brave_route = format!("{route}/res/v1/web/search");
            let tavily_route = format!("{route}/search");
            let route = if key == BRAVE_KEY {
                brave_route
            } else {
                tavily_route
            };
            Mock::given(path(route.as_str()))
                .respond_with(ResponseTemplate::new(status).set_body_string(body))
                .mount(&server)
                .await;
        }
    }

    let mut errors = Vec::new();
    for route in ["/401", "/429", "/500", "/400", "/200"] {
        let base = format!("{}{route}", server.uri());
        let brave = Brave::new(BRAVE_KEY, fast())
            .unwrap()
            .with_base_url(&base)
            .unwrap();
        let tavily = Tavily::new(TAVILY_KEY, fast())
            .unwrap()
            .with_base_url(&base)
            .unwrap();
        errors.push(brave.search("q", 3).await.unwrap_err().to_string());
        errors.push(tavily.search("q", 3).await.unwrap_err().to_string());
    }
    assert_eq!(errors.len(), 10);
    // The 400 and the garbage reply quote the server, scrubbed.
    assert!(
        errors.iter().any(|e| e.contains("bad key [REDACTED]")),
        "{errors:#?}"
    );
    let logs = logs.text();
    assert!(logs.contains("search failed"), "{logs}");
    for text in errors.iter().chain(std::iter::once(&logs)) {
        assert!(!text.contains(BRAVE_KEY), "{text}");
        assert!(!text.contains(TAVILY_KEY), "{text}");
    }
}
