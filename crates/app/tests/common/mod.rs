//! A scripted OpenAI-compatible server (wiremock on 127.0.0.1) and a runner for the real
//! `planwright` binary.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

static CALL_IDS: AtomicU32 = AtomicU32::new(1);

/// A chat.completion body in OpenAI's real shape.
pub fn completion(message: Value, finish_reason: &str) -> Value {
    json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1_731_000_000,
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [{
            "index": 0,
            "message": message,
            "logprobs": null,
            "finish_reason": finish_reason
        }],
        "usage": {
            "prompt_tokens": 100,
            "completion_tokens": 20,
            "total_tokens": 120,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0}
        },
        "system_fingerprint": "fp_test"
    })
}

pub fn text(content: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(completion(
        json!({"role": "assistant", "content": content, "refusal": null}),
        "stop",
    ))
}

/// One assistant turn calling `name` with `args` (sent as a JSON string, as OpenAI does).
pub fn call(name: &str, args: Value) -> ResponseTemplate {
    let id = format!("call_{}", CALL_IDS.fetch_add(1, Ordering::Relaxed));
    ResponseTemplate::new(200).set_body_json(completion(
        json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [{
                "id": id,
                "type": "function",
                "function": {"name": name, "arguments": args.to_string()}
            }],
            "refusal": null
        }),
        "tool_calls",
    ))
}

pub fn plan(steps: &[&str]) -> ResponseTemplate {
    call(
        "planning",
        json!({"command": "create", "title": "Test plan", "steps": steps}),
    )
}

pub fn complete(success: bool, result: &str) -> ResponseTemplate {
    call(
        "complete_step",
        json!({"success": success, "result": result}),
    )
}

/// Serves the scripted responses in order; answers 500 once the script is exhausted.
struct Script {
    queue: Mutex<VecDeque<ResponseTemplate>>,
}

impl Respond for Script {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        self.queue
            .lock()
            .ok()
            .and_then(|mut q| q.pop_front())
            .unwrap_or_else(|| {
                ResponseTemplate::new(500).set_body_json(
                    json!({"error": {"message": "script exhausted", "type": "server_error"}}),
                )
            })
    }
}

pub struct ScriptedOpenAi {
    pub server: MockServer,
}

impl ScriptedOpenAi {
    pub async fn start(script: Vec<ResponseTemplate>) -> ScriptedOpenAi {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(Script {
                queue: Mutex::new(script.into()),
            })
            .mount(&server)
            .await;
        ScriptedOpenAi { server }
    }

    pub fn base_url(&self) -> String {
        format!("{}/v1", self.server.uri())
    }

    /// The JSON bodies of every chat request received, in order.
    pub async fn requests(&self) -> Vec<Value> {
        self.server
            .received_requests()
            .await
            .unwrap_or_default()
            .iter()
            .map(|r| serde_json::from_slice(&r.body).unwrap_or(Value::Null))
            .collect()
    }
}

/// The text of every `tool` message in a request body.
pub fn tool_messages(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .map(|ms| {
            ms.iter()
                .filter(|m| m["role"] == "tool")
                .map(|m| m["content"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

pub struct Planwright {
    pub dir: tempfile::TempDir,
}

pub struct RunResult {
    pub output: Output,
    pub json: Value,
}

impl RunResult {
    pub fn code(&self) -> i32 {
        self.output.status.code().unwrap_or(-1)
    }
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).to_string()
    }
}

impl Planwright {
    pub fn new() -> Planwright {
        Planwright {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    pub fn db(&self) -> PathBuf {
        self.dir.path().join(".planwright").join("planwright.db")
    }

    pub fn cwd(&self) -> &Path {
        self.dir.path()
    }

    /// Runs the binary in the temp folder with only the given environment of ours.
    pub async fn exec(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_planwright"));
        cmd.args(args).current_dir(self.dir.path());
        for (k, _) in std::env::vars() {
            if k.starts_with("OPENAI_") || k.starts_with("PLANWRIGHT_") {
                cmd.env_remove(k);
            }
        }
        cmd.env("PLANWRIGHT_LOG", "warn");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.stdin(std::process::Stdio::null());
        cmd.output().await.expect("planwright runs")
    }

    /// Starts the binary in the background (killed if the test drops it).
    pub fn spawn(&self, args: &[&str], env: &[(&str, &str)]) -> tokio::process::Child {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_planwright"));
        cmd.args(args).current_dir(self.dir.path());
        for (k, _) in std::env::vars() {
            if k.starts_with("OPENAI_") || k.starts_with("PLANWRIGHT_") {
                cmd.env_remove(k);
            }
        }
        cmd.env("PLANWRIGHT_LOG", "warn");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true);
        cmd.spawn().expect("planwright starts")
    }

    /// The id of the database's only run, once there is one.
    pub fn only_run_id(&self) -> Option<String> {
        let conn = rusqlite::Connection::open_with_flags(
            self.db(),
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .ok()?;
        let ids: Vec<String> = conn
            .prepare("SELECT run_id FROM runs")
            .ok()?
            .query_map([], |r| r.get(0))
            .ok()?
            .filter_map(Result::ok)
            .collect();
        (ids.len() == 1).then(|| ids[0].clone())
    }

    /// `planwright run --json TASK` against `server`.
    pub async fn run(&self, server: &ScriptedOpenAi, task: &str, extra: &[&str]) -> RunResult {
        let base = server.base_url();
        let mut args = vec!["run", "--json"];
        args.extend_from_slice(extra);
        args.push(task);
        let output = self
            .exec(
                &args,
                &[
                    ("OPENAI_BASE_URL", base.as_str()),
                    ("OPENAI_API_KEY", "sk-test-secret"),
                ],
            )
            .await;
        let stdout = String::from_utf8_lossy(&output.stdout).to_string();
        let json: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
            panic!(
                "stdout is not one JSON object ({e}):\n{stdout}\nstderr:\n{}",
                String::from_utf8_lossy(&output.stderr)
            )
        });
        RunResult { output, json }
    }

    pub fn workspace(&self, run_id: &str) -> PathBuf {
        self.dir
            .path()
            .join(".planwright")
            .join("runs")
            .join(run_id)
            .join("workspace")
    }

    /// (seq, type, json) of a run's events, read straight from the SQLite file.
    pub fn events(&self, run_id: &str) -> Vec<(i64, String, Value)> {
        let conn = rusqlite::Connection::open_with_flags(
            self.db(),
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .expect("open db");
        let mut stmt = conn
            .prepare("SELECT seq, type, json FROM events WHERE run_id = ?1 ORDER BY seq")
            .expect("prepare");
        let rows = stmt
            .query_map([run_id], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                ))
            })
            .expect("query");
        rows.map(|r| {
            let (seq, ty, json) = r.expect("row");
            (seq, ty, serde_json::from_str(&json).expect("event json"))
        })
        .collect()
    }
}
