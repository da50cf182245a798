//! Durable runs: the real `planwright` binary is SIGKILLed at a chosen point of a scripted
//! three-step task (each step appends a line to a file with the shell tool), then
//! `planwright resume` finishes it. Each finished tool call must have taken effect exactly
//! once, the event log must stay gap-free, and no event written before the kill may be lost.

mod common;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// Where the first occurrence of a request is held back, so the kill lands there.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Hold {
    /// Executor turn `turn` of step `step` (0-based).
    Turn {
        step: u32,
        turn: u32,
    },
    Summary,
}

/// Answers by what is asked: the planner gets a 3-step plan; step N appends "N" to log.txt,
/// then completes; a call whose outcome was lost is checked and redone only if needed.
struct TaskScript {
    hold: Option<Hold>,
    held: Mutex<HashSet<Hold>>,
    /// Set once the run was killed: the resumed run is never held.
    released: Arc<AtomicBool>,
    /// Shell command of step 1's first turn (to make it slow in one scenario).
    slow_step: Option<u32>,
}

fn step_and_turn(body: &Value) -> Option<(u32, u32)> {
    let messages = body["messages"].as_array()?;
    let prompt = messages.iter().find(|m| m["role"] == "user")?["content"].as_str()?;
    let rest = prompt.split_once("You are now working on step ")?.1;
    let step: u32 = rest.split(':').next()?.trim().parse().ok()?;
    let turn = messages.iter().filter(|m| m["role"] == "assistant").count() as u32;
    Some((step, turn))
}

impl Respond for TaskScript {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let tools: Vec<String> = body["tools"]
            .as_array()
            .map(|ts| {
                ts.iter()
                    .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        let (reply, here) = if tools.iter().any(|t| t == "planning") {
            (
                plan(&[
                    "Append 1 to log.txt",
                    "Append 2 to log.txt",
                    "Append 3 to log.txt",
                ]),
                None,
            )
        } else if let Some((step, turn)) = step_and_turn(&body) {
            let n = step + 1;
            let last_tool = body["messages"]
                .as_array()
                .and_then(|ms| ms.iter().rev().find(|m| m["role"] == "tool"))
                .and_then(|m| m["content"].as_str())
                .unwrap_or_default()
                .to_string();
            let reply = if last_tool.contains("Interrupted, outcome unknown") {
                // The model checks before redoing a call whose outcome was lost.
                call(
                    "shell_exec",
                    json!({"command": format!("grep -qx {n} log.txt || echo {n} >> log.txt")}),
                )
            } else if turn == 0 {
                let slow = if self.slow_step == Some(step) {
                    " && sleep 20"
                } else {
                    ""
                };
                call(
                    "shell_exec",
                    json!({"command": format!("echo {n} >> log.txt{slow}")}),
                )
            } else {
                complete(true, &format!("appended {n}"))
            };
            (reply, Some(Hold::Turn { step, turn }))
        } else {
            (text("All three lines were appended."), Some(Hold::Summary))
        };
        if here.is_some() && here == self.hold && !self.released.load(Ordering::SeqCst) {
            let first = self
                .held
                .lock()
                .map(|mut h| h.insert(here.unwrap_or(Hold::Summary)))
                .unwrap_or(false);
            if first {
                return reply.set_delay(Duration::from_secs(60));
            }
        }
        reply
    }
}

async fn server(
    hold: Option<Hold>,
    slow_step: Option<u32>,
    released: Arc<AtomicBool>,
) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(TaskScript {
            hold,
            held: Mutex::new(HashSet::new()),
            released,
            slow_step,
        })
        .mount(&server)
        .await;
    server
}

/// Starts `planwright run`, waits until `ready` holds for the run's events, SIGKILLs it,
/// resumes the run, and checks the outcome. Returns the resumed run's events.
async fn kill_and_resume(
    hold: Option<Hold>,
    slow_step: Option<u32>,
    ready: impl Fn(&[(i64, String, Value)]) -> bool,
) -> Vec<(i64, String, Value)> {
    let released = Arc::new(AtomicBool::new(false));
    let server = server(hold, slow_step, released.clone()).await;
    let base = format!("{}/v1", server.uri());
    let pw = Planwright::new();
    let env = [
        ("OPENAI_BASE_URL", base.as_str()),
        ("OPENAI_API_KEY", "sk-test"),
    ];
    let mut child = pw.spawn(
        &["run", "--json", "--retries", "0", "append three lines"],
        &env,
    );
    // Wait for the chosen point; the run's id is in the database once it started.
    let deadline = Instant::now() + Duration::from_secs(60);
    let run_id = loop {
        assert!(
            Instant::now() < deadline,
            "the chosen point was never reached"
        );
        if let Some(id) = pw.only_run_id() {
            if ready(&pw.events(&id)) {
                break id;
            }
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("planwright ended before the kill point: {status}");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    child.start_kill().expect("SIGKILL");
    let _ = child.wait().await;
    released.store(true, Ordering::SeqCst);
    let before = pw.events(&run_id);

    // The killed run shows as interrupted.
    let db = pw.db().display().to_string();
    let out = pw.exec(&["runs", "list", "--json", "--db", &db], &[]).await;
    let list: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(list[0]["status"], "interrupted", "{list}");

    // Its usage was saved as it went: every call it logged is counted.
    let out = pw
        .exec(&["runs", "show", &run_id, "--json", "--db", &db], &[])
        .await;
    let show: Value = serde_json::from_slice(&out.stdout).expect("json");
    let calls = tool_calls(&before, "llm_called") as u64;
    assert!(
        calls >= 2,
        "the kill came after the plan and a step's call: {calls}"
    );
    assert_eq!(
        show["usage"],
        json!({
            "llm_calls": calls,
            "prompt_tokens": calls * 100,
            "completion_tokens": calls * 20,
            "cached_prompt_tokens": calls * 64,
        }),
        "{show}"
    );

    let out = pw
        .exec(&["resume", &run_id, "--json", "--retries", "0"], &env)
        .await;
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(0), "resume failed:\n{stderr}");
    let outcome: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(outcome["status"], "completed", "{outcome}");
    assert_eq!(outcome["run_id"], run_id.as_str());

    // Every append happened exactly once.
    let log = std::fs::read_to_string(pw.workspace(&run_id).join("log.txt")).expect("log.txt");
    assert_eq!(log, "1\n2\n3\n", "each effect exactly once");

    // The log is gap-free and keeps every event written before the kill.
    let after = pw.events(&run_id);
    for (i, (seq, _, _)) in after.iter().enumerate() {
        assert_eq!(*seq, i as i64 + 1, "gap-free sequence");
    }
    assert_eq!(
        &after[..before.len()],
        &before[..],
        "no event lost or rewritten"
    );
    assert_eq!(after[before.len()].1, "run_resumed");
    // The resumed run's usage counts the calls made before the kill and after it.
    let calls = tool_calls(&after, "llm_called") as u64;
    assert_eq!(outcome["usage"]["llm_calls"], calls, "{outcome}");
    assert_eq!(
        outcome["usage"]["cached_prompt_tokens"],
        calls * 64,
        "{outcome}"
    );
    assert_eq!(after.last().map(|e| e.1.as_str()), Some("run_completed"));
    after
}

fn tool_calls(events: &[(i64, String, Value)], kind: &str) -> usize {
    events.iter().filter(|(_, t, _)| t == kind).count()
}

fn has(events: &[(i64, String, Value)], kind: &str, step: &str) -> bool {
    events
        .iter()
        .any(|(_, t, j)| t == kind && j["step_id"] == step)
}

#[tokio::test]
async fn killed_after_a_tool_call_started() {
    // Step 2's command appends, then sleeps: the kill lands while it runs, so its outcome
    // was never recorded. The resumed model is told so and checks before redoing it.
    let events = kill_and_resume(None, Some(1), |ev| {
        ev.iter()
            .any(|(_, t, j)| t == "tool_calling" && j["step_id"] == "s2")
    })
    .await;
    let resumed = events
        .iter()
        .find(|(_, t, _)| t == "run_resumed")
        .expect("run_resumed");
    let interrupted = resumed.2["interrupted_calls"].to_string();
    assert!(interrupted.contains("shell_exec"), "{interrupted}");
    assert!(events.iter().any(|(_, t, j)| t == "tool_called"
        && j["output"]
            .as_str()
            .unwrap_or_default()
            .contains("Interrupted, outcome unknown")));
}

#[tokio::test]
async fn killed_after_a_tool_call_finished() {
    let events = kill_and_resume(Some(Hold::Turn { step: 1, turn: 1 }), None, |ev| {
        has(ev, "tool_called", "s2")
    })
    .await;
    // Three appends, each run once: the finished call of step 2 was not run again.
    assert_eq!(tool_calls(&events, "tool_calling"), 3);
    assert_eq!(tool_calls(&events, "tool_called"), 3);
}

#[tokio::test]
async fn killed_between_steps() {
    let events = kill_and_resume(Some(Hold::Turn { step: 2, turn: 0 }), None, |ev| {
        has(ev, "step_completed", "s2")
    })
    .await;
    assert_eq!(tool_calls(&events, "step_completed"), 3);
    assert_eq!(tool_calls(&events, "tool_calling"), 3);
}

#[tokio::test]
async fn killed_during_the_summary() {
    let events = kill_and_resume(Some(Hold::Summary), None, |ev| {
        has(ev, "step_completed", "s3")
    })
    .await;
    assert_eq!(tool_calls(&events, "step_completed"), 3);
    assert_eq!(tool_calls(&events, "tool_calling"), 3);
}

#[tokio::test]
async fn a_finished_run_cannot_be_resumed_and_an_unknown_run_is_a_usage_error() {
    let server = server(None, None, Arc::new(AtomicBool::new(true))).await;
    let base = format!("{}/v1", server.uri());
    let pw = Planwright::new();
    let env = [
        ("OPENAI_BASE_URL", base.as_str()),
        ("OPENAI_API_KEY", "sk-test"),
    ];
    let out = pw
        .exec(&["run", "--json", "append three lines"], &env)
        .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run_id = pw.only_run_id().expect("run");
    let out = pw.exec(&["resume", &run_id], &env).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing to resume"));
    let out = pw.exec(&["resume", "run_nope"], &env).await;
    assert_eq!(out.status.code(), Some(2));

    // `runs events` prints the log; `runs delete` removes the run and its workspace.
    let out = pw.exec(&["runs", "events", &run_id, "--json"], &[]).await;
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(lines.len(), pw.events(&run_id).len());
    assert_eq!(
        lines.last().map(|e| e["type"].clone()),
        Some(json!("run_completed"))
    );
    let out = pw.exec(&["runs", "events", &run_id, "--follow"], &[]).await;
    assert!(out.status.success(), "--follow ends at the final event");
    let out = pw.exec(&["runs", "delete", &run_id], &[]).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!pw.workspace(&run_id).exists());
    assert!(pw.events(&run_id).is_empty());
    let out = pw.exec(&["runs", "show", &run_id], &[]).await;
    assert_eq!(out.status.code(), Some(2));
}

/// Ownership is a lease, not a pid: a run whose owner is alive cannot be resumed; once the
/// owner is killed, three `resume` commands started together race for the lease and exactly
/// one resumes (the others exit 2 with the reason), and every append still happened once.
#[tokio::test]
async fn a_held_run_is_refused_and_of_three_concurrent_resumes_exactly_one_wins() {
    let released = Arc::new(AtomicBool::new(false));
    let server = server(
        Some(Hold::Turn { step: 1, turn: 0 }),
        None,
        released.clone(),
    )
    .await;
    let base = format!("{}/v1", server.uri());
    let pw = Planwright::new();
    let env = [
        ("OPENAI_BASE_URL", base.as_str()),
        ("OPENAI_API_KEY", "sk-test"),
    ];
    let mut child = pw.spawn(
        &["run", "--json", "--retries", "0", "append three lines"],
        &env,
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    let run_id = loop {
        assert!(Instant::now() < deadline, "step 2 never started");
        if let Some(id) = pw.only_run_id() {
            if has(&pw.events(&id), "step_started", "s2") {
                break id;
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };

    // The owner is alive (held in step 2's LLM call): resume is refused, the run goes on.
    let out = pw
        .exec(&["resume", &run_id, "--json", "--retries", "0"], &env)
        .await;
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("is being run by"), "{stderr}");
    let db = pw.db().display().to_string();
    let out = pw.exec(&["runs", "list", "--json", "--db", &db], &[]).await;
    let list: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(list[0]["status"], "running", "{list}");

    child.start_kill().expect("SIGKILL");
    let _ = child.wait().await;
    released.store(true, Ordering::SeqCst);

    let args = ["resume", run_id.as_str(), "--json", "--retries", "0"];
    let resumes = (0..3).map(|_| pw.exec(&args, &env));
    let outs = futures_util::future::join_all(resumes).await;
    let codes: Vec<Option<i32>> = outs.iter().map(|o| o.status.code()).collect();
    let winners = codes.iter().filter(|c| **c == Some(0)).count();
    assert_eq!(winners, 1, "exactly one resume goes on: {codes:?}");
    assert_eq!(
        codes.iter().filter(|c| **c == Some(2)).count(),
        2,
        "the others are refused: {codes:?}"
    );
    for out in outs.iter().filter(|o| o.status.code() == Some(2)) {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("is being run by") || stderr.contains("nothing to resume"),
            "a clear reason: {stderr}"
        );
    }
    let events = pw.events(&run_id);
    assert_eq!(tool_calls(&events, "run_resumed"), 1, "one resume happened");
    let log = std::fs::read_to_string(pw.workspace(&run_id).join("log.txt")).expect("log.txt");
    assert_eq!(log, "1\n2\n3\n", "each effect exactly once");
}

/// Whether unsandboxed commands get their own PID namespace here (Planwright as root).
fn contained() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|v| v.split_whitespace().nth(1).map(|uid| uid == "0"))
        .unwrap_or(false)
}

/// Pids of live, non-zombie processes whose `argv[0]` is `marker`.
fn pids_named(marker: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .map(|entries| {
            entries
                .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
                .filter(|pid| {
                    let argv0 = std::fs::read(format!("/proc/{pid}/cmdline"))
                        .ok()
                        .and_then(|c| c.split(|b| *b == 0).next().map(<[u8]>::to_vec));
                    let state = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                        .ok()
                        .and_then(|s| s.rsplit_once(") ").map(|(_, r)| r.starts_with(['Z', 'X'])));
                    argv0.as_deref() == Some(marker.as_bytes()) && state == Some(false)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `kill -9` of Planwright ends the commands it started, even one that detached from the
/// command's process group (parent-death signal + a PID namespace per command).
#[tokio::test]
async fn a_killed_planwright_leaves_no_command_behind() {
    if !test_support::skip_unless(
        contained(),
        "commands are contained only as root (CI runs as root)",
    ) {
        return;
    }
    killed_planwright_leaves_no_command("none").await;
}

/// As above, in the bubblewrap sandbox (`--die-with-parent`, its own PID namespace).
#[tokio::test]
async fn a_killed_planwright_leaves_no_sandboxed_command_behind() {
    if !bwrap_works("a_killed_planwright_leaves_no_sandboxed_command_behind") {
        return;
    }
    killed_planwright_leaves_no_command("bwrap").await;
}

async fn killed_planwright_leaves_no_command(sandbox: &str) {
    let marker = format!("pw-orphan-{sandbox}-{}", std::process::id());
    let llm = ScriptedOpenAi::start(vec![
        plan(&["Start a long command"]),
        call(
            "shell_exec",
            json!({
                "command": format!("(setsid bash -c 'exec -a {marker} sleep 300' &); exec -a {marker} sleep 300"),
                "timeout_secs": 600
            }),
        ),
    ])
    .await;
    let pw = Planwright::new();
    let base = llm.base_url();
    let mut child = pw.spawn(
        &[
            "run",
            "--json",
            "--sandbox",
            sandbox,
            "start a long command",
        ],
        &[
            ("OPENAI_BASE_URL", base.as_str()),
            ("OPENAI_API_KEY", "sk-test"),
        ],
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    while pids_named(&marker).len() < 2 {
        assert!(Instant::now() < deadline, "the commands never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    child.start_kill().expect("SIGKILL");
    let _ = child.wait().await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while !pids_named(&marker).is_empty() {
        assert!(
            Instant::now() < deadline,
            "still running after planwright died: {:?}",
            pids_named(&marker)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A database written by the build before journal hashes had a fixed definition
/// (`tests/fixtures/journal-before-fnv1a.db`, schema 3: a run SIGKILLed while its first
/// command ran, its LLM calls journaled with std's hasher). Today's build migrates it,
/// recognises the journaled executor turn (the command is reported interrupted instead of
/// the model being asked again from scratch) and finishes the run.
///
/// Ignored since code actions (issue 43): the fixture's journaled executor request holds
/// the prompts and tool list of the builds before them, so no build after them can match
/// it, whatever the hash. A new fixture needs a database journaled with std's hasher by a
/// build with today's prompts, which no longer exists; the `fnv1a:`/legacy hash recognition
/// itself is unit-tested in `domain::engine::journal`.
#[tokio::test]
#[ignore = "the fixture's prompts predate code actions (issue 43)"]
async fn a_run_journaled_by_the_previous_build_resumes() {
    let pw = Planwright::new();
    std::fs::create_dir_all(pw.db().parent().expect("folder")).expect("mkdir");
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/journal-before-fnv1a.db"
        ),
        pw.db(),
    )
    .expect("fixture");
    // A database Planwright did not create here is used once the folder is trusted.
    pw.trust();
    let (run_id, workspace): (String, String) = {
        let conn = rusqlite::Connection::open(pw.db()).expect("open");
        conn.query_row("SELECT run_id, workspace FROM runs", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .expect("the fixture's run")
    };
    // The prompts name the workspace, so the run keeps the one it was recorded with.
    std::fs::create_dir_all(&workspace).expect("workspace");
    let llm = ScriptedOpenAi::start(vec![
        complete(true, "the command was interrupted; nothing left to do"),
        text("The long command was interrupted."),
    ])
    .await;
    let base = llm.base_url();
    let out = pw
        .exec(
            // Journaled unsandboxed: the shell tools' descriptions, part of the journal's
            // hashes, depend on the sandbox.
            &[
                "resume",
                &run_id,
                "--json",
                "--retries",
                "0",
                "--sandbox",
                "none",
            ],
            &[
                ("OPENAI_BASE_URL", base.as_str()),
                ("OPENAI_API_KEY", "sk-test"),
            ],
        )
        .await;
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let outcome: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(outcome["status"], "completed", "{outcome}");
    let requests = llm.requests().await;
    assert!(
        tool_messages(&requests[0])
            .iter()
            .any(|m| m.contains("Interrupted, outcome unknown")),
        "the recorded executor turn was served from the journal: {}",
        requests[0]
    );
    assert!(
        !requests.iter().any(|r| r["tools"]
            .as_array()
            .is_some_and(|ts| ts.iter().any(|t| t["function"]["name"] == "planning"))),
        "no new plan was asked for"
    );
}
