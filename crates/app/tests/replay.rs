//! `planwright run --record FILE` and `--replay FILE`: a recorded run is a regression test.
//!
//! `tests/cassettes/greeting.jsonl` was recorded from the real binary against the scripted
//! server below. When prompts or tool schemas change on purpose, re-record it with
//!
//! ```sh
//! cargo test -p planwright --test replay -- --ignored regenerate_cassettes
//! ```
//!
//! and commit the new file with the change that caused it.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use serde_json::{json, Value};

const TASK: &str =
    "Write greeting.txt containing 'hello planwright', count its words, report the count";

/// The cassette was recorded without a sandbox, and the shell tools' descriptions (part of
/// every request) depend on it: its runs pin `--sandbox none`, the same on every machine.
const UNSANDBOXED: (&str, &str) = ("PLANWRIGHT_SANDBOX", "none");

/// The plan-size cap is part of the planner's prompt and its default depends on the model
/// (docs/direct.md, "Plan size"): recording (an endpoint) and replaying (no endpoint) pin it.
const PLAN_CAP: [&str; 2] = ["--max-plan-steps", "6"];

fn cassette() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("cassettes")
        .join("greeting.jsonl")
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
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

/// Records `greeting_script(true)` into `path` with the real binary; returns the run's outcome.
async fn record_greeting(path: &Path) -> (RunResult, usize) {
    let server = ScriptedOpenAi::start(greeting_script(true)).await;
    let pw = Planwright::new();
    let file = path.display().to_string();
    let res = pw
        .run(
            &server,
            TASK,
            &[
                "--record",
                &file,
                "--sandbox",
                "none",
                PLAN_CAP[0],
                PLAN_CAP[1],
            ],
        )
        .await;
    (res, server.requests().await.len())
}

#[tokio::test]
#[ignore = "re-records tests/cassettes/greeting.jsonl; run when prompts change on purpose"]
async fn regenerate_cassettes() {
    let path = cassette();
    let (res, requests) = record_greeting(&path).await;
    assert_eq!(res.code(), 0, "stderr:\n{}", res.stderr());
    assert_eq!(res.json["status"], "completed");
    assert_eq!(
        lines(&path).len(),
        requests + 1,
        "a header and one line per call"
    );
}

#[tokio::test]
async fn the_greeting_cassette_replays_offline() {
    // No OPENAI_* variable at all (exec removes them): the replay needs no endpoint.
    let pw = Planwright::new();
    let file = cassette().display().to_string();
    let out = pw
        .exec(
            &[
                "run",
                "--json",
                "--replay",
                &file,
                PLAN_CAP[0],
                PLAN_CAP[1],
                TASK,
            ],
            &[UNSANDBOXED],
        )
        .await;
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(0), "stderr:\n{stderr}");
    let j = stdout_json(&out);
    assert_eq!(j["status"], "completed", "{j}");
    assert_eq!(
        j["summary"],
        "Completed: 3 of 3 steps done.\n\ngreeting.txt was written; it has 2 words.\n\nFiles:\n- created: greeting.txt"
    );
    let run_id = j["run_id"].as_str().expect("run_id");
    let written = std::fs::read_to_string(pw.workspace(run_id).join("greeting.txt"))
        .expect("the shell step wrote greeting.txt");
    assert_eq!(written, "hello planwright\n");
    assert!(!stderr.contains("error:"), "{stderr}");
}

#[tokio::test]
async fn a_replay_of_another_task_diverges_at_request_1() {
    let pw = Planwright::new();
    let file = cassette().display().to_string();
    let out = pw
        .exec(
            &[
                "run",
                "--json",
                "--replay",
                &file,
                "--retries",
                "0",
                "Write farewell.txt instead",
            ],
            &[UNSANDBOXED],
        )
        .await;
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(1), "stderr:\n{stderr}");
    let error_line = stderr
        .lines()
        .find(|l| l.starts_with("error: "))
        .unwrap_or_else(|| panic!("no error line in:\n{stderr}"));
    assert!(
        error_line.starts_with("error: replay diverged at request #1 (purpose plan)"),
        "{error_line}"
    );
    assert!(error_line.contains("$.messages["), "{error_line}");
    assert!(
        error_line.contains("Write farewell.txt instead"),
        "{error_line}"
    );
    assert!(error_line.contains("greeting.jsonl"), "{error_line}");
}

#[tokio::test]
async fn record_then_replay_round_trip_without_the_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("run.jsonl");
    let (res, requests) = record_greeting(&path).await;
    assert_eq!(res.code(), 0, "stderr:\n{}", res.stderr());

    let text = std::fs::read_to_string(&path).expect("cassette");
    assert!(!text.contains("sk-test-secret"), "the key leaked:\n{text}");
    let recorded = lines(&path);
    assert_eq!(recorded.len(), requests + 1);
    assert_eq!(recorded[0]["cassette"], 1);
    assert_eq!(recorded[0]["model"], "gpt-4o-mini");
    for (i, entry) in recorded[1..].iter().enumerate() {
        assert_eq!(entry["seq"], json!(i + 1));
        assert!(entry["request"]["messages"].is_array(), "{entry}");
        assert!(entry["response"].is_object(), "{entry}");
    }

    let pw = Planwright::new();
    let file = path.display().to_string();
    let out = pw
        .exec(
            &[
                "run",
                "--json",
                "--replay",
                &file,
                PLAN_CAP[0],
                PLAN_CAP[1],
                TASK,
            ],
            &[UNSANDBOXED],
        )
        .await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout_json(&out)["status"], "completed");

    // Drop the summary call: the run now asks one request more than the cassette holds.
    let cut: Vec<&str> = text.lines().collect();
    let short = dir.path().join("short.jsonl");
    std::fs::write(&short, cut[..cut.len() - 1].join("\n")).expect("write");
    let file = short.display().to_string();
    let out = pw
        .exec(
            &[
                "run",
                "--json",
                "--replay",
                &file,
                PLAN_CAP[0],
                PLAN_CAP[1],
                TASK,
            ],
            &[UNSANDBOXED],
        )
        .await;
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "error: replay diverged at request #{requests}: the cassette"
        )),
        "{stderr}"
    );
    assert!(stderr.contains("no more recorded requests"), "{stderr}");
}

#[tokio::test]
async fn a_missing_cassette_is_a_usage_error() {
    let pw = Planwright::new();
    let out = pw
        .exec(&["run", "--replay", "no/such/file.jsonl", "x"], &[])
        .await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot replay"), "{stderr}");
    assert!(stderr.contains("no/such/file.jsonl"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
}

#[tokio::test]
async fn record_and_replay_together_is_a_usage_error() {
    let pw = Planwright::new();
    let out = pw
        .exec(
            &["run", "--record", "a.jsonl", "--replay", "b.jsonl", "x"],
            &[],
        )
        .await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot be used with"), "{stderr}");
}
