//! The command-line conventions of the real `planwright` binary: the sandbox by default
//! (`--sandbox auto`), `-q`/`-v`/`-vv`, no colours off a terminal, `completions`,
//! `--output jsonl`, `doctor` and what `--help` says first.
//!
//! A "broken" bubblewrap is a `bwrap` script that fails, first on `PATH`: what a container
//! without user namespaces looks like to the probe.

mod common;

use std::path::Path;

use common::*;
use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

const TASK: &str =
    "Write greeting.txt containing 'hello planwright', count its words, report the count";

/// A PATH whose first folder holds a `bwrap` that always fails as a restricted one does.
fn broken_bwrap_path(dir: &Path) -> String {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("fake-bin");
    std::fs::create_dir_all(&bin).expect("fake-bin");
    let bwrap = bin.join("bwrap");
    std::fs::write(
        &bwrap,
        "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n",
    )
    .expect("write bwrap");
    std::fs::set_permissions(&bwrap, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// `planwright ARGS TASK` against `server` with `env` added; `ARGS` come before the task.
async fn run_with(
    pw: &Planwright,
    server: &ScriptedOpenAi,
    args: &[&str],
    env: &[(&str, &str)],
) -> std::process::Output {
    let base = server.base_url();
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.push(TASK);
    let mut vars = vec![
        ("OPENAI_BASE_URL", base.as_str()),
        ("OPENAI_API_KEY", "sk-test-secret"),
    ];
    vars.extend_from_slice(env);
    pw.exec(&all, &vars).await
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

const WARNING: &str = "warning: bubblewrap is not usable here (";

#[tokio::test]
async fn the_default_sandbox_is_bubblewrap_when_it_works() {
    if !bwrap_works("the_default_sandbox_is_bubblewrap_when_it_works") {
        return;
    }
    let server = ScriptedOpenAi::start(greeting_script(false)).await;
    let pw = Planwright::new();
    let out = run_with(&pw, &server, &["--json"], &[]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("  sandbox: bwrap\n"), "{err}");
    assert!(!err.contains("warning"), "{err}");
}

#[tokio::test]
async fn a_broken_bubblewrap_means_no_sandbox_and_one_warning() {
    let server = ScriptedOpenAi::start(greeting_script(false)).await;
    let pw = Planwright::new();
    let path = broken_bwrap_path(pw.cwd());
    let out = run_with(&pw, &server, &["--json"], &[("PATH", &path)]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert!(warnings[0].starts_with(WARNING), "{err}");
    assert!(warnings[0].contains("No permissions to create new namespace"));
    assert!(warnings[0].ends_with("shell commands run unsandboxed; --sandbox none silences this"));
    assert!(err.contains("  sandbox: none\n"), "{err}");
    let json: Value = serde_json::from_str(stdout(&out).trim()).expect("one JSON object");
    assert_eq!(json["status"], "completed");
}

#[tokio::test]
async fn sandbox_none_is_silent_and_sandbox_bwrap_requires_it() {
    let pw = Planwright::new();
    let path = broken_bwrap_path(pw.cwd());
    let server = ScriptedOpenAi::start(greeting_script(false)).await;
    let none = run_with(&pw, &server, &["--sandbox", "none"], &[("PATH", &path)]).await;
    assert_eq!(none.status.code(), Some(0), "{}", stderr(&none));
    assert!(!stderr(&none).contains("warning"), "{}", stderr(&none));
    let quiet = ScriptedOpenAi::start(greeting_script(false)).await;
    let q = run_with(&pw, &quiet, &["-q"], &[("PATH", &path)]).await;
    assert_eq!(q.status.code(), Some(0), "{}", stderr(&q));
    assert!(!stderr(&q).contains("warning"), "{}", stderr(&q));

    let bwrap = run_with(&pw, &server, &["--sandbox", "bwrap"], &[("PATH", &path)]).await;
    assert_eq!(bwrap.status.code(), Some(2), "{}", stderr(&bwrap));
    assert!(
        stderr(&bwrap).contains("--sandbox bwrap is not usable here"),
        "{}",
        stderr(&bwrap)
    );
}

#[tokio::test]
async fn serve_and_worker_refuse_to_run_unsandboxed_unless_told() {
    let pw = Planwright::new();
    let path = broken_bwrap_path(pw.cwd());
    let env = [
        ("PATH", path.as_str()),
        ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
    ];
    for args in [&["serve", "--addr", "127.0.0.1:0"][..], &["worker"][..]] {
        let command = args[0];
        let out = pw.exec(args, &env).await;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{command}: {err}");
        assert_eq!(err.lines().count(), 1, "{command}: {err}");
        assert!(err.contains("pass --sandbox none"), "{command}: {err}");
        assert!(err.contains(&format!("`planwright {command}`")), "{err}");
    }
    let (_child, log) = pw.spawn_logged(
        &["serve", "--addr", "127.0.0.1:0", "--sandbox", "none"],
        &env,
    );
    log.wait_for("listening on http://", 30).await;
    assert!(log.text().contains("sandbox: none"), "{}", log.text());
    assert!(!log.text().contains("warning"), "{}", log.text());
    // -q keeps the address (the only way to learn a port picked by the system), nothing else.
    let (_child, log) = pw.spawn_logged(
        &["serve", "-q", "--addr", "127.0.0.1:0", "--sandbox", "none"],
        &env,
    );
    log.wait_for("listening on http://", 30).await;
    assert_eq!(log.text().trim().lines().count(), 1, "{}", log.text());
}

#[tokio::test]
async fn quiet_keeps_only_the_result_and_vv_logs_debug_without_colours() {
    let pw = Planwright::new();
    let server = ScriptedOpenAi::start(greeting_script(false)).await;
    let quiet = run_with(&pw, &server, &["-q", "--json"], &[]).await;
    assert_eq!(quiet.status.code(), Some(0), "{}", stderr(&quiet));
    assert_eq!(
        stderr(&quiet),
        "",
        "-q writes nothing on stderr for a good run"
    );
    let json: Value = serde_json::from_str(stdout(&quiet).trim()).expect("the result");
    assert_eq!(json["status"], "completed");

    // -vv beats PLANWRIGHT_LOG (the harness sets it to `warn`).
    let server = ScriptedOpenAi::start(greeting_script(false)).await;
    let loud = run_with(&pw, &server, &["-vv"], &[]).await;
    let err = stderr(&loud);
    assert_eq!(loud.status.code(), Some(0), "{err}");
    assert!(err.contains(" DEBUG "), "{err}");
    assert!(
        !err.contains('\x1b'),
        "stderr is not a terminal: no colours\n{err}"
    );

    // RUST_LOG counts when PLANWRIGHT_LOG is unset (empty), and not otherwise.
    for (planwright_log, debug) in [("", true), ("warn", false)] {
        let server = ScriptedOpenAi::start(greeting_script(false)).await;
        let out = run_with(
            &pw,
            &server,
            &[],
            &[("PLANWRIGHT_LOG", planwright_log), ("RUST_LOG", "debug")],
        )
        .await;
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_eq!(
            stderr(&out).contains(" DEBUG "),
            debug,
            "PLANWRIGHT_LOG={planwright_log:?}\n{}",
            stderr(&out)
        );
    }
}

/// `--help` opens with what Planwright is, not with the crate's description.
#[tokio::test]
async fn help_opens_with_what_planwright_is() {
    let out = Planwright::new().exec(&["--help"], &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let help = stdout(&out);
    assert!(
        help.starts_with("Planwright: an LLM agent runtime that plans, acts with real tools"),
        "{help}"
    );
}

#[tokio::test]
async fn completions_are_printed_for_each_shell() {
    let pw = Planwright::new();
    for shell in ["bash", "zsh", "fish"] {
        let out = pw.exec(&["completions", shell], &[]).await;
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", stderr(&out));
        let script = stdout(&out);
        assert!(script.contains("planwright"), "{shell}");
        assert!(
            script.contains("doctor") && script.contains("resume"),
            "{shell}"
        );
        assert!(script.contains("--sandbox"), "{shell}");
        if shell == "bash" {
            let file = pw.cwd().join("planwright.bash");
            std::fs::write(&file, &script).expect("write");
            let check = std::process::Command::new("bash")
                .arg("-n")
                .arg(&file)
                .output()
                .expect("bash runs");
            assert!(
                check.status.success(),
                "bash -n: {}",
                String::from_utf8_lossy(&check.stderr)
            );
        }
    }
}

#[tokio::test]
async fn output_jsonl_prints_every_event_as_a_json_line() {
    let server = ScriptedOpenAi::start(greeting_script(true)).await;
    let pw = Planwright::new();
    let out = run_with(&pw, &server, &["--output", "jsonl"], &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let events: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l:?}")))
        .collect();
    assert!(events.len() > 5, "{text}");
    assert_eq!(events[0]["type"], "run_started");
    assert_eq!(events[events.len() - 1]["type"], "run_completed");
    let seqs: Vec<u64> = events
        .iter()
        .map(|e| e["seq"].as_u64().expect("seq"))
        .collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
    // The same events as the store keeps, in the same JSON.
    let run_id = events[0]["run_id"].as_str().expect("run_id");
    let stored = pw.events(run_id);
    assert_eq!(stored.len(), events.len());
    for ((seq, ty, json), line) in stored.iter().zip(&events) {
        assert_eq!(line["seq"], json!(seq));
        assert_eq!(line["type"], json!(ty));
        assert_eq!(line["type"], json["type"]);
    }
    // The live view still goes to stderr.
    assert!(stderr(&out).contains("▶ run"), "{}", stderr(&out));

    let both = run_with(&pw, &server, &["--output", "jsonl", "--json"], &[]).await;
    assert_eq!(both.status.code(), Some(2), "{}", stderr(&both));
}

#[tokio::test]
async fn doctor_names_what_is_missing_and_how_to_fix_it() {
    // The harness points PLANWRIGHT_MODEL_PATH and PLANWRIGHT_CHROMIUM at missing files.
    let pw = Planwright::new();
    let out = pw.exec(&["doctor"], &[]).await;
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}\n{}", stderr(&out));
    let line = |part: &str| {
        text.lines()
            .find(|l| {
                l.split_once(':')
                    .is_some_and(|(head, _)| head.ends_with(part))
            })
            .unwrap_or_else(|| panic!("no {part} line in:\n{text}"))
            .to_string()
    };
    let model = line("model");
    assert!(model.starts_with("fail "), "{model}");
    assert!(model.contains("/nonexistent/model.gguf"), "{model}");
    assert!(model.contains("--model-path"), "{model}");
    let chromium = line("chromium");
    assert!(chromium.starts_with("fail "), "{chromium}");
    assert!(chromium.contains("/nonexistent/chromium"), "{chromium}");
    assert!(
        chromium.contains("PLANWRIGHT_CHROMIUM) to Chromium"),
        "{chromium}"
    );
    for part in [
        "bubblewrap",
        "python3",
        "endpoint",
        "database",
        "workspace root",
    ] {
        assert!(!line(part).starts_with("fail"), "{}", line(part));
    }
    // pandas or how to get it: the line says which.
    let python = line("python3");
    assert!(
        python.contains("pandas") && !python.starts_with("fail"),
        "{python}"
    );
    assert!(
        !text.contains('\x1b'),
        "stdout is not a terminal: no colours"
    );
}

#[tokio::test]
async fn doctor_lists_the_endpoints_models_and_the_schema_version() {
    let server = ScriptedOpenAi::start(greeting_script(false)).await;
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "object": "list",
            "data": [
                {"id": "gpt-4o-mini", "object": "model", "owned_by": "test"},
                {"id": "scripted-coder", "object": "model", "owned_by": "test"}
            ]
        })))
        .mount(&server.server)
        .await;
    let pw = Planwright::new();
    // A database with a run in it.
    let run = run_with(&pw, &server, &["--json"], &[]).await;
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let base = server.base_url();
    let out = pw
        .exec(
            &["doctor"],
            &[
                ("OPENAI_BASE_URL", base.as_str()),
                ("OPENAI_API_KEY", "sk-test-secret"),
            ],
        )
        .await;
    let text = stdout(&out);
    let endpoint = text
        .lines()
        .find(|l| l.contains("endpoint:"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(endpoint.starts_with("ok "), "{endpoint}");
    assert!(endpoint.contains(&base), "{endpoint}");
    assert!(
        endpoint.contains("serves gpt-4o-mini, scripted-coder"),
        "{endpoint}"
    );
    let database = text
        .lines()
        .find(|l| l.contains("database:"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(database.starts_with("ok "), "{database}");
    assert!(database.contains("schema version "), "{database}");
    assert!(database.contains("writable"), "{database}");

    // An endpoint that is down fails, naming it.
    let down = pw
        .exec(&["doctor"], &[("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")])
        .await;
    let text = stdout(&down);
    assert_eq!(down.status.code(), Some(1), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("fail endpoint: http://127.0.0.1:9/v1 is not reachable")),
        "{text}"
    );
}
