//! Trace export against a real collector: Arize Phoenix (`arize-phoenix` on PyPI, pinned
//! below), installed once in a virtual environment under the target folder and started once
//! per test binary on a free port, like the MCP tests' Python SDK. A scripted 3-step run sent
//! to it is read back through Phoenix's REST API: one trace, the span tree run → steps →
//! chat and execute_tool, the GenAI attributes. Without python3, venv or PyPI the Phoenix
//! test skips, except with `CI=true`, where it fails. The collector-down and bad-setting
//! tests need nothing.

mod common;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

/// The collector the test is written for.
const PHOENIX: &str = "arize-phoenix==20.26.1";

/// How long Phoenix may take to answer `/healthz` (about 35 s on a loaded 2-core machine
/// the first time: it creates its database).
const PHOENIX_START: Duration = Duration::from_secs(240);

/// Phoenix under a watchdog: once the watchdog's stdin closes (the test binary exits or is
/// killed), it stops Phoenix and removes its working folder.
const WATCHDOG: &str = r#"
"$@" </dev/null >>"$PHOENIX_LOG" 2>&1 & pid=$!
trap '' INT HUP
while read -r _; do :; done
kill "$pid" 2>/dev/null
wait "$pid"
rm -rf "$PHOENIX_WORKING_DIR"
rm -f "$PHOENIX_LOG"
"#;

struct Phoenix {
    port: u16,
    /// Kept open for the whole test binary: its end stops Phoenix.
    _watchdog: Mutex<Child>,
}

impl Phoenix {
    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

/// The Phoenix of this test binary, started on first use; `None` (the test skips) when it
/// cannot be installed or started outside CI.
fn phoenix() -> Option<&'static Phoenix> {
    static PHOENIX_SERVER: OnceLock<Result<Phoenix, String>> = OnceLock::new();
    test_support::require_or_skip(
        PHOENIX_SERVER
            .get_or_init(|| prepare_venv().and_then(|python| start_phoenix(&python)))
            .as_ref()
            .map_err(|why| format!("Arize Phoenix is not available ({why})")),
    )
}

fn prepare_venv() -> Result<PathBuf, String> {
    test_support::pip_venv(Path::new(env!("CARGO_TARGET_TMPDIR")), "phoenix", PHOENIX)
}

fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("no free port: {e}"))
}

/// Starts Phoenix (through its module: a renamed venv's scripts name the old path) and
/// waits for `/healthz`.
fn start_phoenix(python: &Path) -> Result<Phoenix, String> {
    let port = free_port()?;
    let grpc_port = free_port()?;
    let work = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("phoenix-run-{}-{port}", std::process::id()));
    std::fs::create_dir_all(&work).map_err(|e| e.to_string())?;
    let log = work.with_extension("log");
    let watchdog = Command::new("sh")
        .args(["-c", WATCHDOG, "sh"])
        .arg(python)
        .args([
            "-c",
            "import sys; from phoenix.server.main import main; sys.argv[0] = 'phoenix'; \
             sys.exit(main())",
            "serve",
        ])
        .env("PHOENIX_PORT", port.to_string())
        .env("PHOENIX_GRPC_PORT", grpc_port.to_string())
        .env("PHOENIX_HOST", "127.0.0.1")
        .env("PHOENIX_WORKING_DIR", &work)
        .env("PHOENIX_LOG", &log)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start Phoenix: {e}"))?;
    let phoenix = Phoenix {
        port,
        _watchdog: Mutex::new(watchdog),
    };
    let started = Instant::now();
    while !healthy(port) {
        if started.elapsed() > PHOENIX_START {
            let tail = std::fs::read_to_string(&log).unwrap_or_default();
            let tail: Vec<&str> = tail.lines().rev().take(5).collect();
            return Err(format!(
                "Phoenix did not answer /healthz in {PHOENIX_START:?}: {}",
                tail.join(" | ")
            ));
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    Ok(phoenix)
}

/// Whether `GET /healthz` answers 200 (plain HTTP over a socket: no runtime needed here).
fn healthy(port: u16) -> bool {
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    if stream
        .write_all(b"GET /healthz HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).is_ok()
        && (head.starts_with(b"HTTP/1.1 200") || head.starts_with(b"HTTP/1.0 200"))
}

/// Every span of Phoenix project `project`.
async fn spans(phoenix: &Phoenix, project: &str) -> Vec<Value> {
    let client = reqwest::Client::new();
    let mut all = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut url = phoenix.url(&format!("/v1/projects/{project}/spans?limit=500"));
        if let Some(c) = &cursor {
            url.push_str(&format!("&cursor={c}"));
        }
        let Ok(response) = client.get(&url).send().await else {
            return all;
        };
        let Ok(page) = response.json::<Value>().await else {
            return all;
        };
        all.extend(page["data"].as_array().cloned().unwrap_or_default());
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => return all,
        }
    }
}

/// The attribute `key` of a span, whether Phoenix gives attributes flat (`a.b`) or nested.
fn attr<'a>(span: &'a Value, key: &str) -> Option<&'a Value> {
    let attributes = &span["attributes"];
    if let Some(v) = attributes.get(key) {
        return Some(v);
    }
    key.split('.').try_fold(attributes, |v, part| v.get(part))
}

fn attr_str(span: &Value, key: &str) -> String {
    match attr(span, key) {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

fn op(span: &Value) -> String {
    attr_str(span, "gen_ai.operation.name")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_scripted_run_lands_in_phoenix_as_one_trace_of_genai_spans() {
    let Some(phoenix) = phoenix() else {
        return;
    };
    let project = format!("pw-trace-{}", std::process::id());
    let llm = ScriptedOpenAi::start(greeting_script(false)).await;
    let pw = Planwright::new();
    let base = llm.base_url();
    let endpoint = phoenix.url("");
    let resource = format!("openinference.project.name={project}");
    let out = pw
        .exec(
            &[
                "run",
                "--json",
                "--model",
                "test-model",
                "Write greeting.txt, count its words\nand report",
            ],
            &[
                ("OPENAI_BASE_URL", base.as_str()),
                ("OPENAI_API_KEY", "sk-test-secret"),
                ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
                ("OTEL_RESOURCE_ATTRIBUTES", resource.as_str()),
            ],
        )
        .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the run failed:\n{stderr}");
    assert!(!stderr.contains("traces"), "a telemetry warning:\n{stderr}");
    let run: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    let run_id = run["run_id"].as_str().expect("a run id").to_string();

    // The binary flushed at exit; Phoenix ingests in the background.
    let started = Instant::now();
    let spans = loop {
        let spans = spans(phoenix, &project).await;
        let agents = spans.iter().filter(|s| op(s) == "invoke_agent").count();
        let workflows = spans.iter().filter(|s| op(s) == "invoke_workflow").count();
        if workflows == 1 && agents >= 3 {
            break spans;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "Phoenix has not got the run's spans: {spans:#?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };

    let trace_ids: std::collections::BTreeSet<&str> = spans
        .iter()
        .filter_map(|s| s["context"]["trace_id"].as_str())
        .collect();
    assert_eq!(trace_ids.len(), 1, "one trace: {trace_ids:?}");
    let id = |s: &Value| {
        s["context"]["span_id"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let parent = |s: &Value| s["parent_id"].as_str().unwrap_or_default().to_string();
    let of = |name: &str| -> Vec<&Value> { spans.iter().filter(|s| op(s) == name).collect() };

    let workflow = of("invoke_workflow")[0];
    assert_eq!(parent(workflow), "", "the run is the root");
    assert_eq!(workflow["name"], "invoke_workflow planwright");
    assert_eq!(attr_str(workflow, "gen_ai.conversation.id"), run_id);
    assert_eq!(attr_str(workflow, "planwright.mode"), "flow");
    assert!(
        attr(workflow, "planwright.task").is_none(),
        "no task without the content switch (issue 41)"
    );
    assert_eq!(workflow["status_code"], "OK");

    let agents = of("invoke_agent");
    assert_eq!(agents.len(), 3, "one per step attempt");
    let agent_ids: Vec<String> = agents.iter().map(|s| id(s)).collect();
    for agent in &agents {
        assert_eq!(parent(agent), id(workflow));
        assert_eq!(agent["name"], "invoke_agent general");
    }

    let chats = of("chat");
    // The plan, two turns in each of the first two steps, one in the third, the summary.
    assert_eq!(chats.len(), 7, "{chats:#?}");
    for chat in &chats {
        assert_eq!(chat["name"], "chat test-model");
        assert_eq!(attr_str(chat, "gen_ai.request.model"), "test-model");
        assert_eq!(attr_str(chat, "gen_ai.provider.name"), "openai");
        assert_eq!(attr_str(chat, "gen_ai.usage.input_tokens"), "100");
        assert_eq!(attr_str(chat, "gen_ai.usage.output_tokens"), "20");
        assert_eq!(attr_str(chat, "gen_ai.usage.cache_read.input_tokens"), "64");
        assert!(
            attr(chat, "gen_ai.input.messages").is_none(),
            "no message content by default"
        );
        let p = parent(chat);
        assert!(p == id(workflow) || agent_ids.contains(&p), "{chat:#}");
    }
    let in_steps = chats
        .iter()
        .filter(|c| agent_ids.contains(&parent(c)))
        .count();
    assert_eq!(in_steps, 5, "the steps' calls are under their steps");
    // Phoenix maps the GenAI attributes to its own kinds by itself.
    assert_eq!(chats[0]["span_kind"], "LLM");

    let tools = of("execute_tool");
    let shell: Vec<&&Value> = tools
        .iter()
        .filter(|t| attr_str(t, "gen_ai.tool.name") == "shell_exec")
        .collect();
    assert_eq!(shell.len(), 2, "{tools:#?}");
    for tool in &tools {
        assert!(
            agent_ids.contains(&parent(tool)),
            "a tool call is under its step"
        );
        assert!(attr_str(tool, "gen_ai.tool.call.id").starts_with("call_"));
        assert_eq!(attr_str(tool, "planwright.tool.outcome"), "ok");
        assert!(attr(tool, "gen_ai.tool.call.arguments").is_none());
    }
    assert_eq!(shell[0]["name"], "execute_tool shell_exec");
    assert_eq!(shell[0]["span_kind"], "TOOL");
}

#[tokio::test]
async fn a_collector_that_is_down_costs_one_warning_and_never_the_run() {
    let port = free_port().expect("a free port");
    let llm = ScriptedOpenAi::start(greeting_script(false)).await;
    let pw = Planwright::new();
    let base = llm.base_url();
    let endpoint = format!("http://127.0.0.1:{port}");
    let out = pw
        .exec(
            &["run", "--json", "Write greeting.txt and count its words"],
            &[
                ("OPENAI_BASE_URL", base.as_str()),
                ("OPENAI_API_KEY", "sk-test-secret"),
                ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
            ],
        )
        .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the run failed:\n{stderr}");
    let warnings = stderr
        .lines()
        .filter(|l| l.contains("traces could not be sent"))
        .count();
    assert_eq!(warnings, 1, "one warning line:\n{stderr}");
    assert!(
        stderr.contains(&format!("http://127.0.0.1:{port}")),
        "{stderr}"
    );
}

#[tokio::test]
async fn a_bad_setting_is_one_warning_and_the_run_goes_on_untraced() {
    for (var, value, said) in [
        (
            "OTEL_EXPORTER_OTLP_PROTOCOL",
            "grpc",
            "traces are not exported: unsupported OTLP protocol \"grpc\"",
        ),
        (
            "OTEL_EXPORTER_OTLP_HEADERS",
            "no-equals-sign",
            "traces are not exported: malformed OTEL_EXPORTER_OTLP_HEADERS",
        ),
        (
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "http//missing-colon",
            "traces are not exported: malformed OTLP endpoint",
        ),
    ] {
        let llm = ScriptedOpenAi::start(greeting_script(false)).await;
        let pw = Planwright::new();
        let base = llm.base_url();
        let mut env = vec![
            ("OPENAI_BASE_URL", base.as_str()),
            ("OPENAI_API_KEY", "sk-test-secret"),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9"),
        ];
        env.retain(|(k, _)| *k != var);
        env.push((var, value));
        let out = pw
            .exec(
                &["run", "--json", "Write greeting.txt and count its words"],
                &env,
            )
            .await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{var}: the run failed:\n{stderr}");
        let lines: Vec<&str> = stderr.lines().filter(|l| l.contains(said)).collect();
        assert_eq!(lines.len(), 1, "{var}: one warning line:\n{stderr}");
        assert!(
            !stderr.contains("traces could not be sent"),
            "{var}: nothing was sent:\n{stderr}"
        );
    }
}

#[tokio::test]
async fn config_show_lists_the_telemetry_table_and_the_variable_beats_it() {
    let pw = Planwright::new();
    pw.trusted_project(
        "[telemetry]\nendpoint = \"http://127.0.0.1:4318\"\nservice_name = \"from-file\"\n",
    );
    let out = pw
        .exec(&["config", "show"], &[("OTEL_SERVICE_NAME", "from-env")])
        .await;
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("[telemetry]"), "{text}");
    let line = |key: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{key} =")))
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        line("endpoint").contains("\"http://127.0.0.1:4318\""),
        "{text}"
    );
    assert!(line("endpoint").contains("planwright.toml:2"), "{text}");
    assert!(line("service_name").contains("\"from-env\""), "{text}");
    assert!(
        line("service_name").contains("env OTEL_SERVICE_NAME"),
        "{text}"
    );
}

const TOKEN: &str = "test-token-0123456789";

/// `serve` only queues (`--workers 0`); a `worker` process claims the run from the shared
/// database file and continues the trace the client started.
#[tokio::test(flavor = "multi_thread")]
async fn a_run_queued_by_serve_and_run_by_a_worker_continues_the_callers_trace() {
    let Some(phoenix) = phoenix() else {
        return;
    };
    serve_and_worker_continue_the_callers_trace(
        phoenix,
        "pw-serve",
        "4bf92f3577b34da6a3ce929d0e0e4736",
        &[],
    )
    .await;
}

/// The same on PostgreSQL (the issue's set-up for a fleet): `serve` and the `worker` share
/// a database of this test binary's private cluster (crates/store-conformance's
/// `pg_cluster`), beside its one Phoenix.
#[tokio::test(flavor = "multi_thread")]
async fn a_run_queued_by_serve_and_run_by_a_worker_on_postgres_continues_the_callers_trace() {
    if !store_conformance::pg_cluster::available() {
        return;
    }
    let Some(phoenix) = phoenix() else {
        return;
    };
    let db = store_conformance::pg_cluster::fresh_database().await;
    serve_and_worker_continue_the_callers_trace(
        phoenix,
        "pw-serve-pg",
        "5ce0a3f2c41d4e8b9f0a1b2c3d4e5f60",
        &["--db", &db],
    )
    .await;
}

/// A run posted with the client's `traceparent` (trace `trace_id`: Phoenix files a trace
/// under the project of its first span, so each test has its own) to a `serve` that only
/// queues (`--workers 0`, `db` its store), executed by a `worker` on the same store: its
/// spans land in the client's trace in Phoenix project `name`-PID, and each LLM request
/// carries it on.
async fn serve_and_worker_continue_the_callers_trace(
    phoenix: &Phoenix,
    name: &str,
    trace_id: &str,
    db: &[&str],
) {
    let project = format!("{name}-{}", std::process::id());
    let llm = ScriptedOpenAi::start(greeting_script(false)).await;
    let pw = Planwright::new();
    // The `[telemetry]` table this time, not the variables.
    pw.trusted_project(&format!(
        "[telemetry]\nendpoint = \"{}\"\nresource_attributes = \"openinference.project.name={project}\"\n",
        phoenix.url("")
    ));
    let mut serve_args = vec!["--workers", "0"];
    serve_args.extend_from_slice(db);
    let server = pw.serve(&llm.base_url(), Some(TOKEN), &serve_args).await;
    let caller_span = "00f067aa0ba902b7";
    let response = client()
        .post(server.url("/v1/runs"))
        .bearer_auth(TOKEN)
        .header("traceparent", format!("00-{trace_id}-{caller_span}-01"))
        .json(&serde_json::json!({"task": "Write greeting.txt and count its words"}))
        .send()
        .await
        .expect("POST /v1/runs");
    assert_eq!(response.status().as_u16(), 202, "queued");
    let body: Value = response.json().await.expect("json");
    let run_id = body["run_id"].as_str().expect("run id").to_string();
    let (_worker, worker_log) = logged_worker(&pw, &llm.base_url(), db);
    until_completed(&server, &[run_id], 60).await;

    let started = Instant::now();
    let spans = loop {
        let spans = spans(phoenix, &project).await;
        if spans.iter().any(|s| op(s) == "invoke_workflow")
            && spans.iter().filter(|s| op(s) == "chat").count() >= 7
        {
            break spans;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "Phoenix has not got the worker's spans: {spans:#?}\nworker:\n{}",
            worker_log.text()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    for span in &spans {
        assert_eq!(
            span["context"]["trace_id"], trace_id,
            "the caller's trace: {span:#}"
        );
    }
    let queued = spans
        .iter()
        .find(|s| s["name"] == "process planwright.queue")
        .expect("the queued run's span");
    assert_eq!(
        queued["parent_id"], caller_span,
        "a child of the caller's span"
    );
    let workflow = spans
        .iter()
        .find(|s| op(s) == "invoke_workflow")
        .expect("the run");
    assert_eq!(workflow["parent_id"], queued["context"]["span_id"]);

    // Each LLM request carried the trace on to the model server.
    let requests = llm.server.received_requests().await.unwrap_or_default();
    assert_eq!(requests.len(), 7);
    for request in &requests {
        let parent = request
            .headers
            .get("traceparent")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        assert!(parent.starts_with(&format!("00-{trace_id}-")), "{parent:?}");
    }
}

#[tokio::test]
async fn a_malformed_traceparent_is_one_warning_and_the_run_goes_on() {
    let llm = ScriptedOpenAi::start(greeting_script(false)).await;
    let pw = Planwright::new();
    let server = pw.serve(&llm.base_url(), Some(TOKEN), &[]).await;
    let response = client()
        .post(server.url("/v1/runs"))
        .bearer_auth(TOKEN)
        .header("traceparent", "not-a-trace")
        .json(&serde_json::json!({"task": "Write greeting.txt and count its words"}))
        .send()
        .await
        .expect("POST /v1/runs");
    assert_eq!(response.status().as_u16(), 201);
    let body: Value = response.json().await.expect("json");
    let run_id = body["run_id"].as_str().expect("run id").to_string();
    until_completed(&server, &[run_id], 60).await;
    let warnings = server
        .stderr_text()
        .lines()
        .filter(|l| l.contains("ignoring a malformed traceparent \"not-a-trace\""))
        .count();
    assert_eq!(warnings, 1, "{}", server.stderr_text());
}

/// SIGTERM cancels a `planwright run`; the process then flushes its queued spans before it
/// exits: the run's own span, ended by the cancellation, reaches the collector.
#[tokio::test(flavor = "multi_thread")]
async fn sigterm_flushes_the_spans_of_the_cancelled_run() {
    let Some(phoenix) = phoenix() else {
        return;
    };
    let project = format!("pw-sigterm-{}", std::process::id());
    let llm = ScriptedOpenAi::start(vec![
        plan(&["Wait"]),
        call(
            "shell_exec",
            serde_json::json!({"command": "touch started && sleep 60"}),
        ),
        text("The run was stopped while waiting."),
    ])
    .await;
    let pw = Planwright::new();
    let base = llm.base_url();
    let endpoint = phoenix.url("");
    let resource = format!("openinference.project.name={project}");
    let child = pw.spawn(
        &["run", "--json", "--retries", "0", "wait a minute"],
        &[
            ("OPENAI_BASE_URL", base.as_str()),
            ("OPENAI_API_KEY", "sk-test-secret"),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
            ("OTEL_RESOURCE_ATTRIBUTES", resource.as_str()),
        ],
    );
    let runs = pw.cwd().join(".planwright/runs");
    test_support::wait_until("the command to start", Duration::from_secs(60), || {
        std::fs::read_dir(&runs)
            .ok()
            .and_then(|mut d| d.next())
            .and_then(Result::ok)
            .is_some_and(|e| e.path().join("workspace/started").exists())
    })
    .await;
    let pid = child.id().expect("pid");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(pid).expect("pid")),
        nix::sys::signal::Signal::SIGTERM,
    )
    .expect("SIGTERM");
    let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("the run ends after SIGTERM")
        .expect("output");
    assert_eq!(out.status.code(), Some(1));

    let started = Instant::now();
    let workflow = loop {
        let spans = spans(phoenix, &project).await;
        if let Some(w) = spans.into_iter().find(|s| op(s) == "invoke_workflow") {
            break w;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the cancelled run's span never reached Phoenix"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(workflow["status_code"], "ERROR", "{workflow:#}");
}

/// MCP `run_task` over `/mcp` (streamable HTTP) honours the HTTP request's `traceparent`
/// as `POST /v1/runs` does: it is kept in the queued run's request for whoever executes it.
#[tokio::test]
async fn mcp_run_task_keeps_the_callers_traceparent_with_the_queued_run() {
    let llm = ScriptedOpenAi::start(Vec::new()).await;
    let pw = Planwright::new();
    let server = pw
        .serve(&llm.base_url(), Some(TOKEN), &["--workers", "0"])
        .await;
    let post = |body: Value, session: Option<String>| {
        let mut request = client()
            .post(server.url("/mcp"))
            .bearer_auth(TOKEN)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18");
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.json(&body)
    };
    let opened = post(
        serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}}}),
        None,
    )
    .send()
    .await
    .expect("initialize");
    let session = opened
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .expect("a session")
        .to_string();
    let _ = opened.text().await;
    let _ = post(
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        Some(session.clone()),
    )
    .send()
    .await
    .expect("initialized");
    let traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let reply = post(
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "run_task", "arguments": {"task": "anything"}}}),
        Some(session),
    )
    .header("traceparent", traceparent)
    .send()
    .await
    .expect("tools/call")
    .text()
    .await
    .expect("body");
    assert!(reply.contains("run_id"), "{reply}");
    let conn =
        rusqlite::Connection::open_with_flags(pw.db(), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("the database");
    let request: String = conn
        .query_row("SELECT queue_request FROM runs", [], |r| r.get(0))
        .expect("one queued run");
    let request: Value = serde_json::from_str(&request).expect("JSON");
    assert_eq!(request["traceparent"], traceparent, "{request}");
}

/// A collector that refuses the spans (HTTP 4xx) costs one warning naming the status; the
/// run completes.
#[tokio::test]
async fn a_collector_answering_400_costs_one_warning_and_never_the_run() {
    let collector = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .and(wiremock::matchers::path("/v1/traces"))
        .respond_with(wiremock::ResponseTemplate::new(400).set_body_string("bad spans"))
        .mount(&collector)
        .await;
    let llm = ScriptedOpenAi::start(greeting_script(false)).await;
    let pw = Planwright::new();
    let base = llm.base_url();
    let endpoint = collector.uri();
    let out = pw
        .exec(
            &["run", "--json", "Write greeting.txt and count its words"],
            &[
                ("OPENAI_BASE_URL", base.as_str()),
                ("OPENAI_API_KEY", "sk-test-secret"),
                ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
            ],
        )
        .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the run failed:\n{stderr}");
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("traces could not be sent"))
        .collect();
    assert_eq!(warnings.len(), 1, "one warning line:\n{stderr}");
    assert!(warnings[0].contains("HTTP 400"), "{stderr}");
    let received = collector.received_requests().await.unwrap_or_default();
    assert!(!received.is_empty(), "the exporter tried");
    assert_eq!(
        received[0]
            .headers
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("application/x-protobuf")
    );
}

/// Where a project file sends spans, and whether with content, is pinned by `planwright
/// trust`: a changed endpoint or a new content switch is refused until trusted again.
#[tokio::test]
async fn a_changed_telemetry_table_in_a_trusted_project_is_refused() {
    let pw = Planwright::new();
    pw.trusted_project("[telemetry]\nendpoint = \"http://127.0.0.1:4318\"\n");
    let out = pw.exec(&["config", "show"], &[]).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::write(
        pw.cwd().join("planwright.toml"),
        "[telemetry]\nendpoint = \"http://collector.example:4318\"\ncapture_message_content = true\n",
    )
    .expect("write");
    let out = pw.exec(&["config", "show"], &[]).await;
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("[telemetry] endpoint = \"http://collector.example:4318\", capture_message_content = true")
            && err.contains("`planwright trust`"),
        "{err}"
    );
}

/// A wait for a person is a span of its own (`await answer`) inside the step.
#[tokio::test(flavor = "multi_thread")]
async fn a_question_to_the_user_is_a_wait_span_in_the_runs_trace() {
    let Some(phoenix) = phoenix() else {
        return;
    };
    let project = format!("pw-wait-{}", std::process::id());
    let llm = ScriptedOpenAi::start(vec![
        plan(&["Ask the user for a colour"]),
        call(
            "message_ask_user",
            serde_json::json!({"question": "Which colour?"}),
        ),
        complete(true, "the user chose blue"),
        text("The user chose blue."),
    ])
    .await;
    let pw = Planwright::new();
    let base = llm.base_url();
    let endpoint = phoenix.url("");
    let resource = format!("openinference.project.name={project}");
    let out = pw
        .exec(
            &["run", "--json", "--answer", "blue", "Ask me for a colour"],
            &[
                ("OPENAI_BASE_URL", base.as_str()),
                ("OPENAI_API_KEY", "sk-test-secret"),
                ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
                ("OTEL_RESOURCE_ATTRIBUTES", resource.as_str()),
            ],
        )
        .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let started = Instant::now();
    let spans = loop {
        let spans = spans(phoenix, &project).await;
        if spans.iter().any(|s| s["name"] == "await answer")
            && spans.iter().any(|s| op(s) == "invoke_workflow")
        {
            break spans;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no wait span: {spans:#?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let wait = spans
        .iter()
        .find(|s| s["name"] == "await answer")
        .expect("wait");
    let agent = spans
        .iter()
        .find(|s| op(s) == "invoke_agent")
        .expect("step");
    let under: Vec<String> = spans
        .iter()
        .filter(|s| s["parent_id"] == agent["context"]["span_id"])
        .map(|s| {
            s["context"]["span_id"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    let parent = wait["parent_id"].as_str().unwrap_or_default().to_string();
    assert!(
        parent == agent["context"]["span_id"].as_str().unwrap_or_default()
            || under.contains(&parent),
        "the wait is inside the step: {wait:#}"
    );
}

/// A retry inside the LLM client (429, then the answer) is a `retry` event of the call's
/// `chat` span, with the attempt, what failed and the wait; no log line becomes an event.
#[tokio::test(flavor = "multi_thread")]
async fn a_retried_llm_call_carries_a_retry_event_on_its_chat_span() {
    let Some(phoenix) = phoenix() else {
        return;
    };
    let project = format!("pw-retry-{}", std::process::id());
    let llm = ScriptedOpenAi::start(vec![
        wiremock::ResponseTemplate::new(429)
            .insert_header("retry-after", "0")
            .set_body_json(serde_json::json!({"error": {
                "message": "Rate limit reached for test-model",
                "type": "requests", "param": null, "code": "rate_limit_exceeded"}})),
        plan(&["Say hi"]),
        complete(true, "hi"),
        text("Said hi."),
    ])
    .await;
    let pw = Planwright::new();
    let base = llm.base_url();
    let endpoint = phoenix.url("");
    let resource = format!("openinference.project.name={project}");
    let out = pw
        .exec(
            &[
                "run",
                "--json",
                "--mode",
                "flow",
                "--model",
                "test-model",
                "say hi",
            ],
            &[
                ("OPENAI_BASE_URL", base.as_str()),
                ("OPENAI_API_KEY", "sk-test-secret"),
                ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
                ("OTEL_RESOURCE_ATTRIBUTES", resource.as_str()),
            ],
        )
        .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the run failed:\n{stderr}");
    assert_eq!(llm.requests().await.len(), 4, "one retry");

    let started = Instant::now();
    let spans = loop {
        let spans = spans(phoenix, &project).await;
        if spans.iter().any(|s| op(s) == "invoke_workflow")
            && spans.iter().filter(|s| op(s) == "chat").count() >= 3
        {
            break spans;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "Phoenix has not got the run's spans: {spans:#?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let events = |s: &Value| s["events"].as_array().cloned().unwrap_or_default();
    let with_events: Vec<&Value> = spans.iter().filter(|s| !events(s).is_empty()).collect();
    assert_eq!(
        with_events.len(),
        1,
        "only the retried call has events (no log line is one): {with_events:#?}"
    );
    let chat = with_events[0];
    assert_eq!(op(chat), "chat", "{chat:#}");
    assert_eq!(attr_str(chat, "planwright.call.purpose"), "plan");
    let retries = events(chat);
    assert_eq!(retries.len(), 1, "{retries:#?}");
    let retry = &retries[0];
    assert_eq!(retry["name"], "retry", "{retry:#}");
    // An event's attributes, flat (`a.b`) or nested as Phoenix may give them.
    let field = |key: &str| {
        let attributes = &retry["attributes"];
        let found = attributes
            .get(key)
            .or_else(|| key.split('.').try_fold(attributes, |v, part| v.get(part)));
        match found {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        }
    };
    assert_eq!(field("planwright.retry.attempt"), "1", "{retry:#}");
    assert_eq!(field("error.type"), "rate_limited", "{retry:#}");
    assert_eq!(field("http.response.status_code"), "429", "{retry:#}");
    assert_eq!(field("planwright.retry.delay_ms"), "0", "{retry:#}");
    assert_ne!(
        chat["status_code"], "ERROR",
        "the call succeeded in the end"
    );
}

/// The spans a local OTLP capture (a mock collector) received, decoded.
async fn captured_spans(
    collector: &wiremock::MockServer,
) -> Vec<opentelemetry_proto::tonic::trace::v1::Span> {
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use prost::Message as _;
    let mut spans = Vec::new();
    for request in collector.received_requests().await.unwrap_or_default() {
        let Ok(export) = ExportTraceServiceRequest::decode(request.body.as_slice()) else {
            continue;
        };
        for resource in export.resource_spans {
            for scope in resource.scope_spans {
                spans.extend(scope.spans);
            }
        }
    }
    spans
}

fn proto_attr(
    attributes: &[opentelemetry_proto::tonic::common::v1::KeyValue],
    key: &str,
) -> String {
    use opentelemetry_proto::tonic::common::v1::any_value::Value as V;
    attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref())
        .and_then(|v| v.value.as_ref())
        .map(|v| match v {
            V::StringValue(s) => s.clone(),
            V::IntValue(i) => i.to_string(),
            other => format!("{other:?}"),
        })
        .unwrap_or_default()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The `run_traceparent` a queued run keeps in its request (the context of its latest run
/// span).
fn kept_run_span(pw: &Planwright) -> String {
    let conn =
        rusqlite::Connection::open_with_flags(pw.db(), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("the database");
    let request: String = conn
        .query_row("SELECT queue_request FROM runs", [], |r| r.get(0))
        .expect("one queued run");
    let request: Value = serde_json::from_str(&request).expect("JSON");
    request["run_traceparent"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// A queue run suspended by SIGTERM and finished by the next server: the resumed run's
/// `invoke_workflow` span links to the interrupted one's, whose context the run kept in its
/// queue request. Read from a local capture (Phoenix does not show links).
#[tokio::test(flavor = "multi_thread")]
async fn a_resumed_runs_span_links_to_the_interrupted_one() {
    let collector = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .and(wiremock::matchers::path("/v1/traces"))
        .respond_with(wiremock::ResponseTemplate::new(200))
        .mount(&collector)
        .await;
    let llm = ScriptedOpenAi::start(vec![
        plan(&["Wait for the clock"]),
        call(
            "shell_exec",
            serde_json::json!({"command": "touch started && sleep 5"}),
        ),
        complete(true, "waited"),
        text("Waited."),
    ])
    .await;
    let pw = Planwright::new();
    pw.trusted_project(&format!(
        "[telemetry]\nendpoint = \"{}\"\n",
        collector.uri()
    ));
    let args = ["--retries", "0"];
    let mut server = pw.serve(&llm.base_url(), Some(TOKEN), &args).await;
    let (status, body) = create(
        &server,
        serde_json::json!({"task": "wait a little", "mode": "flow"}),
    )
    .await;
    assert!(status.is_success(), "{body}");
    let run_id = body["run_id"].as_str().expect("run id").to_string();
    let started = pw.workspace(&run_id).join("started");
    test_support::wait_until("the command to start", Duration::from_secs(60), || {
        started.exists()
    })
    .await;
    let pid = server.child.id().expect("pid");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(pid).expect("pid")),
        nix::sys::signal::Signal::SIGTERM,
    )
    .expect("SIGTERM");
    let exit = tokio::time::timeout(Duration::from_secs(60), server.child.wait())
        .await
        .expect("the server exits after SIGTERM")
        .expect("wait");
    assert!(exit.success(), "{exit}; {}", server.stderr_text());
    let first_life = kept_run_span(&pw);
    let parts: Vec<&str> = first_life.split('-').collect();
    assert_eq!(parts.len(), 4, "a traceparent is kept: {first_life:?}");
    let (first_trace, first_span) = (parts[1].to_string(), parts[2].to_string());

    let server = pw.serve(&llm.base_url(), Some(TOKEN), &args).await;
    until_completed(&server, std::slice::from_ref(&run_id), 60).await;
    let workflow = |s: &opentelemetry_proto::tonic::trace::v1::Span, how: &str| {
        s.name == "invoke_workflow planwright"
            && proto_attr(&s.attributes, "planwright.run.start") == how
    };
    let begun = Instant::now();
    let spans = loop {
        let spans = captured_spans(&collector).await;
        if spans.iter().any(|s| workflow(s, "resumed")) {
            break spans;
        }
        assert!(
            begun.elapsed() < Duration::from_secs(60),
            "the resumed run's span never came: {} spans\n{}",
            spans.len(),
            server.stderr_text()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let interrupted = spans
        .iter()
        .find(|s| workflow(s, "queued"))
        .expect("the first life's span, flushed at SIGTERM");
    assert_eq!(
        hex(&interrupted.span_id),
        first_span,
        "the kept context is its span"
    );
    assert_eq!(hex(&interrupted.trace_id), first_trace);
    let resumed = spans
        .iter()
        .find(|s| workflow(s, "resumed"))
        .expect("resumed");
    assert_eq!(resumed.links.len(), 1, "{:?}", resumed.links);
    let link = &resumed.links[0];
    assert_eq!(
        hex(&link.span_id),
        first_span,
        "linked to the interrupted span"
    );
    assert_eq!(hex(&link.trace_id), first_trace);
    assert_eq!(
        proto_attr(&link.attributes, "planwright.link"),
        "interrupted_run"
    );
    assert!(
        kept_run_span(&pw).contains(&hex(&resumed.span_id)),
        "the run now keeps its newest span"
    );
    assert!(
        spans
            .iter()
            .filter(|s| workflow(s, "queued"))
            .all(|s| s.links.is_empty()),
        "a first life links to nothing"
    );
}

/// MCP `run_task` on stdio (no HTTP headers) honours the caller's trace context in the
/// call's `params._meta` (MCP's convention): kept in the queued run's request.
#[tokio::test]
async fn mcp_run_task_on_stdio_keeps_the_traceparent_of_its_meta() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let llm = ScriptedOpenAi::start(Vec::new()).await;
    let pw = Planwright::new();
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_planwright"));
    cmd.args(pw.with_scripted_pipeline(&["mcp", "serve"]))
        .current_dir(pw.cwd());
    pw.isolate(&mut cmd);
    cmd.env("OPENAI_BASE_URL", llm.base_url())
        .env("OPENAI_API_KEY", "sk-test-secret")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    let mut child = cmd.spawn().expect("planwright mcp serve starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = tokio::io::BufReader::new(child.stdout.take().expect("stdout")).lines();
    let traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let messages = [
        serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}}}),
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "run_task", "arguments": {"task": "anything"},
                       "_meta": {"traceparent": traceparent, "tracestate": "vendor=1"}}}),
    ];
    for message in &messages {
        stdin
            .write_all(format!("{message}\n").as_bytes())
            .await
            .expect("write");
    }
    stdin.flush().await.expect("flush");
    let reply = tokio::time::timeout(Duration::from_secs(60), async {
        while let Ok(Some(line)) = stdout.next_line().await {
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if message["id"] == 1 {
                return message;
            }
        }
        Value::Null
    })
    .await
    .expect("run_task answers");
    assert!(reply.to_string().contains("run_id"), "{reply}");
    let conn =
        rusqlite::Connection::open_with_flags(pw.db(), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("the database");
    let request: String = conn
        .query_row("SELECT queue_request FROM runs", [], |r| r.get(0))
        .expect("one queued run");
    let request: Value = serde_json::from_str(&request).expect("JSON");
    assert_eq!(request["traceparent"], traceparent, "{request}");
    assert_eq!(request["tracestate"], "vendor=1", "{request}");
    drop(stdin);
    let _ = child.kill().await;
}

/// A tool call to an MCP server carries its `execute_tool` span's context in the request's
/// `_meta` (MCP's convention; the same on stdio and HTTP), so a traced server continues
/// the run's trace. The server is a dependency-free Python script.
#[tokio::test(flavor = "multi_thread")]
async fn a_call_to_an_mcp_server_carries_the_tool_spans_traceparent_in_its_meta() {
    let python = Command::new("python3").arg("--version").output();
    if !test_support::skip_unless(
        python.is_ok_and(|o| o.status.success()),
        "python3 is not installed (apt-get install python3)",
    ) {
        return;
    }
    let collector = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .and(wiremock::matchers::path("/v1/traces"))
        .respond_with(wiremock::ResponseTemplate::new(200))
        .mount(&collector)
        .await;
    let pw = Planwright::new();
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/mcp-meta-echo-server.py")
        .display()
        .to_string();
    let seen = pw.cwd().join("meta.json");
    pw.trusted_project(&format!(
        "[telemetry]\nendpoint = \"{}\"\n\n[mcp_servers.echo]\ncommand = \"python3\"\n\
         args = [{script:?}, {seen:?}]\nstartup_timeout_secs = 30\n",
        collector.uri(),
        seen = seen.display().to_string(),
    ));
    let llm = ScriptedOpenAi::start(vec![
        plan(&["Echo a greeting"]),
        call("mcp__echo__echo", serde_json::json!({"text": "hello"})),
        complete(true, "echoed"),
        text("Echoed."),
    ])
    .await;
    let res = pw.run(&llm, "echo a greeting", &[]).await;
    assert_eq!(res.code(), 0, "{}", res.stderr());
    let meta: Value =
        serde_json::from_str(&std::fs::read_to_string(&seen).expect("the server was called"))
            .expect("JSON");
    let traceparent = meta["traceparent"].as_str().unwrap_or_default().to_string();
    let parts: Vec<&str> = traceparent.split('-').collect();
    assert_eq!(parts.len(), 4, "a traceparent in _meta: {meta}");

    let begun = Instant::now();
    let tool = loop {
        let spans = captured_spans(&collector).await;
        if let Some(tool) = spans
            .into_iter()
            .find(|s| s.name == "execute_tool mcp__echo__echo")
        {
            break tool;
        }
        assert!(
            begun.elapsed() < Duration::from_secs(30),
            "the tool span never came"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(parts[1], hex(&tool.trace_id), "the run's trace");
    assert_eq!(
        parts[2],
        hex(&tool.span_id),
        "the tool call's span is the parent"
    );
}

/// Issue 41, Medium 10: with export on and the content switch off, no exported span,
/// attribute, event or status carries the task, a tool's output or an error's text. The
/// run's task and a command's output hold a marker, and the LLM server then fails quoting
/// the prompt (some do), which fails the run: before, the run span's status quoted the task
/// and the error, and the `chat` span's the prompt. Read from a local capture.
#[tokio::test]
async fn without_the_content_switch_no_span_carries_the_task_a_tool_output_or_an_error() {
    const MARKER: &str = "zq41-marker";
    let collector = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .and(wiremock::matchers::path("/v1/traces"))
        .respond_with(wiremock::ResponseTemplate::new(200))
        .mount(&collector)
        .await;
    let upstream_error = || {
        wiremock::ResponseTemplate::new(400).set_body_json(serde_json::json!({"error": {
            "message": format!("invalid request: the prompt 'Look at {MARKER}-task' is not allowed"),
            "type": "invalid_request_error", "param": null, "code": null}}))
    };
    let mut script = vec![
        plan(&["Look at the note"]),
        call(
            "shell_exec",
            serde_json::json!({"command": format!("echo {MARKER}-output")}),
        ),
    ];
    script.extend((0..20).map(|_| upstream_error()));
    let llm = ScriptedOpenAi::start(script).await;
    let pw = Planwright::new();
    let base = llm.base_url();
    let endpoint = collector.uri();
    let task = format!("Look at {MARKER}-task and report what it says");
    let out = pw
        .exec(
            &[
                "run",
                "--json",
                "--retries",
                "0",
                "--sandbox",
                "none",
                &task,
            ],
            &[
                ("OPENAI_BASE_URL", base.as_str()),
                ("OPENAI_API_KEY", "sk-test-secret"),
                ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
            ],
        )
        .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        llm.requests()
            .await
            .iter()
            .any(|r| r.to_string().contains(&format!("{MARKER}-output"))),
        "the command's output went to the model: {stderr}"
    );
    let begun = Instant::now();
    let spans = loop {
        let spans = captured_spans(&collector).await;
        if spans.iter().any(|s| s.name == "invoke_workflow planwright") {
            break spans;
        }
        assert!(
            begun.elapsed() < Duration::from_secs(60),
            "the run's span never came: {} spans\n{stderr}",
            spans.len()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let run = spans
        .iter()
        .find(|s| s.name == "invoke_workflow planwright")
        .expect("the run span");
    let status = run.status.clone().unwrap_or_default();
    assert_eq!(status.code, 2, "the run failed: ERROR status: {run:?}");
    assert!(!status.message.is_empty(), "a fixed text says so");
    assert!(
        !proto_attr(&run.attributes, "error.type").is_empty(),
        "{run:?}"
    );
    let failed_chat = spans
        .iter()
        .find(|s| {
            s.name.starts_with("chat ") && proto_attr(&s.attributes, "error.type") == "permanent"
        })
        .expect("the failed LLM call's span");
    assert_eq!(
        failed_chat.status.clone().unwrap_or_default().message,
        "the LLM call failed"
    );
    assert!(spans.iter().any(|s| s.name == "execute_tool shell_exec"));
    for span in &spans {
        let shown = format!("{span:?}");
        assert!(
            !shown.contains(MARKER),
            "span {} carries content: {shown}",
            span.name
        );
    }
}
