//! The browser's address policy through the binary (docs/security.md, "The browser"): by
//! default `browser_navigate` cannot reach a service on this machine (here the scripted
//! LLM endpoint on 127.0.0.1, standing in for `planwright serve`'s own port); with
//! `--browser-allow-local` it can. Real headless Chromium: skipped without it, except under
//! `CI=true`, where that fails.

mod common;

use std::path::PathBuf;

use common::*;
use serde_json::json;

fn chromium_or_skip() -> Option<PathBuf> {
    let found = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.is_file());
    test_support::require_or_skip(found.ok_or("no chromium (apt-get install -y chromium)"))
}

/// Runs a one-step task whose executor opens a local server's `/v1/health`; returns what
/// the browser told the model.
async fn open_the_local_endpoint(extra: &[&str]) -> String {
    let Some(chromium) = chromium_or_skip() else {
        return String::new();
    };
    let local = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::path("/v1/health"))
        .respond_with(wiremock::ResponseTemplate::new(200).set_body_string("ok"))
        .mount(&local)
        .await;
    let url = format!("{}/v1/health", local.uri());
    let server = ScriptedOpenAi::start(vec![
        plan(&["Open the page in the browser"]),
        call("browser_navigate", json!({"url": url})),
        // A call that succeeds either way, so the step may claim success.
        call("browser_view", json!({})),
        complete(true, "looked at the page"),
        text("Done."),
    ])
    .await;
    let pw = Planwright::new();
    let chromium = chromium.display().to_string();
    let mut args = vec!["--chromium", chromium.as_str()];
    args.extend_from_slice(extra);
    let task = format!("Open {url} in the browser");
    let res = pw.run(&server, &task, &args).await;
    assert_eq!(res.code(), 0, "{}", res.stderr());
    let reqs = server.requests().await;
    tool_messages(&reqs[2]).join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_browser_cannot_reach_this_machine_unless_allowed() {
    let refused = open_the_local_endpoint(&[]).await;
    if refused.is_empty() {
        return;
    }
    assert!(refused.contains("loopback"), "{refused}");
    assert!(refused.contains("--browser-allow-local"), "{refused}");

    let allowed = open_the_local_endpoint(&["--browser-allow-local"]).await;
    assert!(!allowed.contains("loopback"), "{allowed}");
    assert!(allowed.contains("URL: http://127.0.0.1:"), "{allowed}");
}
