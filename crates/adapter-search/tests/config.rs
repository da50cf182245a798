//! Choosing a provider from the environment (through a lookup, never the process
//! environment) or a config file section.
#![allow(clippy::unwrap_used)]

mod support;

use std::collections::HashMap;
use std::time::Duration;

use adapter_search::{
    describe_config_from, provider_from_lookup, ConfigError, SearchConfig, DEFAULT_TIMEOUT,
};
use support::*;
use wiremock::matchers::{path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A lookup over `vars`.
fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |name: &str| map.get(name).cloned()
}

/// The chosen provider's name, `None` when there is none.
fn chosen(vars: &[(&str, &str)]) -> Result<Option<String>, ConfigError> {
    Ok(provider_from_lookup(&env(vars))?.map(|p| p.name().to_owned()))
}

const ALL: [(&str, &str); 3] = [
    ("SEARXNG_URL", "http://localhost:8888"),
    ("BRAVE_API_KEY", BRAVE_KEY),
    ("TAVILY_API_KEY", TAVILY_KEY),
];

#[test]
fn nothing_configured_means_no_provider() {
    assert_eq!(chosen(&[]).unwrap(), None);
    // Blank values count as unset.
    assert_eq!(
        chosen(&[
            ("SEARXNG_URL", "  "),
            ("BRAVE_API_KEY", ""),
            ("PLANWRIGHT_SEARCH", " ")
        ])
        .unwrap(),
        None
    );
    assert_eq!(
        describe_config_from(&env(&[])),
        "web_search: not offered (no search provider: set SEARXNG_URL, BRAVE_API_KEY or TAVILY_API_KEY)"
    );
}

#[test]
fn each_provider_alone_is_picked() {
    assert_eq!(
        chosen(&[("SEARXNG_URL", "http://localhost:8888")]).unwrap(),
        Some("searxng".into())
    );
    assert_eq!(
        chosen(&[("BRAVE_API_KEY", BRAVE_KEY)]).unwrap(),
        Some("brave".into())
    );
    assert_eq!(
        chosen(&[("BRAVE_SEARCH_API_KEY", BRAVE_KEY)]).unwrap(),
        Some("brave".into())
    );
    assert_eq!(
        chosen(&[("TAVILY_API_KEY", TAVILY_KEY)]).unwrap(),
        Some("tavily".into())
    );
}

#[test]
fn precedence_is_searxng_then_tavily_then_brave() {
    assert_eq!(chosen(&ALL).unwrap(), Some("searxng".into()));
    assert_eq!(
        chosen(&[("BRAVE_API_KEY", BRAVE_KEY), ("TAVILY_API_KEY", TAVILY_KEY)]).unwrap(),
        Some("tavily".into())
    );
    let line = describe_config_from(&env(&ALL));
    assert_eq!(
        line,
        "web_search: offered via searxng (SEARXNG_URL=http://localhost:8888; the first configured of searxng, tavily, brave: set PLANWRIGHT_SEARCH to choose)"
    );
}

#[test]
fn an_explicit_choice_wins() {
    for (choice, name) in [
        ("brave", "brave"),
        ("Tavily", "tavily"),
        (" searxng ", "searxng"),
    ] {
        let mut vars = ALL.to_vec();
        vars.push(("PLANWRIGHT_SEARCH", choice));
        assert_eq!(chosen(&vars).unwrap(), Some(name.into()), "{choice}");
    }
    let mut vars = ALL.to_vec();
    vars.push(("PLANWRIGHT_SEARCH", "brave"));
    let line = describe_config_from(&env(&vars));
    assert_eq!(
        line,
        "web_search: offered via brave (Brave API key set; chosen by PLANWRIGHT_SEARCH)"
    );
    assert!(!line.contains(BRAVE_KEY));
}

#[test]
fn an_explicit_choice_without_its_setting_is_an_error() {
    for (choice, setting) in [
        ("searxng", "SEARXNG_URL"),
        ("brave", "BRAVE_API_KEY"),
        ("tavily", "TAVILY_API_KEY"),
    ] {
        let vars = [
            ("PLANWRIGHT_SEARCH", choice),
            // Another provider is configured, but not the one asked for.
            if choice == "searxng" {
                ("TAVILY_API_KEY", TAVILY_KEY)
            } else {
                ("SEARXNG_URL", "http://localhost:8888")
            },
        ];
        let err = chosen(&vars).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("PLANWRIGHT_SEARCH={choice} but {setting} is not set")
        );
        assert_eq!(
            describe_config_from(&env(&vars)),
            format!(
                "web_search: not offered (PLANWRIGHT_SEARCH={choice} but {setting} is not set)"
            )
        );
    }
}

#[test]
fn none_turns_search_off_and_unknown_names_are_refused() {
    let mut vars = ALL.to_vec();
    vars.push(("PLANWRIGHT_SEARCH", "none"));
    assert_eq!(chosen(&vars).unwrap(), None);
    assert_eq!(
        describe_config_from(&env(&vars)),
        "web_search: not offered (turned off by PLANWRIGHT_SEARCH=none)"
    );
    let err = chosen(&[("PLANWRIGHT_SEARCH", "google")]).unwrap_err();
    assert_eq!(err, ConfigError::UnknownProvider("google".into()));
    assert!(
        err.to_string().contains("searxng, brave, tavily or none"),
        "{err}"
    );
}

#[test]
fn bad_settings_are_errors() {
    let err = chosen(&[("SEARXNG_URL", "localhost:8888")]).unwrap_err();
    assert!(matches!(err, ConfigError::InvalidUrl { .. }), "{err:?}");
    assert!(err.to_string().contains("SEARXNG_URL"), "{err}");

    let err = chosen(&[("TAVILY_API_KEY", "tvly-bad\u{7f}key")]).unwrap_err();
    assert_eq!(err, ConfigError::InvalidKey { provider: "tavily" });
    assert!(!err.to_string().contains("tvly-bad"), "{err}");

    for bad in ["0", "-3", "soon", "inf"] {
        let err = chosen(&[
            ("SEARXNG_URL", "http://h"),
            ("PLANWRIGHT_SEARCH_TIMEOUT", bad),
        ])
        .unwrap_err();
        assert!(
            matches!(err, ConfigError::InvalidTimeout(_)),
            "{bad}: {err:?}"
        );
    }
    let line = describe_config_from(&env(&[("PLANWRIGHT_SEARCH_TIMEOUT", "soon")]));
    assert!(
        line.starts_with("web_search: not offered (invalid search timeout 'soon'"),
        "{line}"
    );
}

#[test]
fn the_timeout_is_read() {
    let config = SearchConfig::from_lookup(&env(&[("PLANWRIGHT_SEARCH_TIMEOUT", "2.5")])).unwrap();
    assert_eq!(
        config.options().unwrap().timeout,
        Duration::from_millis(2500)
    );
    let config = SearchConfig::from_lookup(&env(&[])).unwrap();
    assert_eq!(config.options().unwrap().timeout, DEFAULT_TIMEOUT);
    assert_eq!(DEFAULT_TIMEOUT, Duration::from_secs(20));
}

#[test]
fn describe_hides_url_credentials() {
    let line = describe_config_from(&env(&[(
        "SEARXNG_URL",
        "https://me:hunter2@search.example/",
    )]));
    assert_eq!(
        line,
        "web_search: offered via searxng (SEARXNG_URL=https://search.example)"
    );
}

#[tokio::test]
async fn the_configured_searxng_url_is_the_one_searched() {
    let server = MockServer::start().await;
    Mock::given(path("/search"))
        .and(query_param("format", "json"))
        .respond_with(ResponseTemplate::new(200).set_body_json(searxng_reply()))
        .expect(1)
        .mount(&server)
        .await;
    let provider = provider_from_lookup(&env(&[("SEARXNG_URL", &server.uri())]))
        .unwrap()
        .unwrap();
    assert_eq!(provider.search("rust", 5).await.unwrap().len(), 3);
}

#[tokio::test]
async fn a_config_file_section_works_too() {
    let server = MockServer::start().await;
    Mock::given(path("/res/v1/web/search"))
        .respond_with(ResponseTemplate::new(200).set_body_json(brave_reply()))
        .expect(1)
        .mount(&server)
        .await;
    let config: SearchConfig = serde_json::from_value(serde_json::json!({
        "provider": "brave",
        "brave_api_key": BRAVE_KEY,
        "brave_base_url": server.uri(),
        "timeout_secs": 5
    }))
    .unwrap();
    let shown = format!("{config:?}");
    assert!(!shown.contains(BRAVE_KEY), "{shown}");
    let provider = config.build().unwrap().unwrap();
    assert_eq!(provider.name(), "brave");
    assert_eq!(provider.search("rust", 2).await.unwrap().len(), 2);

    let unknown = serde_json::from_value::<SearchConfig>(serde_json::json!({"engine": "x"}));
    assert!(unknown.is_err(), "unknown keys are refused");
}
