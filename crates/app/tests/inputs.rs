//! Protected inputs with the real binary, the real shell and a scripted OpenAI server
//! (docs/security.md, "Input files"): a shell command that overwrites an input it did not
//! name in `changes` is undone, the model told, the outcome lists it.

mod common;

use common::*;
use serde_json::json;

/// A workspace folder of the user's, holding `data.txt`.
fn user_folder(pw: &Planwright) -> std::path::PathBuf {
    let ws = pw.cwd().join("work");
    std::fs::create_dir_all(&ws).expect("workspace");
    std::fs::write(ws.join("data.txt"), "1\n2\n").expect("data.txt");
    ws
}

/// Issue 41 (Low): `chmod 000 data.txt` changes neither the input's size nor its time; it
/// was neither noticed nor undone. Now the run puts the permissions back and says so, and
/// the run's diff shows no change left.
#[tokio::test]
async fn an_inputs_permissions_changed_by_a_command_are_restored() {
    use std::os::unix::fs::PermissionsExt;
    let server = ScriptedOpenAi::start(vec![
        plan(&["Compute the total"]),
        call("shell_exec", json!({"command": "chmod 000 data.txt"})),
        call("shell_exec", json!({"command": "echo 3 > total.txt"})),
        complete(true, "total.txt holds 3"),
        text("Wrote the total."),
    ])
    .await;
    let pw = Planwright::new();
    let ws = user_folder(&pw);
    std::fs::set_permissions(ws.join("data.txt"), std::fs::Permissions::from_mode(0o640))
        .expect("chmod");
    let res = pw
        .run(
            &server,
            "Sum the numbers in data.txt and write the total to total.txt",
            &["--workspace", "work", "--sandbox", "none"],
        )
        .await;
    assert_eq!(res.code(), 0, "stderr:\n{}", res.stderr());
    let j = &res.json;
    assert_eq!(j["status"], "completed", "{j}");
    let mode = std::fs::metadata(ws.join("data.txt"))
        .expect("data.txt")
        .permissions()
        .mode();
    assert_eq!(mode & 0o7777, 0o640, "the permissions are back");
    assert_eq!(j["files"]["restored"], json!(["data.txt"]), "{j}");
    let reqs = server.requests().await;
    let seen = tool_messages(&reqs[2]).join("\n");
    assert!(
        seen.starts_with("Undone: this call changed data.txt"),
        "{seen}"
    );
    let run_id = j["run_id"].as_str().expect("run id");
    let diff = pw.exec(&["runs", "diff", run_id, "--json"], &[]).await;
    let diff: serde_json::Value = serde_json::from_slice(&diff.stdout).expect("the diff as JSON");
    let paths: Vec<&str> = diff["files"]
        .as_array()
        .expect("files")
        .iter()
        .filter_map(|f| f["path"].as_str())
        .collect();
    assert_eq!(paths, ["total.txt"], "{diff}");
}

#[tokio::test]
async fn an_input_overwritten_by_a_shell_command_is_restored_and_reported() {
    let server = ScriptedOpenAi::start(vec![
        plan(&["Compute the total"]),
        call("shell_exec", json!({"command": "echo 3 > data.txt"})),
        call("shell_exec", json!({"command": "echo 3 > total.txt"})),
        complete(true, "total.txt holds 3"),
        text("Wrote the total."),
    ])
    .await;
    let pw = Planwright::new();
    let ws = user_folder(&pw);
    let res = pw
        .run(
            &server,
            "Sum the numbers in data.txt and write the total to total.txt",
            &["--workspace", "work", "--sandbox", "none"],
        )
        .await;
    assert_eq!(res.code(), 0, "stderr:\n{}", res.stderr());
    let j = &res.json;
    assert_eq!(j["status"], "completed");
    assert_eq!(
        std::fs::read_to_string(ws.join("data.txt")).expect("data.txt"),
        "1\n2\n",
        "the input is back"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("total.txt")).expect("total.txt"),
        "3\n"
    );
    assert_eq!(j["files"]["restored"], json!(["data.txt"]));
    assert_eq!(j["files"]["created"], json!(["total.txt"]));
    assert_eq!(j["files"]["changed"], json!([]));
    let summary = j["summary"].as_str().expect("summary");
    assert!(
        summary.ends_with(
            "Files:\n- created: total.txt\n- restored (changes undone by the runtime): data.txt"
        ),
        "{summary}"
    );
    // The model read why, right after the call.
    let reqs = server.requests().await;
    let seen = tool_messages(&reqs[2]).join("\n");
    assert!(
        seen.starts_with("Undone: this call changed data.txt")
            && seen.contains("make the call again with it in `changes`"),
        "{seen}"
    );
    let run_id = j["run_id"].as_str().expect("run id");
    let kinds: Vec<String> = pw.events(run_id).into_iter().map(|(_, t, _)| t).collect();
    assert!(kinds.contains(&"inputs_recorded".to_string()), "{kinds:?}");
    assert!(kinds.contains(&"input_protected".to_string()), "{kinds:?}");
    // The copy was kept beside the run's data, out of the workspace, and is gone now.
    let run_dir = pw.cwd().join(".planwright").join("runs").join(run_id);
    assert!(
        !run_dir.join("inputs").exists(),
        "copies deleted at the end"
    );
}

#[tokio::test]
async fn allow_input_edits_lets_the_change_stand() {
    let server = ScriptedOpenAi::start(vec![
        plan(&["Compute the total"]),
        call("shell_exec", json!({"command": "echo 3 > data.txt"})),
        complete(true, "data.txt now holds 3"),
        text("Done."),
    ])
    .await;
    let pw = Planwright::new();
    let ws = user_folder(&pw);
    let res = pw
        .run(
            &server,
            "Sum the numbers in data.txt",
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
    assert_eq!(
        std::fs::read_to_string(ws.join("data.txt")).expect("data.txt"),
        "3\n"
    );
    assert_eq!(res.json["files"]["changed"], json!(["data.txt"]));
}
