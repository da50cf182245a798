//! `shell_exec` against a real bash.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::{Duration, Instant};

use adapter_tools_shell::{FileReadTool, ShellExecTool, ShellToolsConfig};
use common::{ctx, has_lines, process_gone, read_pids, wait_until};
use domain::ports::Tool;
use domain::ToolError;
use serde_json::json;

const LIMIT: Duration = Duration::from_secs(15);

fn shell() -> ShellExecTool {
    ShellExecTool::default()
}

#[tokio::test]
async fn echo_to_a_file_and_read_it_back() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let out = shell()
        .execute(
            json!({"command": "echo hello > greeting.txt && echo written"}),
            &ctx,
        )
        .await
        .unwrap();
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(
        out.content,
        "exit code: 0\n--- stdout ---\nwritten\n--- stderr: (empty) ---"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("greeting.txt")).unwrap(),
        "hello\n"
    );
    let read = FileReadTool::new()
        .execute(json!({"path": "greeting.txt"}), &ctx)
        .await
        .unwrap();
    assert_eq!(read.content, "hello\n");
}

#[tokio::test]
async fn runs_in_the_workspace_with_pwd_set() {
    let dir = tempfile::tempdir().unwrap();
    let canonical = dir.path().canonicalize().unwrap();
    let out = shell()
        .execute(json!({"command": "pwd; echo \"$PWD\""}), &ctx(dir.path()))
        .await
        .unwrap();
    let expected = format!("{}\n{}", canonical.display(), canonical.display());
    assert!(out.content.contains(&expected), "{}", out.content);
}

#[tokio::test]
async fn non_zero_exit_is_an_error_output_with_both_streams() {
    let dir = tempfile::tempdir().unwrap();
    let out = shell()
        .execute(
            json!({"command": "echo to-out; echo to-err >&2; exit 3"}),
            &ctx(dir.path()),
        )
        .await
        .unwrap();
    assert!(out.is_error);
    assert_eq!(
        out.content,
        "exit code: 3\n--- stdout ---\nto-out\n--- stderr ---\nto-err"
    );
}

/// Stdin is an open pipe (so `shell_write` can answer prompts): a command reading it waits
/// for input and outlives the wait as a session; `< /dev/null` gives it empty input.
#[tokio::test]
async fn stdin_is_open_unless_redirected() {
    let dir = tempfile::tempdir().unwrap();
    let out = shell()
        .execute(
            json!({"command": "cat < /dev/null; echo end"}),
            &ctx(dir.path()),
        )
        .await
        .unwrap();
    assert!(
        out.content.contains("--- stdout ---\nend"),
        "{}",
        out.content
    );
    let tool = shell();
    let out = tool
        .execute(
            json!({"command": "cat; echo end", "wait_secs": 1}),
            &ctx(dir.path()),
        )
        .await
        .unwrap();
    assert!(
        out.content
            .starts_with("still running after 1 s; session id: sh1"),
        "{}",
        out.content
    );
    // Silent so far: perhaps waiting for input it was never given.
    assert!(
        out.content
            .contains("It printed nothing yet: if it is waiting for input"),
        "{}",
        out.content
    );
    assert_eq!(tool.sessions().close_run("run_1").await, 1);
}

#[tokio::test]
async fn timeout_kills_the_whole_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let command = "sleep 30 & echo $! >> pids; sleep 30 & echo $! >> pids; echo $$ >> pids; \
                   echo started; sleep 30";
    let started = Instant::now();
    let out = shell()
        .execute(
            json!({"command": command, "timeout_secs": 1}),
            &ctx(dir.path()),
        )
        .await
        .unwrap();
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
    assert!(out.is_error);
    assert!(
        out.content
            .starts_with("timed out after 1 s; process group killed"),
        "{}",
        out.content
    );
    assert!(
        out.content.contains("started"),
        "partial output kept: {}",
        out.content
    );
    let pids = read_pids(&pids);
    assert_eq!(pids.len(), 3);
    for pid in pids {
        wait_until(&format!("process {pid} to die"), LIMIT, || {
            process_gone(pid)
        })
        .await;
    }
}

#[tokio::test]
async fn a_background_child_does_not_hang_the_call_and_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let out = shell()
        .execute(
            json!({"command": "sleep 100 & echo $! > bg.pid; echo done"}),
            &ctx(dir.path()),
        )
        .await
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(!out.is_error, "{}", out.content);
    assert!(
        out.content.contains("--- stdout ---\ndone"),
        "{}",
        out.content
    );
    let pid = read_pids(&dir.path().join("bg.pid"))[0];
    wait_until("the background sleep to die", LIMIT, || process_gone(pid)).await;
}

#[tokio::test]
async fn huge_output_is_capped_keeping_head_and_tail() {
    let dir = tempfile::tempdir().unwrap();
    let out = shell()
        .execute(
            json!({"command": "yes | head -c 100000000; printf 'THE-END'; seq 1 200000 >&2"}),
            &ctx(dir.path()),
        )
        .await
        .unwrap();
    assert!(!out.is_error);
    assert!(
        out.content.len() < 3 * 64 * 1024,
        "{} bytes",
        out.content.len()
    );
    let (stdout, stderr) = out.content.split_once("--- stderr ---").unwrap();
    assert!(stdout.starts_with("exit code: 0\n--- stdout ---\ny\ny\n"));
    assert!(stdout.contains("bytes omitted from the middle (100000007 bytes in total)"));
    assert!(
        stdout.trim_end().ends_with("y\nTHE-END"),
        "{}",
        &stdout[stdout.len() - 50..]
    );
    assert!(stderr.contains("\n1\n2\n3\n"));
    assert!(stderr.contains("bytes omitted"));
    assert!(stderr.ends_with("199999\n200000"));
}

#[tokio::test]
async fn output_cap_is_configurable() {
    let dir = tempfile::tempdir().unwrap();
    let tool = ShellExecTool::new(Duration::from_secs(5)).with_max_output_bytes(10);
    let out = tool
        .execute(
            json!({"command": "echo 0123456789abcdefghij"}),
            &ctx(dir.path()),
        )
        .await
        .unwrap();
    assert!(
        out.content.contains("01234\n[... 11 bytes omitted"),
        "{}",
        out.content
    );
    assert!(
        out.content.contains("...]\nghij\n--- stderr"),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn default_timeout_comes_from_the_constructor() {
    let dir = tempfile::tempdir().unwrap();
    let tools = adapter_tools_shell::shell_tools_with(&ShellToolsConfig {
        default_timeout: Duration::from_secs(1),
        ..ShellToolsConfig::default()
    });
    let out = tools[0]
        .execute(json!({"command": "sleep 30"}), &ctx(dir.path()))
        .await
        .unwrap();
    assert!(
        out.content.starts_with("timed out after 1 s"),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn cancellation_kills_the_group_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let pids = dir.path().join("pids");
    let task = {
        let ctx = ctx.clone();
        tokio::spawn(async move {
            shell()
                .execute(
                    json!({"command": "echo $$ >> pids; sleep 30 & echo $! >> pids; wait"}),
                    &ctx,
                )
                .await
        })
    };
    wait_until("the command to start", LIMIT, || has_lines(&pids, 2)).await;
    let started = Instant::now();
    ctx.cancel.cancel();
    let result = task.await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(
        matches!(&result, Err(ToolError::Failed(m)) if m.contains("cancelled")),
        "{result:?}"
    );
    for pid in read_pids(&pids) {
        wait_until(&format!("process {pid} to die"), LIMIT, || {
            process_gone(pid)
        })
        .await;
    }
}

#[tokio::test]
async fn bad_arguments_are_invalid_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let cases = [
        (json!({}), "missing field `command`"),
        (json!({"command": 5}), "invalid type"),
        (
            json!({"command": "ls", "timeout_secs": "ten"}),
            "shell_exec: `timeout_secs` must be a whole number between 1 and 600, got \"ten\"",
        ),
        (
            json!({"command": "ls", "timeout_secs": -1}),
            "`timeout_secs` must be a whole number between 1 and 600, got -1",
        ),
        (
            json!({"command": "ls", "timeout_secs": 0}),
            "`timeout_secs` must be a whole number between 1 and 600, got 0",
        ),
        (
            json!({"command": "ls", "timeout_secs": 100000}),
            "`timeout_secs` must be a whole number between 1 and 600, got 100000",
        ),
        (
            json!({"command": "ls", "timeout_secs": 1.5}),
            "`timeout_secs` must be a whole number between 1 and 600, got 1.5",
        ),
        (
            json!({"command": "ls", "wait_secs": 3_000_000_000_000_000_u64}),
            "`wait_secs` must be a whole number between 1 and 600, got 3000000000000000",
        ),
        (
            json!({"command": "ls", "wait_secs": 601}),
            "`wait_secs` must be a whole number between 1 and 600, got 601",
        ),
        (
            json!({"command": "shell_exec"}),
            "`shell_exec` is the tool's name, not a shell command: put the command to run \
             in `command`, e.g. `ls -la`",
        ),
        (
            json!({"command": "file_read notes.txt"}),
            "`file_read` is a tool's name, not a shell command",
        ),
        (
            json!({"command": "  "}),
            "shell_exec: `command` must not be empty",
        ),
        (
            json!({"command": ""}),
            "shell_exec: `command` must not be empty",
        ),
        (json!({"command": "ls", "cwd": "/"}), "unknown field `cwd`"),
        (json!("ls"), "invalid type"),
    ];
    for (args, expected) in cases {
        let err = shell().execute(args.clone(), &ctx).await.unwrap_err();
        assert!(
            matches!(&err, ToolError::InvalidArguments(m) if m.contains(expected)),
            "{args}: {err:?}"
        );
    }
}

#[tokio::test]
async fn numbers_at_the_ends_of_the_ranges_and_quoted_numbers_work() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        json!({"command": "echo ok", "timeout_secs": 600, "wait_secs": 600}),
        json!({"command": "echo ok", "timeout_secs": 1, "wait_secs": 1}),
        json!({"command": "echo ok", "timeout_secs": "5", "wait_secs": 5.0}),
    ] {
        let out = shell()
            .execute(args.clone(), &ctx(dir.path()))
            .await
            .unwrap();
        assert!(!out.is_error, "{args}: {}", out.content);
        assert!(out.content.contains("ok"), "{args}: {}", out.content);
    }
}

#[tokio::test]
async fn a_missing_workspace_is_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let err = shell()
        .execute(json!({"command": "ls"}), &ctx(&dir.path().join("nope")))
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::Failed(m) if m.contains("not accessible")));
}

/// Commands run under resource limits (file size, heap, processes): see docs/security.md.
#[tokio::test]
async fn commands_run_with_resource_limits() {
    let dir = tempfile::tempdir().unwrap();
    let out = ShellExecTool::default()
        .execute(
            json!({"command": "echo \"f=$(ulimit -f) d=$(ulimit -d) u=$(ulimit -u)\""}),
            &ctx(dir.path()),
        )
        .await
        .unwrap();
    assert!(
        out.content.contains("f=1048576 d=4194304 u=2048"),
        "{}",
        out.content
    );
}

/// A fork bomb stops at the command's process limit, for root too: each command runs in its
/// own pids cgroup (`RLIMIT_NPROC` is never enforced for root). Under `CI=true` (root in a
/// container with a writable pids cgroup) it must be in force.
#[tokio::test]
async fn a_fork_bomb_stops_at_the_process_limit_even_as_root() {
    let dir = tempfile::tempdir().unwrap();
    let where_ = ShellExecTool::default()
        .execute(
            json!({"command": "cat /proc/self/cgroup"}),
            &ctx(dir.path()),
        )
        .await
        .unwrap();
    if !where_.content.contains("/planwright-") {
        assert!(
            !test_support::under_ci(),
            "CI=true runs commands in a pids cgroup: {}",
            where_.content
        );
        return;
    }
    let bomb = "perl -e 'my $n = 0; while ($n < 5000) { my $p = fork(); \
        if (!defined $p) { print \"stopped at $n\\n\"; last } \
        if ($p == 0) { sleep 30; exit 0 } $n++ } print \"made $n\\n\"'";
    let out = ShellExecTool::default()
        .execute(
            json!({"command": bomb, "timeout_secs": 60, "wait_secs": 60}),
            &ctx(dir.path()),
        )
        .await
        .unwrap();
    let stopped: u64 = out
        .content
        .lines()
        .find_map(|l| l.trim().strip_prefix("stopped at "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("the bomb was not stopped: {}", out.content));
    assert!((1000..2048).contains(&stopped), "{}", out.content);
}

/// Whether unsandboxed commands get their own PID namespace here (root, or CAP_SYS_ADMIN).
/// Under `CI=true` (root in a container) they must.
fn namespaces_usable() -> bool {
    let root = common::contained();
    assert!(
        root || !test_support::under_ci(),
        "CI=true runs as root, where commands are contained in a PID namespace"
    );
    root
}

/// `setsid cmd &` (a new session and process group) used to outlive the command without a
/// sandbox; in its own PID namespace it ends with the command.
#[tokio::test]
async fn a_detached_process_does_not_outlive_its_command() {
    if !namespaces_usable() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("pw-detached-{}", std::process::id());
    let command = format!("(setsid bash -c 'exec -a {marker} sleep 300' &); echo detached");
    let out = shell()
        .execute(json!({"command": command}), &ctx(dir.path()))
        .await
        .unwrap();
    assert!(!out.is_error, "{}", out.content);
    assert!(out.content.contains("detached"), "{}", out.content);
    // The namespace is torn down before the command's exit is reported.
    assert_eq!(common::pids_named(&marker), Vec::<i32>::new());
}
