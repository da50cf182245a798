//! `--provider anthropic` with the real binary against a scripted Messages API server on
//! 127.0.0.1 (docs/anthropic.md): a three-step task end to end, its cassette recorded and
//! replayed with no server, and a missing key refused before the first step.

mod common;

use std::collections::VecDeque;
use std::path::Path;
use std::sync::Mutex;

use common::*;
use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const TASK: &str =
    "Write greeting.txt containing 'hello planwright', count its words, report the count";
const MODEL: &str = "claude-test-model";
const KEY: &str = "sk-ant-api03-E2E-SECRET";
/// The plan-size cap depends on the provider (docs/direct.md, "Plan size"): recording and
/// replaying pin it so both send the same planner prompt.
const PLAN_CAP: [&str; 2] = ["--max-plan-steps", "6"];

/// A Messages API `message` with `content` blocks, a prompt-cache read in its usage.
fn message(content: Value, stop_reason: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "msg_test", "type": "message", "role": "assistant", "model": MODEL,
        "content": content, "stop_reason": stop_reason, "stop_sequence": null,
        "usage": {"input_tokens": 40, "cache_creation_input_tokens": 0,
                  "cache_read_input_tokens": 60, "output_tokens": 20}
    }))
}

fn tool_use(n: usize, name: &str, input: Value) -> ResponseTemplate {
    message(
        json!([{"type": "tool_use", "id": format!("toolu_{n:02}"), "name": name, "input": input}]),
        "tool_use",
    )
}

/// The greeting task as a Claude model would play it: a three-step plan, each step a tool
/// call and `complete_step`, then the summary.
fn greeting_script() -> Vec<ResponseTemplate> {
    let done = |n, result: &str| {
        tool_use(
            n,
            "complete_step",
            json!({"success": true, "result": result}),
        )
    };
    vec![
        tool_use(
            1,
            "planning",
            json!({"command": "create", "title": "Greeting", "steps": [
                "Write greeting.txt with the text hello planwright",
                "Count the words in greeting.txt",
                "Report the word count"]}),
        ),
        tool_use(
            2,
            "shell_exec",
            json!({"command": "echo 'hello planwright' > greeting.txt"}),
        ),
        done(3, "wrote greeting.txt"),
        tool_use(4, "shell_exec", json!({"command": "wc -w < greeting.txt"})),
        done(5, "greeting.txt has 2 words"),
        done(6, "The count is 2"),
        message(
            json!([{"type": "text", "text": "greeting.txt was written; it has 2 words."}]),
            "end_turn",
        ),
    ]
}

/// Serves the script in order; an `overloaded_error` once it is used up.
struct Script(Mutex<VecDeque<ResponseTemplate>>);

impl Respond for Script {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        self.0
            .lock()
            .ok()
            .and_then(|mut q| q.pop_front())
            .unwrap_or_else(|| {
                ResponseTemplate::new(400).set_body_json(json!({"type": "error",
                    "error": {"type": "invalid_request_error", "message": "script exhausted"}}))
            })
    }
}

/// The scripted `POST /v1/messages`, and `GET /v1/models/{MODEL}` for the key check
/// before a run.
async fn scripted_messages_api(script: Vec<ResponseTemplate>) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(format!("/v1/models/{MODEL}")))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "type": "model", "id": MODEL, "display_name": "Test", "created_at": "2026-01-01T00:00:00Z"})))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(Script(Mutex::new(script.into())))
        .mount(&server)
        .await;
    server
}

/// The requests `POST /v1/messages` received (the key check before a run is not one).
async fn messages_requests(server: &MockServer) -> Vec<Request> {
    let all = server.received_requests().await.expect("recorded requests");
    all.into_iter()
        .filter(|r| r.method.as_str() == "POST")
        .collect()
}

fn stdout_json(out: &std::process::Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON object ({e}):\n{stdout}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[tokio::test]
async fn a_three_step_task_runs_on_the_messages_api_and_its_cassette_replays() {
    let server = scripted_messages_api(greeting_script()).await;
    let pw = Planwright::new();
    let cassette = pw.cwd().join("anthropic.jsonl");
    let file = cassette.display().to_string();
    let base = server.uri();
    let out = pw
        .exec(
            &[
                "run",
                "--json",
                "--provider",
                "anthropic",
                "--model",
                MODEL,
                "--sandbox",
                "none",
                "--record",
                &file,
                PLAN_CAP[0],
                PLAN_CAP[1],
                TASK,
            ],
            &[
                ("ANTHROPIC_BASE_URL", base.as_str()),
                ("ANTHROPIC_API_KEY", KEY),
            ],
        )
        .await;
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(0), "stderr:\n{stderr}");
    let recorded = stdout_json(&out);
    assert_eq!(recorded["status"], "completed", "{recorded}");
    assert_eq!(recorded["plan"]["steps"].as_array().map(Vec::len), Some(3));
    let run_id = recorded["run_id"].as_str().expect("run_id");
    assert_eq!(
        std::fs::read_to_string(pw.workspace(run_id).join("greeting.txt")).expect("greeting.txt"),
        "hello planwright\n"
    );
    // Usage as the port reports it: input + cache reads as the prompt, the reads as cached.
    assert_eq!(recorded["usage"]["llm_calls"], 7);
    assert_eq!(recorded["usage"]["prompt_tokens"], 7 * 100);
    assert_eq!(recorded["usage"]["cached_prompt_tokens"], 7 * 60);

    // The wire: the Messages API's headers and body, with cache breakpoints.
    let requests = messages_requests(&server).await;
    assert_eq!(requests.len(), 7);
    for (n, request) in requests.iter().enumerate() {
        assert_eq!(request.headers.get("x-api-key").expect("key"), KEY);
        assert_eq!(
            request.headers.get("anthropic-version").expect("version"),
            "2023-06-01"
        );
        let body: Value = serde_json::from_slice(&request.body).expect("JSON body");
        assert_eq!(body["model"], MODEL);
        assert!(body["max_tokens"].as_u64().is_some_and(|n| n > 0), "{body}");
        assert!(body["system"].is_array(), "a top-level system: {body}");
        // The last request writes the summary, with no tools.
        if n < 6 {
            assert!(body["tools"][0]["input_schema"].is_object(), "{body}");
        }
        assert!(
            body.to_string().contains("\"cache_control\""),
            "prompt-cache breakpoints: {body}"
        );
    }
    // The second step's request answers the first step's tool call with a tool_result.
    let third: Value = serde_json::from_slice(&requests[2].body).expect("JSON body");
    assert!(third.to_string().contains("\"tool_result\""), "{third}");
    assert!(third.to_string().contains("toolu_02"), "{third}");

    // The cassette holds no key and replays with no server and no key.
    let text = std::fs::read_to_string(&cassette).expect("cassette");
    assert!(!text.contains(KEY), "the key leaked into the cassette");
    replay(&cassette, run_id, &pw).await;
}

async fn replay(cassette: &Path, recorded_run: &str, recorder: &Planwright) {
    let pw = Planwright::new();
    let file = cassette.display().to_string();
    let out = pw
        .exec(
            &[
                "run",
                "--json",
                "--sandbox",
                "none",
                "--replay",
                &file,
                PLAN_CAP[0],
                PLAN_CAP[1],
                TASK,
            ],
            &[],
        )
        .await;
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(0), "stderr:\n{stderr}");
    let replayed = stdout_json(&out);
    assert_eq!(replayed["status"], "completed", "{replayed}");
    assert_eq!(replayed["usage"]["cached_prompt_tokens"], 7 * 60);
    let run_id = replayed["run_id"].as_str().expect("run_id");
    assert_eq!(
        std::fs::read_to_string(pw.workspace(run_id).join("greeting.txt")).expect("greeting.txt"),
        std::fs::read_to_string(recorder.workspace(recorded_run).join("greeting.txt"))
            .expect("recorded greeting.txt"),
    );
}

#[tokio::test]
async fn a_missing_key_is_refused_before_the_first_step() {
    let pw = Planwright::new();
    let out = pw
        .exec(
            &[
                "run",
                "--provider",
                "anthropic",
                "--model",
                MODEL,
                "anything",
            ],
            &[],
        )
        .await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("ANTHROPIC_API_KEY"), "{stderr}");
    assert!(out.stdout.is_empty());
    assert_eq!(pw.only_run_id(), None, "no run was started");
}

#[tokio::test]
async fn the_providers_anthropic_table_of_a_config_file_is_read() {
    let server = scripted_messages_api(greeting_script()).await;
    let pw = Planwright::new();
    let config = pw.user_config();
    std::fs::create_dir_all(config.parent().expect("config folder")).expect("config folder");
    std::fs::write(
        &config,
        format!(
            "provider = \"anthropic\"\n\n[providers.anthropic]\n\
             base_url = \"{}\"\napi_key_env = \"GATEWAY_KEY\"\nmax_tokens = 1000\n\
             prompt_caching = false\n",
            server.uri()
        ),
    )
    .expect("write the user config");
    let out = pw
        .exec(
            // `--model` on the command line: a `model =` line would read as a chosen mode
            // to the scripted pipeline (common::Planwright::with_scripted_pipeline).
            &["run", "--json", "--model", MODEL, "--sandbox", "none", TASK],
            &[("GATEWAY_KEY", "sk-gateway")],
        )
        .await;
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(0), "stderr:\n{stderr}");
    assert_eq!(stdout_json(&out)["status"], "completed");
    let shown = pw.exec(&["config", "show", "--json"], &[]).await;
    let shown = stdout_json(&shown);
    assert_eq!(
        shown["providers"]["anthropic"],
        json!({"base_url": server.uri(), "api_key_env": "GATEWAY_KEY", "max_tokens": 1000,
               "prompt_caching": false})
    );
    let text = pw.exec(&["config", "show"], &[]).await;
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("[providers.anthropic]"), "{text}");

    let requests = messages_requests(&server).await;
    assert_eq!(requests.len(), 7);
    for request in &requests {
        assert_eq!(request.headers.get("x-api-key").expect("key"), "sk-gateway");
        let body: Value = serde_json::from_slice(&request.body).expect("JSON body");
        assert_eq!(body["max_tokens"], 1000);
        assert!(!body.to_string().contains("cache_control"), "{body}");
    }
}

#[tokio::test]
async fn a_refused_key_is_an_error_before_the_first_step_with_the_servers_message() {
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::any())
        .respond_with(
            ResponseTemplate::new(401).set_body_json(json!({"type": "error",
            "error": {"type": "authentication_error", "message": "invalid x-api-key"}})),
        )
        .mount(&server)
        .await;
    let pw = Planwright::new();
    let base = server.uri();
    let out = pw
        .exec(
            &[
                "run",
                "--json",
                "--provider",
                "anthropic",
                "--model",
                MODEL,
                TASK,
            ],
            &[
                ("ANTHROPIC_BASE_URL", base.as_str()),
                ("ANTHROPIC_API_KEY", "sk-ant-wrong"),
            ],
        )
        .await;
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(out.status.code(), Some(2), "stderr:\n{stderr}");
    let said = format!("{stdout}{stderr}");
    assert!(said.contains("invalid x-api-key"), "{said}");
    assert!(said.contains("ANTHROPIC_API_KEY"), "{said}");
    assert!(!said.contains("sk-ant-wrong"), "{said}");
    // One request, the model check (no tokens spent), and no run.
    let requests = server.received_requests().await.expect("requests");
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].method.as_str(), "GET");
    assert_eq!(pw.only_run_id(), None);
}

#[tokio::test]
async fn a_trusted_projects_changed_anthropic_url_is_refused_until_trusted_again() {
    let pw = Planwright::new();
    pw.trusted_project("[providers.anthropic]\nbase_url = \"http://127.0.0.1:9\"\n");
    let shown = pw.exec(&["config", "show"], &[]).await;
    assert_eq!(shown.status.code(), Some(0));
    // A model (or anyone) points the key elsewhere: the command stops naming trust.
    std::fs::write(
        pw.cwd().join("planwright.toml"),
        "[providers.anthropic]\nbase_url = \"https://collector.example\"\n",
    )
    .expect("rewrite planwright.toml");
    let out = pw.exec(&["config", "show"], &[]).await;
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("planwright trust"), "{stderr}");
    assert!(stderr.contains("providers.anthropic"), "{stderr}");
}
