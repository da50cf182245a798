//! Workspace checkpoints with the real binary, the real shell and a scripted OpenAI server
//! (docs/checkpoints.md): a run records its workspace before each step and at its end; the
//! outcome lists what it created, changed and deleted from them; `runs diff` shows it (the
//! run, one step), `runs undo` puts it back (refusing files changed after the run unless
//! `--force`, and undoable itself), `runs show` reports the space used and `runs delete`
//! discards them.

mod common;

use common::*;
use serde_json::{json, Value};

/// A workspace folder of the user's, holding `data.txt` and `notes.md`.
fn user_folder(pw: &Planwright) -> std::path::PathBuf {
    let ws = pw.cwd().join("work");
    std::fs::create_dir_all(&ws).expect("workspace");
    std::fs::write(ws.join("data.txt"), "1\n2\n").expect("data.txt");
    std::fs::write(ws.join("notes.md"), "old notes\n").expect("notes.md");
    ws
}

fn read(path: &std::path::Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// `planwright ARGS` with nothing of ours in the environment: (exit code, stdout, stderr).
async fn planwright(pw: &Planwright, args: &[&str]) -> (i32, String, String) {
    let out = pw.exec(args, &[]).await;
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

async fn json_of(pw: &Planwright, args: &[&str]) -> Value {
    let (code, stdout, stderr) = planwright(pw, args).await;
    assert_eq!(code, 0, "{args:?}: {stderr}");
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[tokio::test]
async fn a_runs_changes_are_listed_shown_undone_and_the_undo_undone() {
    let server = ScriptedOpenAi::start(vec![
        plan(&[
            "Append 3 to data.txt and write the total",
            "Delete notes.md",
        ]),
        call(
            "shell_exec",
            json!({"command": "echo 3 >> data.txt && echo 6 > total.txt"}),
        ),
        complete(true, "data.txt ends with 3, total.txt holds 6"),
        call("shell_exec", json!({"command": "rm notes.md"})),
        complete(true, "notes.md is deleted"),
        text("Appended 3, wrote the total, deleted the notes."),
    ])
    .await;
    let pw = Planwright::new();
    let ws = user_folder(&pw);
    let res = pw
        .run(
            &server,
            "Append 3 to data.txt, write the sum of its numbers to total.txt, then delete notes.md",
            &[
                "--workspace",
                "work",
                "--sandbox",
                "none",
                "--allow-input-edits",
            ],
        )
        .await;
    assert_eq!(res.code(), 0, "stderr:\n{}", res.stderr());
    let j = &res.json;
    assert_eq!(j["status"], "completed", "{j}");
    // From the checkpoints: every change, whatever made it (here shell commands).
    assert_eq!(j["files"]["created"], json!(["total.txt"]), "{j}");
    assert_eq!(j["files"]["changed"], json!(["data.txt"]), "{j}");
    assert_eq!(j["files"]["deleted"], json!(["notes.md"]), "{j}");
    let run_id = j["run_id"].as_str().expect("run id").to_string();
    let taken = pw
        .events(&run_id)
        .into_iter()
        .filter(|(_, t, _)| t == "checkpoint_taken")
        .count();
    assert_eq!(taken, 3, "one before each step, one at the end");

    // The whole run, as text (not a terminal: no colours).
    let (code, text, stderr) = planwright(&pw, &["runs", "diff", &run_id]).await;
    assert_eq!(code, 0, "{stderr}");
    assert!(text.contains("modified data.txt\n"), "{text}");
    assert!(text.contains("\n+3\n"), "{text}");
    assert!(text.contains("created  total.txt\n"), "{text}");
    assert!(text.contains("deleted  notes.md\n"), "{text}");
    assert!(!text.contains('\u{1b}'), "{text}");
    // One step, as JSON.
    let step = json_of(&pw, &["runs", "diff", &run_id, "--step", "1", "--json"]).await;
    assert_eq!(step["step"], 1);
    assert_eq!(step["files"].as_array().map(Vec::len), Some(1), "{step}");
    assert_eq!(step["files"][0]["path"], "notes.md");
    assert_eq!(step["files"][0]["change"], "deleted");
    // Bad input.
    let (code, _, stderr) = planwright(&pw, &["runs", "diff", &run_id, "--step", "7"]).await;
    assert_eq!(code, 2);
    assert!(
        stderr.contains("no such step") && stderr.contains("2 step(s)"),
        "{stderr}"
    );
    let (code, _, stderr) = planwright(&pw, &["runs", "diff", "run_nope"]).await;
    assert_eq!(code, 2);
    assert!(stderr.contains("no run with id 'run_nope'"), "{stderr}");
    let shown = json_of(&pw, &["runs", "show", &run_id, "--json"]).await;
    assert!(
        shown["space_used"].as_u64().is_some_and(|b| b > 0),
        "{shown}"
    );

    // Someone edits a file the run changed: the undo refuses, names it, changes nothing.
    std::fs::write(ws.join("data.txt"), "mine\n").expect("edit");
    let (code, _, stderr) = planwright(&pw, &["runs", "undo", &run_id]).await;
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("data.txt") && stderr.contains("--force"),
        "{stderr}"
    );
    assert_eq!(read(&ws.join("total.txt")).as_deref(), Some("6\n"));
    assert_eq!(read(&ws.join("notes.md")), None);

    let undone = json_of(&pw, &["runs", "undo", &run_id, "--force", "--json"]).await;
    assert_eq!(read(&ws.join("data.txt")).as_deref(), Some("1\n2\n"));
    assert_eq!(read(&ws.join("notes.md")).as_deref(), Some("old notes\n"));
    assert_eq!(read(&ws.join("total.txt")), None);
    assert_eq!(undone["removed"], json!(["total.txt"]), "{undone}");
    // The undo undone: the workspace as the undo found it.
    let id = undone["undo_checkpoint"].as_str().expect("undo checkpoint");
    let (code, _, stderr) = planwright(&pw, &["runs", "undo", &run_id, "--checkpoint", id]).await;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(read(&ws.join("data.txt")).as_deref(), Some("mine\n"));
    assert_eq!(read(&ws.join("total.txt")).as_deref(), Some("6\n"));
    assert_eq!(read(&ws.join("notes.md")), None);

    // Back to before step 1 only: notes.md returns, the rest stays.
    let (code, stdout, stderr) =
        planwright(&pw, &["runs", "undo", &run_id, "--to-step", "1", "--force"]).await;
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("To undo this undo: planwright runs undo"),
        "{stdout}"
    );
    assert_eq!(read(&ws.join("notes.md")).as_deref(), Some("old notes\n"));
    assert_eq!(read(&ws.join("total.txt")).as_deref(), Some("6\n"));

    // Deleting the run discards its checkpoints.
    let folder = pw
        .cwd()
        .join(".planwright/runs")
        .join(&run_id)
        .join("checkpoints");
    assert!(folder.is_dir());
    let (code, _, stderr) = planwright(&pw, &["runs", "delete", &run_id]).await;
    assert_eq!(code, 0, "{stderr}");
    assert!(!folder.exists(), "checkpoints discarded");
}

#[tokio::test]
async fn without_checkpoints_a_run_has_nothing_to_diff_or_undo() {
    let server = ScriptedOpenAi::start(vec![
        plan(&["Write total.txt"]),
        call("shell_exec", json!({"command": "echo 6 > total.txt"})),
        complete(true, "total.txt holds 6"),
        text("Wrote the total."),
    ])
    .await;
    let pw = Planwright::new();
    let res = pw
        .run(
            &server,
            "Write 6 to total.txt",
            &["--sandbox", "none", "--checkpoints=false"],
        )
        .await;
    assert_eq!(res.code(), 0, "stderr:\n{}", res.stderr());
    let run_id = res.json["run_id"].as_str().expect("run id").to_string();
    assert!(pw
        .events(&run_id)
        .iter()
        .all(|(_, t, _)| t != "checkpoint_taken"));
    for args in [["runs", "diff", &run_id], ["runs", "undo", &run_id]] {
        let (code, _, stderr) = planwright(&pw, &args).await;
        assert_eq!(code, 2, "{args:?}");
        assert!(stderr.contains("has no workspace checkpoint"), "{stderr}");
    }
}

const TOKEN: &str = "test-token-0123456789";

/// The same over HTTP: `GET /v1/runs/{id}/diff`, `POST /v1/runs/{id}/undo`, their errors,
/// and `space_used` in `GET /v1/runs/{id}`.
#[tokio::test]
async fn the_api_shows_and_undoes_a_runs_changes() {
    let llm = ScriptedOpenAi::start(vec![
        plan(&["Create a.txt"]),
        call("shell_exec", json!({"command": "echo hello > a.txt"})),
        complete(true, "created a.txt"),
        text("a.txt exists."),
        // The second run: busy until cancelled.
        plan(&["Wait a long time"]),
        call(
            "shell_exec",
            json!({"command": "sleep 30", "timeout_secs": 60}),
        ),
        complete(true, "waited"),
        text("should not be needed"),
    ])
    .await;
    let pw = Planwright::new();
    let server = pw
        .serve(
            &llm.base_url(),
            Some(TOKEN),
            &["--sandbox", "none", "--workspace-root", "served"],
        )
        .await;
    let (_, body) = create(&server, json!({"task": "create a.txt"})).await;
    let run_id = body["run_id"].as_str().expect("run_id").to_string();
    let _ = events(&server, &run_id, None).await.collect(60).await;
    assert_eq!(
        status_once(&server, &run_id, "completed").await,
        "completed"
    );

    let (status, diff) = get_json(&server, &format!("/v1/runs/{run_id}/diff")).await;
    assert_eq!(status, reqwest::StatusCode::OK, "{diff}");
    assert_eq!(diff["run_id"], run_id.as_str());
    assert_eq!(diff["files"][0]["path"], "a.txt", "{diff}");
    assert_eq!(diff["files"][0]["change"], "added", "{diff}");
    let unified = diff["files"][0]["content"]["unified"]
        .as_str()
        .unwrap_or_default();
    assert!(unified.contains("+hello"), "{diff}");
    let (status, step) = get_json(&server, &format!("/v1/runs/{run_id}/diff?step=0")).await;
    assert_eq!(status, reqwest::StatusCode::OK, "{step}");
    assert_eq!(step["step"], 0);
    for (path, want) in [
        (format!("/v1/runs/{run_id}/diff?step=4"), 400),
        (format!("/v1/runs/{run_id}/diff?step=x"), 400),
        ("/v1/runs/run_nope/diff".to_string(), 404),
    ] {
        let (status, body) = get_json(&server, &path).await;
        assert_eq!(status.as_u16(), want, "{path}: {body}");
        assert!(
            body["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{body}"
        );
    }
    let (_, shown) = get_json(&server, &format!("/v1/runs/{run_id}")).await;
    assert!(
        shown["space_used"].as_u64().is_some_and(|b| b > 0),
        "{shown}"
    );

    // Changed after the run: refused (naming it) until forced.
    // The CLI finds a server run's checkpoints beside its workspace.
    let cli = json_of(&pw, &["runs", "diff", &run_id, "--json"]).await;
    assert_eq!(cli["files"], diff["files"], "{cli}");
    let file = pw
        .cwd()
        .join("served")
        .join(&run_id)
        .join("workspace")
        .join("a.txt");
    std::fs::write(&file, "mine\n").expect("edit");
    let undo = format!("/v1/runs/{run_id}/undo");
    let (status, body) = post_json(&server, &undo, json!({})).await;
    assert_eq!(status, reqwest::StatusCode::CONFLICT, "{body}");
    assert!(
        body["error"].as_str().is_some_and(|e| e.contains("a.txt")),
        "{body}"
    );
    assert_eq!(read(&file).as_deref(), Some("mine\n"));
    let (status, body) = post_json(&server, &undo, json!({"force": true})).await;
    assert_eq!(status, reqwest::StatusCode::OK, "{body}");
    assert_eq!(body["removed"], json!(["a.txt"]), "{body}");
    assert!(!file.exists());
    let (status, body) = post_json(&server, &undo, json!({"to_step": 0, "checkpoint": "x"})).await;
    assert_eq!(status, reqwest::StatusCode::BAD_REQUEST, "{body}");
    let (status, _) = post_json(&server, "/v1/runs/run_nope/undo", json!({})).await;
    assert_eq!(status, reqwest::StatusCode::NOT_FOUND);

    // A running run is not undone: cancel it first.
    let (_, body) = create(&server, json!({"task": "sleep"})).await;
    let busy = body["run_id"].as_str().expect("run_id").to_string();
    let mut reader = events(&server, &busy, None).await;
    while reader.next().await.expect("event").event != "tool_calling" {}
    let (status, body) = post_json(&server, &format!("/v1/runs/{busy}/undo"), json!({})).await;
    assert_eq!(status, reqwest::StatusCode::CONFLICT, "{body}");
    assert!(
        body["error"]
            .as_str()
            .is_some_and(|e| e.contains("cancel it first")),
        "{body}"
    );
    let (status, _) = post_json(&server, &format!("/v1/runs/{busy}/cancel"), json!({})).await;
    assert_eq!(status, reqwest::StatusCode::ACCEPTED);
}

/// `runs prune --older-than AGE` discards the checkpoints of runs that ended before, and
/// keeps the runs.
#[tokio::test]
async fn prune_discards_the_checkpoints_of_old_runs_only() {
    let server = ScriptedOpenAi::start(vec![
        plan(&["Write total.txt"]),
        call("shell_exec", json!({"command": "echo 6 > total.txt"})),
        complete(true, "total.txt holds 6"),
        text("Wrote the total."),
    ])
    .await;
    let pw = Planwright::new();
    let res = pw
        .run(&server, "Write 6 to total.txt", &["--sandbox", "none"])
        .await;
    assert_eq!(res.code(), 0, "stderr:\n{}", res.stderr());
    let run_id = res.json["run_id"].as_str().expect("run id").to_string();
    let folder = pw
        .cwd()
        .join(".planwright/runs")
        .join(&run_id)
        .join("checkpoints");
    assert!(folder.is_dir());

    let (code, stdout, stderr) = planwright(&pw, &["runs", "prune", "--older-than", "1d"]).await;
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("of 0 run(s)"), "{stdout}");
    assert!(folder.is_dir(), "a recent run keeps its checkpoints");
    let (code, _, stderr) = planwright(&pw, &["runs", "prune", "--older-than", "3x"]).await;
    assert_eq!(code, 2);
    assert!(stderr.contains("is not an age"), "{stderr}");

    let (code, stdout, stderr) = planwright(&pw, &["runs", "prune", "--older-than", "0m"]).await;
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("of 1 run(s)"), "{stdout}");
    assert!(!folder.exists());
    let shown = json_of(&pw, &["runs", "show", &run_id, "--json"]).await;
    assert_eq!(shown["space_used"], 0, "the run stays: {shown}");
    let (code, _, _) = planwright(&pw, &["runs", "diff", &run_id]).await;
    assert_eq!(code, 2, "nothing left to diff");
}

/// Issue 41, High 5: inside the sandbox the model set `core.fsmonitor` and a `post-checkout`
/// hook in the workspace's `.git`; `runs diff` did not show it and `runs undo` kept it, and
/// the user's next `git status` ran it. By default the sandbox refuses it; with
/// `--sandbox-vcs-writes` it is allowed, shown by `runs diff` and removed by `runs undo`.
#[tokio::test]
async fn a_planted_git_hook_is_refused_or_shown_and_undone() {
    if !bwrap_works("a_planted_git_hook_is_refused_or_shown_and_undone") {
        return;
    }
    let plant = "git config core.fsmonitor 'touch PWNED'; \
                 printf '#!/bin/sh\\ntouch PWNED\\n' > .git/hooks/post-checkout; \
                 chmod +x .git/hooks/post-checkout; echo tried";
    for allowed in [false, true] {
        let server = ScriptedOpenAi::start(vec![
            plan(&["Configure git"]),
            call("shell_exec", json!({ "command": plant })),
            complete(true, "configured"),
            text("Configured."),
        ])
        .await;
        let pw = Planwright::new();
        let ws = user_folder(&pw);
        let git = |args: &[&str]| {
            std::process::Command::new("git")
                .args(args)
                .current_dir(&ws)
                .output()
                .expect("git")
        };
        assert!(git(&["init", "-q"]).status.success());
        let config = read(&ws.join(".git/config")).expect("config");
        let mut args = vec!["--workspace", "work", "--sandbox", "bwrap"];
        if allowed {
            args.push("--sandbox-vcs-writes");
        }
        let res = pw.run(&server, "Configure git in this folder", &args).await;
        assert_eq!(res.code(), 0, "stderr:\n{}", res.stderr());
        let run_id = res.json["run_id"].as_str().expect("run id").to_string();
        let hook = ws.join(".git/hooks/post-checkout");
        let (code, diff, stderr) = planwright(&pw, &["runs", "diff", &run_id]).await;
        assert_eq!(code, 0, "{stderr}");
        if !allowed {
            assert_eq!(read(&ws.join(".git/config")), Some(config), "{diff}");
            assert!(!hook.exists(), "{diff}");
            assert_eq!(diff, "No changes.\n");
            continue;
        }
        assert!(hook.is_file(), "{diff}");
        assert!(diff.contains("modified .git/config\n"), "{diff}");
        assert!(diff.contains("+\tfsmonitor = touch PWNED"), "{diff}");
        assert!(
            diff.contains("created  .git/hooks/post-checkout\n"),
            "{diff}"
        );
        let (code, undone, stderr) = planwright(&pw, &["runs", "undo", &run_id]).await;
        assert_eq!(code, 0, "{stderr}");
        assert!(
            undone.contains("removed  .git/hooks/post-checkout"),
            "{undone}"
        );
        assert!(!hook.exists(), "{undone}");
        assert_eq!(read(&ws.join(".git/config")), Some(config), "{undone}");
        let fsmonitor = git(&["config", "--get", "core.fsmonitor"]);
        assert!(!fsmonitor.status.success(), "{undone}");
        assert!(!ws.join("PWNED").exists());
    }
}
