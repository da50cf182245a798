//! Prometheus `/metrics` on `planwright serve` (behind the token unless `--metrics-public`)
//! and on a worker's `--metrics-addr`, after a scripted 3-step run: the counters say what
//! happened, and the whole exposition passes `promtool check metrics` (Debian's
//! `prometheus` package; without it the lint is skipped on a laptop and fails under
//! `CI=true`).

mod common;

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;
use serde_json::json;

const TOKEN: &str = "test-token-0123456789";

/// `promtool check metrics` on `text`: `Some(problems)` when it complains, `None` when clean;
/// the test skips the lint (or fails under CI) when promtool is missing.
fn promtool_problems(text: &str) -> Option<Option<String>> {
    let child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("promtool is not installed (apt-get install prometheus): {e}"));
    let mut child = test_support::require_or_skip(child)?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(text.as_bytes()).expect("write to promtool");
    }
    let out = child.wait_with_output().expect("promtool runs");
    Some(if out.status.success() {
        None
    } else {
        Some(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    })
}

fn value(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("no {series} in:\n{text}"))
}

#[tokio::test]
async fn serve_exposes_the_runs_metrics_behind_its_token_and_promtool_accepts_them() {
    let llm = ScriptedOpenAi::start(greeting_script(false)).await;
    let pw = Planwright::new();
    let server = pw
        .serve(&llm.base_url(), Some(TOKEN), &["--model", "test-model"])
        .await;
    let (status, body) = create(
        &server,
        json!({"task": "Write greeting.txt and count its words"}),
    )
    .await;
    assert_eq!(status.as_u16(), 201, "{body}");
    let run_id = body["run_id"].as_str().expect("run id").to_string();
    until_completed(&server, &[run_id], 60).await;

    let anonymous = client()
        .get(server.url("/metrics"))
        .send()
        .await
        .expect("GET");
    assert_eq!(anonymous.status().as_u16(), 401, "behind the token");
    let response = client()
        .get(server.url("/metrics"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .expect("GET /metrics");
    assert_eq!(response.status().as_u16(), 200);
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        content_type.starts_with("text/plain; version=0.0.4"),
        "{content_type}"
    );
    let text = response.text().await.expect("body");

    assert_eq!(
        value(&text, "planwright_runs_started_total{mode=\"flow\"}"),
        1.0
    );
    assert_eq!(
        value(
            &text,
            "planwright_runs_finished_total{status=\"completed\",mode=\"flow\"}"
        ),
        1.0
    );
    assert_eq!(
        value(
            &text,
            "planwright_steps_finished_total{outcome=\"completed\"}"
        ),
        3.0
    );
    let llm_labels = "provider=\"openai\",model=\"test-model\"";
    assert_eq!(
        value(
            &text,
            &format!("planwright_llm_calls_total{{{llm_labels},outcome=\"ok\"}}")
        ),
        7.0
    );
    assert_eq!(
        value(
            &text,
            &format!("planwright_llm_tokens_total{{{llm_labels},kind=\"input\"}}")
        ),
        700.0
    );
    assert_eq!(
        value(
            &text,
            &format!("planwright_llm_tokens_total{{{llm_labels},kind=\"cached_input\"}}")
        ),
        448.0
    );
    assert_eq!(
        value(
            &text,
            &format!("planwright_llm_call_duration_seconds_count{{{llm_labels}}}")
        ),
        7.0
    );
    assert_eq!(
        value(
            &text,
            "planwright_tool_calls_total{tool=\"shell_exec\",outcome=\"ok\"}"
        ),
        2.0
    );
    assert_eq!(value(&text, "planwright_queue_claims_total"), 1.0);
    assert_eq!(value(&text, "planwright_queue_depth"), 0.0);
    assert_eq!(value(&text, "planwright_active_runs"), 0.0);
    assert!(!text.contains("greeting.txt"), "no task text in labels");

    if let Some(problems) = promtool_problems(&text) {
        assert_eq!(problems, None, "promtool check metrics:\n{text}");
    }
}

#[tokio::test]
async fn metrics_public_serves_them_without_the_token() {
    let llm = ScriptedOpenAi::start(Vec::new()).await;
    let pw = Planwright::new();
    let server = pw
        .serve(&llm.base_url(), Some(TOKEN), &["--metrics-public"])
        .await;
    let response = client()
        .get(server.url("/metrics"))
        .send()
        .await
        .expect("GET");
    assert_eq!(response.status().as_u16(), 200);
    let text = response.text().await.expect("body");
    assert!(
        text.contains("# TYPE planwright_queue_depth gauge"),
        "{text}"
    );
    // The API itself still wants the token.
    let api = client()
        .get(server.url("/v1/runs"))
        .send()
        .await
        .expect("GET");
    assert_eq!(api.status().as_u16(), 401);
}

#[tokio::test]
async fn a_worker_serves_metrics_on_its_metrics_addr() {
    let llm = ScriptedOpenAi::start(Vec::new()).await;
    let pw = Planwright::new();
    let (_worker, log) = logged_worker(&pw, &llm.base_url(), &["--metrics-addr", "127.0.0.1:0"]);
    log.wait_for("metrics on http://", 30).await;
    let line = log
        .text()
        .lines()
        .find_map(|l| {
            l.split_once("metrics on ")
                .map(|(_, url)| url.trim().to_string())
        })
        .expect("the metrics address");
    let response = tokio::time::timeout(Duration::from_secs(30), client().get(&line).send())
        .await
        .expect("in time")
        .expect("GET");
    assert_eq!(response.status().as_u16(), 200);
    let text = response.text().await.expect("body");
    assert!(
        text.contains("# TYPE planwright_runs_started_total counter"),
        "{text}"
    );
    if let Some(problems) = promtool_problems(&text) {
        assert_eq!(problems, None, "promtool check metrics:\n{text}");
    }
}
