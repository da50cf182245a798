//! MCP servers as a run's tools: the real `planwright` binary with `[mcp_servers.NAME]` in
//! its project file, the pinned npm reference servers (filesystem, everything; installed
//! once into the target folder, shared with crates/adapter-mcp's tests) and a scripted
//! OpenAI-compatible model. Without node/npm the tests that need them skip on a laptop and
//! fail under `CI=true`.

mod common;
#[allow(dead_code)]
#[path = "../../adapter-mcp/tests/support/mod.rs"]
mod mcp_support;

use std::path::Path;
use std::time::{Duration, Instant};

use common::*;
use serde_json::json;

/// `[mcp_servers.fs]` rooted at `root`, `[mcp_servers.everything]`, and a server whose
/// command does not exist.
fn declare_servers(pw: &Planwright, servers: &Path, root: &Path) {
    let bin = |name: &str| mcp_support::bin(servers, name).display().to_string();
    let text = format!(
        "[mcp_servers.fs]\ncommand = {fs:?}\nargs = [{root:?}]\nstartup_timeout_secs = 30\n\n\
         [mcp_servers.everything]\ncommand = {everything:?}\nargs = [\"stdio\"]\n\
         startup_timeout_secs = 30\n\n\
         [mcp_servers.missing]\ncommand = \"/nonexistent/mcp-server\"\n",
        fs = bin("mcp-server-filesystem"),
        everything = bin("mcp-server-everything"),
        root = root.display().to_string(),
    );
    std::fs::write(pw.cwd().join("planwright.toml"), text).expect("planwright.toml");
    pw.trust();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_calls_mcp_tools_and_a_missing_server_stops_nothing() {
    let Some(servers) = mcp_support::servers_or_skip() else {
        return;
    };
    let pw = Planwright::new();
    let root = pw.cwd().join("shared");
    std::fs::create_dir_all(&root).expect("root");
    let root = std::fs::canonicalize(&root).expect("root");
    declare_servers(&pw, servers, &root);
    let notes = root.join("notes.txt").display().to_string();

    let server = ScriptedOpenAi::start(vec![
        plan(&[
            "Write notes.txt with the filesystem server",
            "Echo a greeting",
        ]),
        call(
            "mcp__fs__write_file",
            json!({"path": notes, "content": "written over MCP"}),
        ),
        call("mcp__fs__read_text_file", json!({"path": notes})),
        complete(true, "notes.txt written"),
        call("mcp__everything__echo", json!({"message": "hello mcp"})),
        // A built-in tool still works beside the servers.
        call("shell_exec", json!({"command": "echo built-in"})),
        complete(true, "echoed"),
        text("notes.txt was written and the greeting echoed."),
    ])
    .await;
    let res = pw.run(&server, "Write notes and echo", &[]).await;
    assert_eq!(res.code(), 0, "stderr:\n{}", res.stderr());
    assert_eq!(res.json["status"], "completed");

    // The effect is on disk, and the model was told each tool's real answer.
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).expect("notes.txt"),
        "written over MCP"
    );
    let requests = server.requests().await;
    let executor_tools: Vec<&str> = requests[1]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    for name in ["mcp__fs__write_file", "mcp__everything__echo", "shell_exec"] {
        assert!(executor_tools.contains(&name), "{name}: {executor_tools:?}");
    }
    assert!(
        !executor_tools
            .iter()
            .any(|t| t.starts_with("mcp__missing__")),
        "{executor_tools:?}"
    );
    let seen: Vec<String> = requests.iter().flat_map(tool_messages).collect();
    assert!(
        seen.iter().any(|m| m.contains("written over MCP")),
        "{seen:?}"
    );
    assert!(seen.iter().any(|m| m.contains("hello mcp")), "{seen:?}");
    assert!(seen.iter().any(|m| m.contains("built-in")), "{seen:?}");

    // The missing server is said, not fatal; `tools list` says why.
    assert!(
        res.stderr().contains("/nonexistent/mcp-server"),
        "{}",
        res.stderr()
    );
    let out = pw.exec(&["tools", "list"], &[]).await;
    assert_eq!(out.status.code(), Some(0));
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(
        listed.contains("MCP missing: not offered (failed: cannot start `/nonexistent/mcp-server`"),
        "{listed}"
    );
    assert!(listed.contains("mcp__fs__write_file"), "{listed}");
    assert!(listed.contains("mcp__everything__echo"), "{listed}");

    // `--disabled-tools` patterns take MCP tools out too.
    let out = pw
        .exec(
            &[
                "tools",
                "list",
                "--disabled-tools",
                "mcp__fs__*,mcp__everything__echo",
            ],
            &[],
        )
        .await;
    assert_eq!(out.status.code(), Some(0));
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(
        listed.contains("MCP fs: not offered (turned off by --disabled-tools)"),
        "{listed}"
    );
    assert!(!listed.contains("mcp__everything__echo"), "{listed}");
    assert!(listed.contains("mcp__everything__get-sum"), "{listed}");
}

#[tokio::test(flavor = "multi_thread")]
async fn read_only_runs_refuse_mcp_effects_and_let_mcp_reads_run() {
    let Some(servers) = mcp_support::servers_or_skip() else {
        return;
    };
    let pw = Planwright::new();
    let root = pw.cwd().join("shared");
    std::fs::create_dir_all(&root).expect("root");
    let root = std::fs::canonicalize(&root).expect("root");
    std::fs::write(root.join("before.txt"), "already here").expect("before.txt");
    declare_servers(&pw, servers, &root);
    let before = root.join("before.txt").display().to_string();
    let after = root.join("after.txt").display().to_string();

    let server = ScriptedOpenAi::start(vec![
        plan(&["Read before.txt and try to write after.txt"]),
        call("mcp__fs__read_text_file", json!({"path": before})),
        call(
            "mcp__fs__write_file",
            json!({"path": after, "content": "must not be written"}),
        ),
        complete(true, "before.txt read; the write was refused"),
        text("before.txt was read; after.txt could not be written."),
    ])
    .await;
    let res = pw
        .run(&server, "Read and write", &["--approval", "read-only"])
        .await;
    assert_eq!(res.code(), 0, "stderr:\n{}", res.stderr());
    assert!(!root.join("after.txt").exists(), "the effect was refused");
    let seen: Vec<String> = server
        .requests()
        .await
        .iter()
        .flat_map(tool_messages)
        .collect();
    assert!(seen.iter().any(|m| m.contains("already here")), "{seen:?}");
    assert!(
        seen.iter()
            .any(|m| m.contains("read-only") && m.contains("mcp__fs__write_file")),
        "{seen:?}"
    );
}

/// `planwright mcp check NAME` of servers that are not MCP servers: one that never answers
/// `initialize` fails after its startup timeout, one that writes garbage on stdout fails
/// cleanly, an unknown name is a usage error. No node needed.
#[tokio::test]
async fn mcp_check_fails_on_a_hanging_or_garbled_server_with_exit_1() {
    let pw = Planwright::new();
    std::fs::write(
        pw.cwd().join("planwright.toml"),
        "[mcp_servers.hang]\ncommand = \"sleep\"\nargs = [\"30\"]\nstartup_timeout_secs = 1\n\n\
         [mcp_servers.garbled]\ncommand = \"sh\"\n\
         args = [\"-c\", \"echo 'not json'; echo '{\\\"jsonrpc\\\": 7}'; exec sleep 30\"]\n\
         startup_timeout_secs = 2\n",
    )
    .expect("planwright.toml");
    pw.trust();

    let started = Instant::now();
    let out = pw.exec(&["mcp", "check", "hang"], &[]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("did not answer `initialize` within 1s"),
        "{stderr}"
    );
    assert!(started.elapsed() < Duration::from_secs(20));

    let out = pw.exec(&["mcp", "check", "garbled"], &[]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("MCP server `garbled`"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(20));

    let out = pw.exec(&["mcp", "check", "nope"], &[]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("declared: garbled, hang"), "{stderr}");

    // `mcp list` reports both, and is no failure itself.
    let out = pw.exec(&["mcp", "list"], &[]).await;
    assert_eq!(out.status.code(), Some(0));
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(
        listed.contains("hang (planwright.toml:1): stdio `sleep 30`: failed:"),
        "{listed}"
    );
    assert!(listed.contains("garbled (planwright.toml:6)"), "{listed}");
}

/// A bad declaration stops every command with one line naming the file's line, exit 2.
#[tokio::test]
async fn a_bad_declaration_is_a_config_error() {
    let pw = Planwright::new();
    // A trusted folder: its file is read, and the mistake in it stops the command.
    pw.trusted_project("");
    std::fs::write(
        pw.cwd().join("planwright.toml"),
        "model = \"m\"\n[mcp_servers.x]\nargs = [\"a\"]\n",
    )
    .expect("planwright.toml");
    let out = pw.exec(&["mcp", "list"], &[]).await;
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "error: planwright.toml:2: MCP server `x`: set `command` (stdio) or `url` (streamable HTTP)"
    );
}

/// Both files may declare servers: the project's entry replaces the user's of the same name;
/// `config show` names the file declaring each.
#[tokio::test]
async fn the_project_file_replaces_the_user_files_server_of_the_same_name() {
    let pw = Planwright::new();
    std::fs::create_dir_all(pw.user_config().parent().expect("folder")).expect("config home");
    std::fs::write(
        pw.user_config(),
        "[mcp_servers.shared]\ncommand = \"user-server\"\n\n\
         [mcp_servers.mine]\nurl = \"http://127.0.0.1:9/mcp\"\n",
    )
    .expect("user file");
    std::fs::write(
        pw.cwd().join("planwright.toml"),
        "\n[mcp_servers.shared]\ncommand = \"project-server\"\n",
    )
    .expect("project file");
    pw.trust();
    let out = pw.exec(&["config", "show", "--json"], &[]).await;
    assert_eq!(out.status.code(), Some(0));
    let shown: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let servers = &shown["mcp_servers"];
    assert_eq!(servers["shared"]["source"], "planwright.toml", "{shown}");
    assert_eq!(servers["shared"]["line"], 2);
    let user_file = pw.user_config().display().to_string();
    assert_eq!(servers["mine"]["source"], user_file.as_str(), "{shown}");

    // `mcp list` tries the project's `shared`, not the user's.
    let out = pw.exec(&["mcp", "list"], &[]).await;
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(listed.contains("stdio `project-server`"), "{listed}");
    assert!(!listed.contains("user-server"), "{listed}");
    assert!(listed.contains("mine ("), "{listed}");
}

/// `[mcp_servers.slow]`: tests/fixtures/mcp-slow-server.cjs, appending to `log`, with
/// `more_env` (`, NAME = "value"`...) added to its environment.
fn declare_slow_server(pw: &Planwright, servers: &Path, log: &Path, more_env: &str) {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/mcp-slow-server.cjs"
    );
    std::fs::write(
        pw.cwd().join("planwright.toml"),
        format!(
            "[mcp_servers.slow]\ncommand = \"node\"\nargs = [{script:?}]\n\
             env = {{ NODE_PATH = {modules:?}, LOG = {log:?}{more_env} }}\n\
             startup_timeout_secs = 30\n",
            modules = servers.join("node_modules").display().to_string(),
            log = log.display().to_string(),
        ),
    )
    .expect("planwright.toml");
    pw.trust();
}

/// Durability: an MCP tool without `readOnlyHint` is an effect. The process is killed while
/// such a call runs (the server appended its line, then takes 20 s to answer); on resume the
/// call is not made again and the model is told its outcome is unknown.
#[tokio::test(flavor = "multi_thread")]
async fn an_interrupted_mcp_effect_is_not_run_again_on_resume() {
    let Some(servers) = mcp_support::servers_or_skip() else {
        return;
    };
    let pw = Planwright::new();
    let log = pw.cwd().join("effects.txt");
    declare_slow_server(&pw, servers, &log, "");
    let server = ScriptedOpenAi::start(vec![
        plan(&["Append one line with the slow server"]),
        call("mcp__slow__append", json!({"line": "once"})),
        // After the resume: the model reads that the outcome is unknown and stops there.
        complete(true, "the line was appended (checked)"),
        text("One line was appended."),
    ])
    .await;
    let base = server.base_url();
    let env = [
        ("OPENAI_BASE_URL", base.as_str()),
        ("OPENAI_API_KEY", "sk-test"),
    ];
    let mut child = pw.spawn(&["run", "--json", "--retries", "0", "append once"], &env);
    let deadline = Instant::now() + Duration::from_secs(60);
    let run_id = loop {
        assert!(Instant::now() < deadline, "the MCP call never started");
        if let Some(id) = pw.only_run_id() {
            let calling = pw
                .events(&id)
                .iter()
                .any(|(_, t, j)| t == "tool_calling" && j["tool"] == "mcp__slow__append");
            let appended = std::fs::read_to_string(&log).is_ok_and(|l| l == "once\n");
            if calling && appended {
                break id;
            }
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("planwright ended before the kill: {status}");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    child.start_kill().expect("SIGKILL");
    let _ = child.wait().await;

    let out = pw
        .exec(&["resume", &run_id, "--json", "--retries", "0"], &env)
        .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "resume failed:\n{stderr}");
    assert_eq!(
        std::fs::read_to_string(&log).expect("effects.txt"),
        "once\n",
        "the effect happened exactly once"
    );
    let events = pw.events(&run_id);
    let resumed = events
        .iter()
        .find(|(_, t, _)| t == "run_resumed")
        .expect("run_resumed");
    let interrupted = resumed.2["interrupted_calls"].to_string();
    assert!(interrupted.contains("mcp__slow__append"), "{interrupted}");
    assert!(events.iter().any(|(_, t, j)| t == "tool_called"
        && j["output"]
            .as_str()
            .unwrap_or_default()
            .contains("Interrupted, outcome unknown")));
    let callings = events
        .iter()
        .filter(|(_, t, _)| t == "tool_calling")
        .count();
    assert_eq!(callings, 1, "the call was not made again");
}

/// A server killed in the middle of a call: that call fails with a reason naming the
/// server, the run goes on, and the next call starts the server again and succeeds.
#[tokio::test(flavor = "multi_thread")]
async fn a_server_killed_mid_run_fails_its_call_and_is_started_again_for_the_next() {
    let Some(servers) = mcp_support::servers_or_skip() else {
        return;
    };
    let pw = Planwright::new();
    let log = pw.cwd().join("effects.txt");
    let pid_file = pw.cwd().join("server.pid");
    let pid = pid_file.display().to_string();
    declare_slow_server(&pw, servers, &log, &format!(", PIDFILE = {pid:?}"));
    let server = ScriptedOpenAi::start(vec![
        plan(&["Append two lines with the slow server"]),
        call("mcp__slow__append", json!({"line": "slow"})),
        call("mcp__slow__append", json!({"line": "fast"})),
        complete(true, "appended fast after the server failed once"),
        text("Two calls, one failed."),
    ])
    .await;
    let base = server.base_url();
    let env = [
        ("OPENAI_BASE_URL", base.as_str()),
        ("OPENAI_API_KEY", "sk-test"),
    ];
    let mut child = pw.spawn(&["run", "--json", "--retries", "0", "append twice"], &env);
    let deadline = Instant::now() + Duration::from_secs(60);
    let pid = loop {
        assert!(Instant::now() < deadline, "the slow call never started");
        let appended = std::fs::read_to_string(&log).is_ok_and(|l| l == "slow\n");
        let pid = std::fs::read_to_string(&pid_file).unwrap_or_default();
        if appended && !pid.trim().is_empty() {
            break pid.trim().to_string();
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("planwright ended before the server was killed: {status}");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid])
        .status()
        .expect("kill");
    assert!(killed.success());
    let status = child.wait().await.expect("planwright ends");
    assert_eq!(status.code(), Some(0));
    assert_eq!(
        std::fs::read_to_string(&log).expect("effects.txt"),
        "slow\nfast\n"
    );
    let run_id = pw.only_run_id().expect("one run");
    let events = pw.events(&run_id);
    let called: Vec<&serde_json::Value> = events
        .iter()
        .filter(|(_, t, _)| t == "tool_called")
        .map(|(_, _, j)| j)
        .collect();
    assert_eq!(called.len(), 2, "{called:?}");
    assert_eq!(called[0]["ok"], false, "{:?}", called[0]);
    let reason = called[0]["output"].as_str().unwrap_or_default();
    assert!(
        reason.contains("slow"),
        "the failure names the server: {reason}"
    );
    assert_eq!(called[1]["ok"], true, "{:?}", called[1]);
    assert!(events.iter().any(|(_, t, _)| t == "run_completed"));
}

/// Issue 29: an MCP rule names the argument it judges; one naming an argument the server's
/// tool does not take (by its input schema) would never match, so the run stops before it
/// starts with an error naming the arguments the tool takes.
#[tokio::test(flavor = "multi_thread")]
async fn a_rule_naming_an_argument_the_mcp_tool_lacks_stops_the_run() {
    let Some(servers) = mcp_support::servers_or_skip() else {
        return;
    };
    let pw = Planwright::new();
    let root = pw.cwd().join("shared");
    std::fs::create_dir_all(&root).expect("root");
    let root = std::fs::canonicalize(&root).expect("root");
    declare_servers(&pw, servers, &root);
    let server = ScriptedOpenAi::start(vec![plan(&["Write"])]).await;
    let base = server.base_url();
    let out = pw
        .exec(
            &[
                "run",
                "--deny",
                "mcp__fs__write_file(file=secret/**)",
                "write a file",
            ],
            &[
                ("OPENAI_BASE_URL", base.as_str()),
                ("OPENAI_API_KEY", "sk-test-secret"),
            ],
        )
        .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("judges the argument `file`") && stderr.contains("path"),
        "{stderr}"
    );
    assert!(server.requests().await.is_empty(), "nothing was asked");
}
