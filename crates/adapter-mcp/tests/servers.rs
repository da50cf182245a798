//! `McpToolbox` against real MCP servers from npm (filesystem, everything) over stdio.

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use adapter_mcp::{McpServerConfig, McpToolbox, ServerState, StartError};
use domain::ports::{ToolEffect, ToolError, ToolFamily, Toolbox};
use serde_json::json;
use support::{bin, ctx, servers_or_skip};

/// The filesystem server confined to `root`.
fn filesystem(dir: &Path, root: &Path) -> McpServerConfig {
    let mut config =
        McpServerConfig::stdio(bin(dir, "mcp-server-filesystem").to_string_lossy(), &[]);
    config.args.push(root.to_string_lossy().into_owned());
    config.startup_timeout_secs = 30;
    config
}

/// The "everything" reference server over stdio.
fn everything(dir: &Path) -> McpServerConfig {
    let mut config = McpServerConfig::stdio(
        bin(dir, "mcp-server-everything").to_string_lossy(),
        &["stdio"],
    );
    config.startup_timeout_secs = 30;
    config
}

fn toolbox(servers: Vec<(&str, McpServerConfig)>) -> McpToolbox {
    McpToolbox::new(servers.into_iter().map(|(n, c)| (n.to_owned(), c)))
        .expect("valid declarations")
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_are_listed_with_mcp_names_and_read_only_hints() {
    let Some(dir) = servers_or_skip() else { return };
    let root = tempfile::tempdir().expect("tempdir");
    let mut fs = filesystem(dir, root.path());
    fs.disabled_tools = vec!["move_file".into()];
    let toolbox = toolbox(vec![("fs", fs), ("everything", everything(dir))]);

    // Sync `schemas()` starts the servers on first use.
    let schemas = toolbox.schemas();
    let names: Vec<&str> = schemas.iter().map(|s| s.name.as_str()).collect();
    assert!(names.contains(&"mcp__fs__read_text_file"), "{names:?}");
    assert!(names.contains(&"mcp__fs__write_file"), "{names:?}");
    assert!(names.contains(&"mcp__everything__echo"), "{names:?}");
    assert!(
        !names.contains(&"mcp__fs__move_file"),
        "disabled: {names:?}"
    );
    assert!(names.iter().all(|n| n.len() <= 64
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')));
    let write = schemas
        .iter()
        .find(|s| s.name == "mcp__fs__write_file")
        .expect("write_file");
    assert_eq!(write.parameters["type"], "object");
    assert!(write.parameters["properties"]["content"].is_object());
    // Tidied like the built-in tools' schemas (the server's zod output names its draft).
    assert!(
        write.parameters.get("$schema").is_none(),
        "{}",
        write.parameters
    );

    assert!(toolbox.idempotent("mcp__fs__read_text_file"));
    assert!(!toolbox.idempotent("mcp__fs__write_file"));
    assert!(toolbox.idempotent("mcp__everything__echo"));
    assert!(!toolbox.idempotent("mcp__everything__unknown"));
    // What the approval policy judges: read-only tools read, the others act.
    assert_eq!(toolbox.effect("mcp__fs__read_text_file"), ToolEffect::Reads);
    assert_eq!(toolbox.effect("mcp__fs__write_file"), ToolEffect::Acts);
    assert_eq!(toolbox.effect("mcp__everything__unknown"), ToolEffect::Acts);
    assert_eq!(toolbox.family("mcp__fs__read_text_file"), ToolFamily::Other);

    let status = toolbox.status().await;
    assert!(
        status
            .iter()
            .all(|s| matches!(s.state, ServerState::Started { .. })),
        "{status:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn filesystem_write_then_read_inside_a_temp_dir() {
    let Some(dir) = servers_or_skip() else { return };
    let root = tempfile::tempdir().expect("tempdir");
    let root_path = root.path().canonicalize().expect("canonical");
    let toolbox = toolbox(vec![("fs", filesystem(dir, &root_path))]);
    let file = root_path.join("note.txt");
    let ctx = ctx(&root_path);

    let written = toolbox
        .call(
            "mcp__fs__write_file",
            json!({"path": file, "content": "hello from planwright"}),
            &ctx,
        )
        .await
        .expect("write");
    assert!(!written.is_error, "{written:?}");
    assert_eq!(
        std::fs::read_to_string(&file).expect("file written"),
        "hello from planwright"
    );

    let read = toolbox
        .call("mcp__fs__read_text_file", json!({"path": file}), &ctx)
        .await
        .expect("read");
    assert_eq!(read.content, "hello from planwright");
    assert!(!read.is_error);

    // A tool error comes back as an error result, not a failed call.
    let missing = toolbox
        .call(
            "mcp__fs__read_text_file",
            json!({"path": root_path.join("absent.txt")}),
            &ctx,
        )
        .await
        .expect("an error result");
    assert!(missing.is_error, "{missing:?}");

    let unknown = toolbox.call("mcp__fs__nope", json!({}), &ctx).await;
    assert!(matches!(unknown, Err(ToolError::Refused(_))), "{unknown:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn everything_echo_image_and_timeout() {
    let Some(dir) = servers_or_skip() else { return };
    let mut config = everything(dir);
    config.tool_timeout_secs = 1;
    let toolbox = toolbox(vec![("everything", config)]);
    toolbox.start().await;
    let ctx = ctx(dir);

    let echo = toolbox
        .call("mcp__everything__echo", json!({"message": "ping"}), &ctx)
        .await
        .expect("echo");
    assert!(echo.content.contains("ping"), "{echo:?}");
    assert!(!echo.is_error);

    let image = toolbox
        .call("mcp__everything__get-tiny-image", json!({}), &ctx)
        .await
        .expect("image");
    assert!(image.content.contains("[image: image/png, "), "{image:?}");

    let slow = toolbox
        .call(
            "mcp__everything__trigger-long-running-operation",
            json!({"duration": 10, "steps": 2}),
            &ctx,
        )
        .await;
    assert_eq!(slow, Err(ToolError::Timeout(Duration::from_secs(1))));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_command_fails_its_server_only() {
    let Some(dir) = servers_or_skip() else { return };
    let toolbox = toolbox(vec![
        (
            "ghost",
            McpServerConfig::stdio("/nonexistent/mcp-server", &[]),
        ),
        ("everything", everything(dir)),
    ]);
    toolbox.start().await;
    let names: Vec<String> = toolbox.schemas().into_iter().map(|s| s.name).collect();
    assert!(names.iter().all(|n| !n.starts_with("mcp__ghost__")));
    assert!(names.contains(&"mcp__everything__echo".to_owned()));
    let status = toolbox.status().await;
    assert!(
        matches!(
            &status[0].state,
            ServerState::Failed {
                error: StartError::Spawn { .. },
                ..
            }
        ),
        "{status:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_never_answers_fails_after_the_startup_timeout() {
    let mut silent = McpServerConfig::stdio("sleep", &["30"]);
    silent.startup_timeout_secs = 1;
    let toolbox = toolbox(vec![("silent", silent)]);
    let started = Instant::now();
    toolbox.start().await;
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_secs(1) && waited < Duration::from_secs(10),
        "{waited:?}"
    );
    assert!(toolbox.schemas().is_empty());
    let status = toolbox.status().await;
    assert_eq!(
        status[0].state,
        ServerState::Failed {
            error: StartError::InitializeTimeout(Duration::from_secs(1)),
            restarts: 0
        }
    );
    let call = toolbox
        .call("mcp__silent__x", json!({}), &ctx(std::path::Path::new("/")))
        .await;
    match call {
        Err(ToolError::Failed(message)) => {
            assert!(
                message.contains("`silent`") && message.contains("initialize"),
                "{message}"
            )
        }
        other => panic!("expected a failure naming the server: {other:?}"),
    }
}

/// Whether process `pid` is gone (or a zombie waiting for its parent).
fn gone(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn what_a_failed_server_started_dies_with_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pid_file = dir.path().join("sleep.pid");
    let script = format!("sleep 300 & echo $! > {}; wait", pid_file.display());
    let mut silent = McpServerConfig::stdio("sh", &["-c", &script]);
    silent.startup_timeout_secs = 1;
    let toolbox = toolbox(vec![("silent", silent)]);
    toolbox.start().await;
    let pid = std::fs::read_to_string(&pid_file).expect("the script wrote its sleep's pid");
    let pid = pid.trim();
    // The kill is sent when the start gives up; the process may take a moment to die.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !gone(pid) && Instant::now() < deadline {
        tokio::task::yield_now().await;
    }
    assert!(gone(pid), "the server's own child {pid} outlived it");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_exits_at_once_reports_why() {
    let toolbox = toolbox(vec![(
        "gone",
        McpServerConfig::stdio("sh", &["-c", "echo bye >&2; exit 3"]),
    )]);
    toolbox.start().await;
    let status = toolbox.status().await;
    match &status[0].state {
        ServerState::Failed {
            error: StartError::Exited { status, stderr },
            ..
        } => {
            assert!(status.contains('3'), "{status}");
            assert!(stderr.contains("bye"), "{stderr}");
        }
        other => panic!("{other:?}"),
    }
}

/// Kills the server's process and waits until the toolbox sees it dead.
async fn kill_and_wait(toolbox: &McpToolbox, pid: u32) {
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    while matches!(
        toolbox.status().await[0].state,
        ServerState::Started { alive: true, .. }
    ) {
        assert!(Instant::now() < deadline, "process {pid} survived SIGKILL");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn pid_of(toolbox: &McpToolbox) -> u32 {
    match &toolbox.status().await[0].state {
        ServerState::Started { pid: Some(pid), .. } => *pid,
        other => panic!("not started: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_server_is_restarted_once_then_fails() {
    let Some(dir) = servers_or_skip() else { return };
    let toolbox = toolbox(vec![("everything", everything(dir))]);
    toolbox.start().await;
    let ctx = ctx(dir);
    let echo = || toolbox.call("mcp__everything__echo", json!({"message": "again"}), &ctx);

    let first = pid_of(&toolbox).await;
    kill_and_wait(&toolbox, first).await;
    let after_restart = echo().await.expect("restarted");
    assert!(after_restart.content.contains("again"));
    let second = pid_of(&toolbox).await;
    assert_ne!(first, second);
    assert!(matches!(
        toolbox.status().await[0].state,
        ServerState::Started { restarts: 1, .. }
    ));

    kill_and_wait(&toolbox, second).await;
    match echo().await {
        Err(ToolError::Failed(message)) => assert!(message.contains("`everything`"), "{message}"),
        other => panic!("expected a failure naming the server: {other:?}"),
    }
    assert!(matches!(
        toolbox.status().await[0].state,
        ServerState::Failed {
            error: StartError::Crashed,
            restarts: 1
        }
    ));
    assert!(toolbox.schemas().is_empty());
    // Later calls keep naming the server.
    match echo().await {
        Err(ToolError::Failed(message)) => assert!(message.contains("`everything`"), "{message}"),
        other => panic!("expected a failure naming the server: {other:?}"),
    }
    let unknown = toolbox.call("mcp__other__echo", json!({}), &ctx).await;
    assert!(matches!(unknown, Err(ToolError::Refused(_))), "{unknown:?}");
}

#[tokio::test]
async fn schemas_on_a_current_thread_runtime_start_in_the_background() {
    let Some(dir) = servers_or_skip() else { return };
    let toolbox = toolbox(vec![("everything", everything(dir))]);
    // Cannot wait in place here: starts the servers in the background.
    let _ = toolbox.schemas();
    toolbox.start().await;
    assert!(toolbox
        .schemas()
        .iter()
        .any(|s| s.name == "mcp__everything__echo"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_sees_its_declared_env_and_no_other_variable() {
    let Some(dir) = servers_or_skip() else { return };
    // cargo sets it for test processes: a variable of ours the server must not see.
    assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some());
    let mut config = everything(dir);
    config
        .env
        .insert("MCP_DECLARED".into(), "declared-value".into());
    let toolbox = toolbox(vec![("everything", config)]);
    let env = toolbox
        .call("mcp__everything__get-env", json!({}), &ctx(dir))
        .await
        .expect("get-env");
    assert!(env.content.contains("declared-value"), "{env:?}");
    assert!(env.content.contains("PATH"), "{env:?}");
    assert!(!env.content.contains("CARGO_MANIFEST_DIR"), "{env:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cancelled_call_fails_and_the_server_stays_usable() {
    let Some(dir) = servers_or_skip() else { return };
    let toolbox = toolbox(vec![("everything", everything(dir))]);
    let cancelled = ctx(dir);
    cancelled.cancel.cancel();
    let slow = toolbox
        .call(
            "mcp__everything__trigger-long-running-operation",
            json!({"duration": 30, "steps": 2}),
            &cancelled,
        )
        .await;
    match slow {
        Err(ToolError::Failed(message)) => assert!(message.contains("cancelled"), "{message}"),
        other => panic!("expected a cancelled call: {other:?}"),
    }
    let echo = toolbox
        .call(
            "mcp__everything__echo",
            json!({"message": "still here"}),
            &ctx(dir),
        )
        .await
        .expect("echo after a cancelled call");
    assert!(echo.content.contains("still here"));
}
