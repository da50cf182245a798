//! The `planwright serve` API as tests use it (reqwest on 127.0.0.1), the `planwright
//! worker` process, and a scripted LLM any number of runs can share.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};

use super::*;

pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .expect("client")
}

pub async fn create(server: &Server, body: Value) -> (StatusCode, Value) {
    let res = client()
        .post(server.url("/v1/runs"))
        .bearer_auth(&server.token)
        .json(&body)
        .send()
        .await
        .expect("POST /v1/runs");
    let status = res.status();
    (status, res.json().await.expect("json"))
}

pub async fn get_json(server: &Server, path: &str) -> (StatusCode, Value) {
    let res = client()
        .get(server.url(path))
        .bearer_auth(&server.token)
        .send()
        .await
        .expect("GET");
    let status = res.status();
    (status, res.json().await.unwrap_or(Value::Null))
}

pub async fn post_json(server: &Server, path: &str, body: Value) -> (StatusCode, Value) {
    let res = client()
        .post(server.url(path))
        .bearer_auth(&server.token)
        .json(&body)
        .send()
        .await
        .expect("POST");
    let status = res.status();
    (status, res.json().await.unwrap_or(Value::Null))
}

pub async fn events(server: &Server, run_id: &str, last_event_id: Option<u64>) -> SseReader {
    let mut req = client()
        .get(server.url(&format!("/v1/runs/{run_id}/events")))
        .bearer_auth(&server.token);
    if let Some(id) = last_event_id {
        req = req.header("Last-Event-ID", id.to_string());
    }
    let res = req.send().await.expect("GET events");
    assert_eq!(res.status(), StatusCode::OK);
    assert!(res
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .starts_with("text/event-stream"));
    SseReader::new(res)
}

pub async fn status_of(server: &Server, run_id: &str) -> String {
    let (_, show) = get_json(server, &format!("/v1/runs/{run_id}")).await;
    show["status"].as_str().unwrap_or_default().to_string()
}

/// The run's status once it is `want` (the record is closed just after the final event),
/// or the last one seen after 5 s.
pub async fn status_once(server: &Server, run_id: &str, want: &str) -> String {
    let mut status = status_of(server, run_id).await;
    for _ in 0..50 {
        if status == want {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        status = status_of(server, run_id).await;
    }
    status
}

/// Answers by what is asked, so any number of runs can share it in any order: a one-step
/// plan; the step appends "done" to done.txt, then completes; then a summary. After an
/// append whose outcome was lost (the server died during it), it checks before appending.
pub struct AppendOnce;

impl wiremock::Respond for AppendOnce {
    fn respond(&self, request: &wiremock::Request) -> wiremock::ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let offered = |name: &str| {
            body["tools"]
                .as_array()
                .is_some_and(|ts| ts.iter().any(|t| t["function"]["name"] == name))
        };
        let turns = body["messages"].as_array().map_or(0, |ms| {
            ms.iter().filter(|m| m["role"] == "assistant").count()
        });
        let last_tool = body["messages"]
            .as_array()
            .and_then(|ms| ms.iter().rev().find(|m| m["role"] == "tool"))
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default()
            .to_string();
        let reply = if offered("planning") {
            plan(&["Append done to done.txt"])
        } else if last_tool.contains("Interrupted, outcome unknown") {
            // The server was killed during the append: check before doing it again.
            call(
                "shell_exec",
                json!({"command": "grep -qx done done.txt || echo done >> done.txt"}),
            )
        } else if offered("complete_step") && turns == 0 {
            call(
                "shell_exec",
                json!({"command": "echo done >> done.txt && sleep 1"}),
            )
        } else if offered("complete_step") {
            complete(true, "appended")
        } else {
            text("done.txt holds done.")
        };
        reply.set_delay(Duration::from_millis(200))
    }
}

/// `planwright worker`s started with the test's LLM (killed when dropped).
pub fn worker(pw: &Planwright, base: &str, args: &[&str]) -> tokio::process::Child {
    logged_worker(pw, base, args).0
}

/// As [`worker`], keeping its stderr (warnings and errors).
pub fn logged_worker(pw: &Planwright, base: &str, args: &[&str]) -> (tokio::process::Child, Log) {
    let mut all = vec!["worker", "--retries", "0"];
    all.extend_from_slice(args);
    pw.spawn_logged(
        &all,
        &[
            ("OPENAI_BASE_URL", base),
            ("OPENAI_API_KEY", "sk-test-secret"),
        ],
    )
}

/// Waits until every run is `completed` (`planwright serve` answers from the store).
pub async fn until_completed(server: &Server, ids: &[String], secs: u64) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
    for id in ids {
        loop {
            let status = status_of(server, id).await;
            if status == "completed" {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "run {id} is {status}; server stderr:\n{}",
                server.stderr_text()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// The effect of an [`AppendOnce`] run happened exactly once: its done.txt holds one line.
pub fn assert_appended_once(pw: &Planwright, run_id: &str) {
    let done = std::fs::read_to_string(pw.workspace(run_id).join("done.txt")).expect("done.txt");
    assert_eq!(done, "done\n", "run {run_id}: the effect happened once");
}

/// A scripted LLM server answering as [`AppendOnce`], and its `/v1` base URL (keep the
/// server alive for the test).
pub async fn append_once_llm() -> (wiremock::MockServer, String) {
    let llm = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(AppendOnce)
        .mount(&llm)
        .await;
    let base = format!("{}/v1", llm.uri());
    (llm, base)
}

/// Answers the question run `run_id` waits on (its `waiting_for_user` event came): the
/// server registers the question a moment after the event, and says 409 until then.
pub async fn reply_when_asked(server: &Server, run_id: &str, answer: &str) {
    for _ in 0..100 {
        let (status, body) = post_json(
            server,
            &format!("/v1/runs/{run_id}/reply"),
            json!({"answer": answer}),
        )
        .await;
        if status == StatusCode::OK {
            return;
        }
        assert_eq!(status, StatusCode::CONFLICT, "{body}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("run {run_id} never took the answer");
}

/// Follows run `run_id`'s event stream until an event of type `kind` (from the start).
pub async fn until_event(server: &Server, run_id: &str, kind: &str) {
    let mut stream = events(server, run_id, None).await;
    loop {
        let e = stream.next().await.expect("an event");
        if e.event == kind {
            return;
        }
    }
}
