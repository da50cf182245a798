//! `--ca-cert` for web search, against a real TLS server (`testdata/tls/`, its README): a
//! SearxNG behind a private CA answers once the CA is given, and is refused before.
#![allow(clippy::unwrap_used)]

mod support;

use adapter_search::{ConfigError, SearchConfig, SearxNg};
use domain::ports::SearchProvider;
use domain::ToolError;
use support::*;

#[path = "../../../testdata/tls/https_reply.rs"]
mod https_reply;
use https_reply::{https_reply, TLS_DIR};

#[tokio::test]
async fn a_searxng_behind_a_private_ca_answers_once_the_ca_is_given() {
    let Some(server) = https_reply(&searxng_reply()) else {
        return;
    };
    let url = format!("https://localhost:{}", server.port);
    let ca = std::fs::read(format!("{TLS_DIR}/ca.pem")).unwrap();

    let trusting = SearxNg::new(&url, fast().with_extra_root_certs(vec![ca.clone()])).unwrap();
    let hits = trusting.search("rust async runtime", 10).await.unwrap();
    assert_eq!(hits.len(), 3);
    assert_eq!(hits[0].url, "https://tokio.rs/");

    let refused = SearxNg::new(&url, fast()).unwrap();
    match refused.search("rust async runtime", 10).await {
        Err(ToolError::Failed(m)) => assert!(m.to_lowercase().contains("certificate"), "{m}"),
        other => panic!("expected a certificate failure, got {other:?}"),
    }

    // Through the configuration, as the application wires `--ca-cert`.
    let config = SearchConfig {
        searxng_url: Some(url),
        extra_root_certs: vec![ca],
        ..SearchConfig::default()
    };
    let provider = config.build().unwrap().unwrap();
    assert_eq!(
        provider
            .search("rust async runtime", 1)
            .await
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn a_ca_file_without_a_certificate_is_a_configuration_error() {
    let config = SearchConfig {
        searxng_url: Some("https://localhost:1".into()),
        extra_root_certs: vec![b"not a certificate".to_vec()],
        ..SearchConfig::default()
    };
    let Err(err) = config.build() else {
        panic!("a file without a certificate is refused");
    };
    assert!(matches!(err, ConfigError::InvalidCaCert(_)), "{err:?}");
}
