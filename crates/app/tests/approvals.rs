//! Approvals end to end (docs/approvals.md): `--approval read-only` refuses a shell command
//! and the run goes on; `--approval ask` with nobody at a terminal refuses with the reason;
//! a malformed rule is a usage error; `planwright serve` announces a call waiting for
//! approval and takes the decision over HTTP.

mod common;

use common::*;
use reqwest::StatusCode;
use serde_json::json;

const TOKEN: &str = "test-token-0123456789";

/// The outputs the model read back for its tool calls, from the run's events.
fn tool_outputs(pw: &Planwright, run_id: &str) -> Vec<String> {
    pw.events(run_id)
        .into_iter()
        .filter(|(_, kind, _)| kind == "tool_called")
        .map(|(_, _, e)| e["output"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn touch_script() -> Vec<wiremock::ResponseTemplate> {
    vec![
        plan(&["Create a.txt"]),
        call("shell_exec", json!({"command": "touch a.txt"})),
        // Nothing was done: a success claim would be refused (docs/direct.md, "Bad input").
        complete(false, "the shell was refused"),
        text("a.txt could not be created."),
    ]
}

#[tokio::test]
async fn a_read_only_run_refuses_a_shell_command_and_goes_on() {
    let llm = ScriptedOpenAi::start(touch_script()).await;
    let pw = Planwright::new();
    let res = pw
        .run(
            &llm,
            "create a.txt",
            &[
                "--approval",
                "read-only",
                "--retries",
                "0",
                "--max-revisions",
                "0",
            ],
        )
        .await;
    let run_id = res.json["run_id"].as_str().expect("run_id").to_string();
    assert!(!pw.workspace(&run_id).join("a.txt").exists(), "never ran");
    let outputs = tool_outputs(&pw, &run_id);
    assert!(outputs[0].contains("read-only"), "{outputs:?}");
    assert_eq!(
        llm.requests().await.len(),
        4,
        "the run went on to its summary"
    );
}

#[tokio::test]
async fn ask_mode_with_nobody_at_a_terminal_refuses_with_the_reason() {
    let llm = ScriptedOpenAi::start(touch_script()).await;
    let pw = Planwright::new();
    let res = pw
        .run(
            &llm,
            "create a.txt",
            &[
                "--approval",
                "ask",
                "--retries",
                "0",
                "--max-revisions",
                "0",
            ],
        )
        .await;
    let run_id = res.json["run_id"].as_str().expect("run_id").to_string();
    assert!(!pw.workspace(&run_id).join("a.txt").exists());
    let outputs = tool_outputs(&pw, &run_id);
    assert!(
        outputs[0].contains("needs a person's approval")
            && outputs[0].contains("not an interactive terminal"),
        "{outputs:?}"
    );
}

#[tokio::test]
async fn a_malformed_rule_is_a_usage_error() {
    let pw = Planwright::new();
    let out = pw
        .exec(
            &["run", "--deny", "shell_exec(rm -rf*", "a task"],
            &[("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")],
        )
        .await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("approval rule"), "{stderr}");
}

#[tokio::test]
async fn serve_announces_a_call_waiting_for_approval_and_takes_the_decision() {
    let llm = ScriptedOpenAi::start(vec![
        plan(&["Create a.txt"]),
        call("shell_exec", json!({"command": "touch a.txt"})),
        complete(true, "created a.txt"),
        text("a.txt exists."),
    ])
    .await;
    let pw = Planwright::new();
    let server = pw
        .serve(&llm.base_url(), Some(TOKEN), &["--approval", "ask"])
        .await;
    let (_, body) = create(&server, json!({"task": "create a.txt"})).await;
    let run_id = body["run_id"].as_str().expect("run_id").to_string();
    let mut stream = events(&server, &run_id, None).await;
    let requested = loop {
        let e = stream.next().await.expect("an event");
        if e.event == "approval_requested" {
            break e;
        }
    };
    assert_eq!(requested.data["tool"], "shell_exec");
    let call_id = requested.data["call_id"]
        .as_str()
        .expect("call_id")
        .to_string();
    // The server registers the request a moment after the event.
    let mut pending = serde_json::Value::Null;
    for _ in 0..200 {
        pending =
            get_json(&server, &format!("/v1/runs/{run_id}")).await.1["pending_approval"].clone();
        if pending == call_id.as_str() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert_eq!(pending, call_id.as_str(), "GET shows the pending call");
    let path = format!("/v1/runs/{run_id}/approvals/{call_id}");
    let (status, err) = post_json(&server, &path, json!({"decision": "maybe"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
    let (status, _) = post_json(
        &server,
        &format!("/v1/runs/{run_id}/approvals/call_other"),
        json!({"decision": "approve"}),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT, "another call is not waiting");
    let (status, body) = post_json(&server, &path, json!({"decision": "approve"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let rest = stream.collect(30).await;
    let decided = rest
        .iter()
        .find(|e| e.event == "approval_decided")
        .expect("approval_decided");
    assert_eq!(decided.data["decision"], "approve");
    assert_eq!(rest.last().map(|e| e.event.as_str()), Some("run_completed"));
    assert!(pw.workspace(&run_id).join("a.txt").exists(), "the call ran");
}
