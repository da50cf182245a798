//! A scripted OpenAI-compatible server (wiremock on 127.0.0.1) and a runner for the real
//! `planwright` binary.

#![allow(dead_code)]

pub mod api;

#[allow(unused_imports)]
pub use api::*;

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
            "prompt_tokens_details": {"cached_tokens": 64, "audio_tokens": 0},
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

/// The scripted model of the greeting task: write greeting.txt, count its words (reading the
/// file first with `file_read` when `read_first`), report. Tool outputs are deterministic
/// (echo, file_read, wc), so the requests are the same on every run.
pub fn greeting_script(read_first: bool) -> Vec<ResponseTemplate> {
    let mut script = vec![
        plan(&[
            "Write greeting.txt with the text hello planwright",
            "Count the words in greeting.txt",
            "Report the word count",
        ]),
        call(
            "shell_exec",
            json!({"command": "echo 'hello planwright' > greeting.txt"}),
        ),
        complete(true, "wrote greeting.txt"),
    ];
    if read_first {
        script.push(call("file_read", json!({"path": "greeting.txt"})));
    }
    script.extend([
        call("shell_exec", json!({"command": "wc -w < greeting.txt"})),
        complete(true, "greeting.txt has 2 words"),
        complete(true, "The count is 2"),
        text("greeting.txt was written; it has 2 words."),
    ]);
    script
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

/// The stderr lines of a background process, as they come.
#[derive(Clone, Default)]
pub struct Log(std::sync::Arc<Mutex<Vec<String>>>);

impl Log {
    pub fn text(&self) -> String {
        self.0.lock().map(|l| l.join("\n")).unwrap_or_default()
    }

    /// Waits (up to `secs`) until a line contains `needle`.
    pub async fn wait_for(&self, needle: &str, secs: u64) {
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(secs);
        while !self
            .0
            .lock()
            .is_ok_and(|l| l.iter().any(|line| line.contains(needle)))
        {
            assert!(
                tokio::time::Instant::now() < deadline,
                "no line with {needle:?} in:\n{}",
                self.text()
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }
}

/// Whether bubblewrap works here (run with the arguments of Planwright's probe); a test
/// that needs it skips when not, but fails under `CI=true`.
pub fn bwrap_works(test: &str) -> bool {
    let ok = std::process::Command::new("bwrap")
        .args(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"])
        .args(["--unshare-pid", "--unshare-ipc", "--unshare-net"])
        .args(["--cap-drop", "ALL", "--", "true"])
        .status()
        .is_ok_and(|s| s.success());
    test_support::skip_unless(ok, format!("{test}: bubblewrap does not work here"))
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

    /// The `XDG_CONFIG_HOME` of every command started here: the developer's own
    /// `~/.config/planwright/config.toml` never reaches a test.
    pub fn config_home(&self) -> PathBuf {
        self.dir.path().join(".config-home")
    }

    /// `planwright trust` on the temp folder (blocking; it is quick): its `planwright.toml`
    /// is read from now on, with the values it has now (docs/security.md).
    pub fn trust(&self) {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_planwright"))
            .arg("trust")
            .current_dir(self.cwd())
            .env_remove("PLANWRIGHT_CONFIG")
            .env("XDG_CONFIG_HOME", self.config_home())
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run planwright trust");
        assert_eq!(
            out.status.code(),
            Some(0),
            "planwright trust: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Writes the temp folder's `planwright.toml` and trusts the folder with it.
    pub fn trusted_project(&self, text: &str) {
        std::fs::write(self.cwd().join("planwright.toml"), text).expect("write planwright.toml");
        self.trust();
    }

    /// The user config file the binary reads (under [`Planwright::config_home`]).
    pub fn user_config(&self) -> PathBuf {
        self.config_home().join("planwright").join("config.toml")
    }

    /// Only our environment: no provider, key or Planwright setting of the developer's, the
    /// same tools on every machine (requests, and so cassettes, list them: no browser and
    /// no web search unless a test asks for them), and no user config file.
    pub fn isolate(&self, cmd: &mut tokio::process::Command) {
        for (k, _) in std::env::vars() {
            if k.starts_with("OPENAI_")
                || k.starts_with("ANTHROPIC_")
                || k.starts_with("PLANWRIGHT_")
                || k.starts_with("OTEL_")
            {
                cmd.env_remove(k);
            }
        }
        for k in [
            "SEARXNG_URL",
            "BRAVE_API_KEY",
            "BRAVE_SEARCH_API_KEY",
            "TAVILY_API_KEY",
        ] {
            cmd.env_remove(k);
        }
        cmd.env("PLANWRIGHT_LOG", "warn")
            .env("PLANWRIGHT_CHROMIUM", "/nonexistent/chromium")
            .env("PLANWRIGHT_MODEL_PATH", "/nonexistent/model.gguf")
            .env("XDG_CONFIG_HOME", self.config_home())
            .env("XDG_STATE_HOME", self.dir.path().join(".state-home"));
    }

    /// `args` with the pipeline these tests script: a run, resume, server or worker gets
    /// `--mode flow` (a planner call, then the steps), `--summary llm` (an LLM-written
    /// summary) and `--verify-answers=false` (no check of the answer) right after its
    /// subcommand, unless the test chose a mode or summary itself,
    /// in its flags or in a config file (any `mode = ...` / `summary = ...` line, a
    /// `--config` or `--profile`). Tests of the defaults (auto, direct, the summary
    /// from the facts) pass their own `--mode` / `--summary`.
    pub fn with_scripted_pipeline(&self, args: &[&str]) -> Vec<String> {
        let mut out: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        let Some(sub) = args.first() else {
            return out;
        };
        // `mcp serve` starts runs too: its flags go after both words.
        let (sub, at) = match args {
            ["mcp", "serve", ..] => (&"serve", 2),
            _ => (sub, 1),
        };
        if !["run", "resume", "serve", "worker"].contains(sub)
            || args.iter().any(|a| *a == "--config" || *a == "--profile")
        {
            return out;
        }
        let files: String = [self.dir.path().join("planwright.toml"), self.user_config()]
            .iter()
            .filter_map(|f| std::fs::read_to_string(f).ok())
            .collect();
        let in_files = |key: &str| {
            files
                .lines()
                .any(|l| l.trim_start().starts_with(key) && l.contains('='))
        };
        let given = |flag: &str| {
            args.iter()
                .any(|a| *a == flag || a.starts_with(&format!("{flag}=")))
                || in_files(flag.trim_start_matches("--"))
        };
        let mut extra: Vec<String> = Vec::new();
        if *sub != "resume" && !given("--mode") {
            extra.extend(["--mode".to_string(), "flow".to_string()]);
        }
        if !given("--summary") {
            extra.extend(["--summary".to_string(), "llm".to_string()]);
        }
        // The check of a run's answer is one more LLM call (docs/verification.md) that
        // every script would have to hold: off unless the test is about it.
        if !given("--verify-answers") {
            extra.push("--verify-answers=false".to_string());
        }
        out.splice(at..at, extra);
        out
    }

    /// Runs the binary in the temp folder with only the given environment of ours.
    pub async fn exec(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_planwright"));
        cmd.args(self.with_scripted_pipeline(args))
            .current_dir(self.dir.path());
        self.isolate(&mut cmd);
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.stdin(std::process::Stdio::null());
        cmd.output().await.expect("planwright runs")
    }

    /// Starts the binary in the background (killed if the test drops it).
    pub fn spawn(&self, args: &[&str], env: &[(&str, &str)]) -> tokio::process::Child {
        let mut cmd = self.background(args, env);
        cmd.stderr(std::process::Stdio::null());
        cmd.spawn().expect("planwright starts")
    }

    /// As [`Planwright::spawn`], keeping what it writes on stderr.
    pub fn spawn_logged(
        &self,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> (tokio::process::Child, Log) {
        use tokio::io::AsyncBufReadExt;
        let mut cmd = self.background(args, env);
        cmd.stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().expect("planwright starts");
        let stderr = child.stderr.take().expect("stderr");
        let log = Log::default();
        let lines = log.0.clone();
        tokio::spawn(async move {
            let mut reader = tokio::io::BufReader::new(stderr).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                if let Ok(mut l) = lines.lock() {
                    l.push(line);
                }
            }
        });
        (child, log)
    }

    /// The binary in the temp folder with only the given environment of ours, no stdin or
    /// stdout, killed when dropped.
    fn background(&self, args: &[&str], env: &[(&str, &str)]) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_planwright"));
        cmd.args(self.with_scripted_pipeline(args))
            .current_dir(self.dir.path());
        self.isolate(&mut cmd);
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .kill_on_drop(true);
        cmd
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

    /// A run's workspace under the default `--workspace-root`: beside the SQLite database,
    /// or, on PostgreSQL, in the user's state folder (`$XDG_STATE_HOME`, set by
    /// [`Planwright::isolate`]; docs/checkpoints.md).
    pub fn workspace(&self, run_id: &str) -> PathBuf {
        let beside_db = self.dir.path().join(".planwright").join("runs");
        let state_home = self
            .dir
            .path()
            .join(".state-home")
            .join("planwright")
            .join("runs");
        let root = if !beside_db.join(run_id).exists() && state_home.join(run_id).exists() {
            state_home
        } else {
            beside_db
        };
        root.join(run_id).join("workspace")
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

// ---- `planwright serve` helpers (tests/server*.rs) ----

/// A running `planwright serve` on 127.0.0.1 (killed when dropped).
pub struct Server {
    pub child: tokio::process::Child,
    pub base: String,
    pub token: String,
    /// Every stderr line so far.
    pub stderr: std::sync::Arc<Mutex<Vec<String>>>,
}

impl Server {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
    pub fn stderr_text(&self) -> String {
        self.stderr.lock().map(|l| l.join("\n")).unwrap_or_default()
    }
}

impl Planwright {
    /// Starts `planwright serve --addr 127.0.0.1:0 ARGS` and waits for its
    /// `listening on http://ADDR` line. `token` goes to PLANWRIGHT_TOKEN when given.
    pub async fn serve(&self, llm_base: &str, token: Option<&str>, args: &[&str]) -> Server {
        use tokio::io::AsyncBufReadExt;
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_planwright"));
        let mut all = vec!["serve", "--addr", "127.0.0.1:0"];
        all.extend_from_slice(args);
        cmd.args(self.with_scripted_pipeline(&all))
            .current_dir(self.dir.path());
        self.isolate(&mut cmd);
        cmd.env("OPENAI_BASE_URL", llm_base)
            .env("OPENAI_API_KEY", "sk-test-secret");
        if let Some(t) = token {
            cmd.env("PLANWRIGHT_TOKEN", t);
        }
        cmd.stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd.spawn().expect("planwright serve starts");
        let stderr = child.stderr.take().expect("stderr");
        let lines = std::sync::Arc::new(Mutex::new(Vec::<String>::new()));
        let (addr_tx, addr_rx) = tokio::sync::oneshot::channel::<String>();
        let sink = lines.clone();
        tokio::spawn(async move {
            let mut reader = tokio::io::BufReader::new(stderr).lines();
            let mut addr_tx = Some(addr_tx);
            while let Ok(Some(line)) = reader.next_line().await {
                if let Some(addr) = line.strip_prefix("listening on ") {
                    if let Some(tx) = addr_tx.take() {
                        let _ = tx.send(addr.trim().to_string());
                    }
                }
                if let Ok(mut l) = sink.lock() {
                    l.push(line);
                }
            }
        });
        let base = tokio::time::timeout(std::time::Duration::from_secs(30), addr_rx)
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_else(|| {
                panic!(
                    "planwright serve did not print its address; stderr:\n{}",
                    lines.lock().map(|l| l.join("\n")).unwrap_or_default()
                )
            });
        let token = match token {
            Some(t) => t.to_string(),
            None => std::fs::read_to_string(self.dir.path().join(".planwright/server-token"))
                .map(|t| t.trim().to_string())
                .unwrap_or_default(),
        };
        Server {
            child,
            base,
            token,
            stderr: lines,
        }
    }
}

/// One server-sent event.
#[derive(Debug, Clone)]
pub struct Sse {
    pub id: Option<u64>,
    pub event: String,
    pub data: Value,
}

/// Reads server-sent events from a streaming response body.
pub struct SseReader {
    response: reqwest::Response,
    buf: String,
}

impl SseReader {
    pub fn new(response: reqwest::Response) -> SseReader {
        SseReader {
            response,
            buf: String::new(),
        }
    }

    /// The next event; `None` when the stream ended.
    pub async fn next(&mut self) -> Option<Sse> {
        loop {
            while let Some(i) = self.buf.find("\n\n") {
                let frame: String = self.buf[..i].to_string();
                self.buf.drain(..i + 2);
                let mut ev = Sse {
                    id: None,
                    event: "message".into(),
                    data: Value::Null,
                };
                let mut data = String::new();
                for line in frame.lines() {
                    if let Some(v) = line.strip_prefix("id:") {
                        ev.id = v.trim().parse().ok();
                    } else if let Some(v) = line.strip_prefix("event:") {
                        ev.event = v.trim().to_string();
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push_str(v.strip_prefix(' ').unwrap_or(v));
                    }
                }
                if data.is_empty() {
                    continue; // keep-alive comment
                }
                ev.data = serde_json::from_str(&data).unwrap_or(Value::String(data));
                return Some(ev);
            }
            match self.response.chunk().await {
                Ok(Some(bytes)) => self.buf.push_str(&String::from_utf8_lossy(&bytes)),
                _ => return None,
            }
        }
    }

    /// Every remaining event until the stream closes (panics after `secs`).
    pub async fn collect(&mut self, secs: u64) -> Vec<Sse> {
        let mut out = Vec::new();
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(secs);
        loop {
            match tokio::time::timeout_at(deadline, self.next()).await {
                Ok(Some(e)) => out.push(e),
                Ok(None) => return out,
                Err(_) => panic!("the event stream did not close within {secs}s; got {out:?}"),
            }
        }
    }
}
