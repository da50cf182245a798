//! Planwright as an MCP server, driven by the official MCP Python SDK (`mcp` on PyPI, pinned
//! below) as the client: `planwright mcp serve` over stdio and `/mcp` on `planwright serve`
//! over streamable HTTP, against the scripted OpenAI server. The client scenarios are the
//! scripts in `tests/mcp_client/`; each prints one JSON object that the tests check.
//!
//! The SDK is installed once in a virtual environment under the target folder. Without
//! python3, venv or PyPI the tests skip, except with `CI=true`, where they fail.

mod common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use common::*;
use serde_json::{json, Value};

/// The SDK the scenarios are written for.
const MCP_SDK: &str = "mcp==2.3.0";

const TOKEN: &str = "test-token-0123456789";

/// The venv's python, installed on first use; `None` (the test skips) when it cannot be
/// made outside CI.
fn python() -> Option<PathBuf> {
    static VENV: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    test_support::require_or_skip(
        VENV.get_or_init(prepare_venv)
            .clone()
            .map_err(|why| format!("the MCP Python SDK is not available ({why})")),
    )
}

fn prepare_venv() -> Result<PathBuf, String> {
    test_support::pip_venv(
        Path::new(env!("CARGO_TARGET_TMPDIR")),
        "mcp-python",
        MCP_SDK,
    )
}

/// Runs the scenario `script` (in tests/mcp_client/) with `args`, in the test's folder, and
/// returns what it printed.
async fn scenario(
    python: &Path,
    pw: &Planwright,
    llm: &ScriptedOpenAi,
    script: &str,
    args: &[&str],
) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("mcp_client")
        .join(script);
    let mut cmd = tokio::process::Command::new(python);
    cmd.arg("-u").arg(&path).args(args).current_dir(pw.cwd());
    // The stdio client hands its environment to `planwright mcp serve`.
    pw.isolate(&mut cmd);
    cmd.env("OPENAI_BASE_URL", llm.base_url())
        .env("OPENAI_API_KEY", "sk-test-secret")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let out = tokio::time::timeout(Duration::from_secs(180), cmd.output())
        .await
        .unwrap_or_else(|_| panic!("{script} did not finish in 180 s"))
        .expect("python starts");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{script} failed:\n{stdout}\n{stderr}");
    serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("{script} printed no JSON ({e}):\n{stdout}\n{stderr}"))
}

/// `mcp serve` on stdio with the scripted pipeline (a planner call, the steps, an LLM
/// summary, no check of the answer: `Planwright::with_scripted_pipeline`).
fn stdio_args(extra: &[&'static str]) -> Vec<&'static str> {
    let mut args = vec![
        "--stdio",
        env!("CARGO_BIN_EXE_planwright"),
        "mcp",
        "serve",
        "--mode",
        "flow",
        "--summary",
        "llm",
        "--verify-answers=false",
    ];
    args.extend_from_slice(extra);
    args
}

/// The greeting task, each LLM answer a little late so that the steps are seen moving.
fn paced_greeting() -> Vec<wiremock::ResponseTemplate> {
    greeting_script(false)
        .into_iter()
        .map(|r| r.set_delay(Duration::from_millis(200)))
        .collect()
}

/// What `run_and_wait.py` saw: the tools, the run waited for, its progress and files.
fn check_run_and_wait(out: &Value) {
    let tools = out["tools"].as_array().expect("tools");
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(
        names,
        [
            "run_task",
            "get_run",
            "list_runs",
            "cancel_run",
            "answer",
            "approve_call",
            "run_diff",
            "undo_run"
        ]
    );
    let run_task = &tools[0];
    assert_eq!(run_task["required"], json!(["task"]));
    assert_eq!(run_task["properties"], json!(["mode", "task", "wait"]));
    assert!(
        run_task["description"]
            .as_str()
            .is_some_and(|d| d.contains("wait: true") && d.len() > 300),
        "{run_task}"
    );

    let run = &out["run"];
    assert_eq!(run["is_error"], false, "{run}");
    let data = &run["data"];
    assert_eq!(data["status"], "completed", "{run}");
    assert_eq!(
        data["summary"],
        "Completed: 3 of 3 steps done.\n\ngreeting.txt was written; it has 2 words.\n\nFiles:\n- created: greeting.txt"
    );
    let plan = data["plan"].as_str().expect("plan text");
    assert_eq!(plan.matches("[✓]").count(), 3, "{plan}");
    assert!(plan.contains("[✓] 1. Write greeting.txt"), "{plan}");
    let run_id = data["run_id"].as_str().expect("run_id");
    let uri = format!("planwright://runs/{run_id}/files/greeting.txt");
    assert_eq!(
        data["files"],
        json!([{"path": "greeting.txt", "bytes": 17, "uri": uri}])
    );
    // The text content carries the same JSON for clients that read only text.
    assert!(run["text"].as_str().is_some_and(|t| t.contains(&uri)));

    let progress = out["progress"].as_array().expect("progress");
    assert!(!progress.is_empty(), "no progress notification");
    let values: Vec<f64> = progress
        .iter()
        .filter_map(|p| p["progress"].as_f64())
        .collect();
    assert!(values.windows(2).all(|w| w[0] <= w[1]), "{progress:?}");
    let last = progress.last().expect("last");
    assert_eq!(
        (last["progress"].as_f64(), last["total"].as_f64()),
        (Some(3.0), Some(3.0))
    );
    assert!(
        progress.iter().any(|p| p["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("step "))),
        "no step title in {progress:?}"
    );

    assert_eq!(
        out["files"],
        json!({"greeting.txt": ["hello planwright\n"]})
    );
    assert_eq!(out["resources"], json!([uri]));
    assert_eq!(
        out["templates"],
        json!([
            "planwright://runs/{run_id}/files/{path}",
            "planwright://runs/{run_id}/diff"
        ])
    );
    assert!(
        out["outside"]
            .as_str()
            .is_some_and(|e| e.contains("outside the run's workspace")),
        "{}",
        out["outside"]
    );
}

#[tokio::test]
async fn mcp_serve_on_stdio_runs_a_task_to_its_end_with_progress_and_serves_its_files() {
    let Some(python) = python() else { return };
    let llm = ScriptedOpenAi::start(paced_greeting()).await;
    let pw = Planwright::new();
    let out = scenario(&python, &pw, &llm, "run_and_wait.py", &stdio_args(&[])).await;
    check_run_and_wait(&out);
    // Written where `serve` writes: the same store and workspaces.
    let run_id = out["run"]["data"]["run_id"].as_str().expect("run_id");
    assert!(pw.workspace(run_id).join("greeting.txt").exists());
    assert_eq!(
        pw.events(run_id).last().map(|e| e.1.clone()).as_deref(),
        Some("run_completed")
    );
}

#[tokio::test]
async fn mcp_on_serve_over_http_runs_a_task_to_its_end_with_progress_and_serves_its_files() {
    let Some(python) = python() else { return };
    let llm = ScriptedOpenAi::start(paced_greeting()).await;
    let pw = Planwright::new();
    let server = pw.serve(&llm.base_url(), Some(TOKEN), &[]).await;
    let url = server.url("/mcp");
    let out = scenario(
        &python,
        &pw,
        &llm,
        "run_and_wait.py",
        &["--http", &url, "--token", TOKEN],
    )
    .await;
    check_run_and_wait(&out);
    // The same run as the HTTP API shows it.
    let run_id = out["run"]["data"]["run_id"].as_str().expect("run_id");
    let (status, show) = get_json(&server, &format!("/v1/runs/{run_id}")).await;
    assert_eq!(status, reqwest::StatusCode::OK);
    assert_eq!(show["status"], "completed");
}

/// What `cancel.py` saw: the run started, cancelled and ended; each error as a tool error
/// with a clear text.
fn check_cancel(out: &Value) {
    assert_eq!(out["started"]["is_error"], false, "{}", out["started"]);
    let run_id = out["started"]["data"]["run_id"].as_str().expect("run_id");
    assert!(run_id.starts_with("run_"), "{run_id}");
    assert_eq!(out["cancelled"]["is_error"], false, "{}", out["cancelled"]);
    assert!(
        matches!(
            out["cancelled"]["data"]["status"].as_str(),
            Some("cancelled" | "cancelling")
        ),
        "{}",
        out["cancelled"]
    );
    let ended = &out["ended"]["data"];
    assert!(
        matches!(ended["status"].as_str(), Some("cancelled" | "failed")),
        "{ended}"
    );
    assert_ne!(ended["status"], "completed");
    assert_eq!(out["listed"]["data"]["runs"][0]["run_id"], run_id);

    let errors = &out["errors"];
    for (name, needle) in [
        ("unknown", "no run with id 'run_nope'"),
        ("not_waiting", "is not waiting for an answer"),
        (
            "bad_arguments",
            "invalid arguments for run_task: missing field `task`",
        ),
        ("cancel_again", "is not running"),
    ] {
        let e = &errors[name];
        assert_eq!(e["is_error"], true, "{name}: {e}");
        assert!(
            e["text"].as_str().is_some_and(|t| t.contains(needle)),
            "{name}: {e}"
        );
    }
}

/// Answers slow enough that the run is still under way when it is cancelled.
fn slow_greeting() -> Vec<wiremock::ResponseTemplate> {
    greeting_script(false)
        .into_iter()
        .map(|r| r.set_delay(Duration::from_secs(3)))
        .collect()
}

#[tokio::test]
async fn mcp_serve_on_stdio_cancels_a_run_and_answers_mistakes_with_tool_errors() {
    let Some(python) = python() else { return };
    let llm = ScriptedOpenAi::start(slow_greeting()).await;
    let pw = Planwright::new();
    let out = scenario(&python, &pw, &llm, "cancel.py", &stdio_args(&[])).await;
    check_cancel(&out);
}

#[tokio::test]
async fn mcp_on_serve_over_http_cancels_a_run_and_answers_mistakes_with_tool_errors() {
    let Some(python) = python() else { return };
    let llm = ScriptedOpenAi::start(slow_greeting()).await;
    let pw = Planwright::new();
    let server = pw.serve(&llm.base_url(), Some(TOKEN), &[]).await;
    let url = server.url("/mcp");
    let out = scenario(
        &python,
        &pw,
        &llm,
        "cancel.py",
        &["--http", &url, "--token", TOKEN],
    )
    .await;
    check_cancel(&out);
}

#[tokio::test]
async fn mcp_on_serve_refuses_a_client_without_the_token() {
    let Some(python) = python() else { return };
    let llm = ScriptedOpenAi::start(Vec::new()).await;
    let pw = Planwright::new();
    let server = pw.serve(&llm.base_url(), Some(TOKEN), &[]).await;
    let url = server.url("/mcp");
    let out = scenario(&python, &pw, &llm, "no_token.py", &["--http", &url]).await;
    // The SDK reports the refused initialize as an error (its text does not say 401).
    assert_eq!(out["connected"], false, "{out}");
    assert!(
        out["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{out}"
    );
    // The same request on the wire: 401 with the Bearer challenge, and with a wrong token.
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}
    });
    for token in [None, Some("wrong-token-0123456789")] {
        let mut req = client()
            .post(&url)
            .header("accept", "application/json, text/event-stream")
            .json(&initialize);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        let res = req.send().await.expect("POST /mcp");
        assert_eq!(res.status(), reqwest::StatusCode::UNAUTHORIZED, "{token:?}");
        assert_eq!(
            res.headers()
                .get("www-authenticate")
                .and_then(|v| v.to_str().ok()),
            Some("Bearer")
        );
    }
    // With the token, the same request opens a session.
    let res = client()
        .post(&url)
        .bearer_auth(TOKEN)
        .header("accept", "application/json, text/event-stream")
        .json(&initialize)
        .send()
        .await
        .expect("POST /mcp");
    assert_eq!(res.status(), reqwest::StatusCode::OK);
    assert!(res.headers().contains_key("mcp-session-id"));
}

#[tokio::test]
async fn mcp_serve_on_stdio_hands_a_question_to_the_client_and_goes_on_with_its_answer() {
    let Some(python) = python() else { return };
    let llm = ScriptedOpenAi::start(vec![
        plan(&["Ask the user for a colour"]),
        call("message_ask_user", json!({"question": "Which colour?"})),
        complete(true, "the user chose blue"),
        text("The user chose blue."),
    ])
    .await;
    let pw = Planwright::new();
    let out = scenario(&python, &pw, &llm, "answer.py", &stdio_args(&[])).await;
    let asked = &out["asked"]["data"];
    assert_eq!(asked["status"], "waiting", "{out}");
    assert_eq!(asked["pending_question"], "Which colour?", "{out}");
    assert_eq!(out["answered"]["is_error"], false, "{out}");
    assert_eq!(out["answered"]["data"]["delivered"], true, "{out}");
    let ended = &out["ended"]["data"];
    assert_eq!(ended["status"], "completed", "{out}");
    assert_eq!(ended["pending_question"], Value::Null);
    // The model heard the answer.
    let requests = llm.requests().await;
    assert!(
        requests
            .iter()
            .any(|r| tool_messages(r).iter().any(|m| m.contains("blue"))),
        "the answer never reached the model"
    );
}

#[tokio::test]
async fn mcp_serve_on_stdio_hands_an_approval_to_the_client_and_runs_the_approved_call() {
    let Some(python) = python() else { return };
    let llm = ScriptedOpenAi::start(vec![
        plan(&["Write the note with the shell"]),
        call("shell_exec", json!({"command": "echo approved > note.txt"})),
        complete(true, "wrote note.txt"),
        text("Wrote note.txt."),
    ])
    .await;
    let pw = Planwright::new();
    let out = scenario(
        &python,
        &pw,
        &llm,
        "approve.py",
        &stdio_args(&["--approval", "ask"]),
    )
    .await;
    let asked = &out["asked"]["data"];
    assert_eq!(asked["status"], "waiting", "{out}");
    assert!(asked["pending_approval"].is_string(), "{out}");
    let request = asked["pending_approval_request"]
        .as_str()
        .unwrap_or_default();
    assert!(
        request.contains("shell_exec") && request.contains("echo approved"),
        "{out}"
    );
    assert_eq!(out["wrong"]["is_error"], true, "{out}");
    assert_eq!(out["approved"]["is_error"], false, "{out}");
    let ended = &out["ended"]["data"];
    assert_eq!(ended["status"], "completed", "{out}");
    assert_eq!(ended["pending_approval"], Value::Null, "{out}");
    let run_id = ended["run_id"].as_str().expect("run_id");
    let note = std::fs::read_to_string(pw.workspace(run_id).join("note.txt")).expect("note.txt");
    assert_eq!(note.trim(), "approved");
}
