//! Shell sessions (`shell_exec` outliving its wait, then `shell_view`, `shell_wait`,
//! `shell_write`, `shell_kill`) against a real bash. Every test synchronises on output,
//! files or process exits, never on a fixed sleep.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use adapter_tools_shell::{
    shell_toolkit, ShellSessions, ShellToolsConfig, SHELL_EXEC, SHELL_KILL, SHELL_VIEW, SHELL_WAIT,
    SHELL_WRITE,
};
use common::{ctx, ctx_in_run, has_lines, process_gone, read_pids, wait_until};
use domain::ports::{Tool, ToolContext, ToolOutput};
use domain::ToolError;
use serde_json::{json, Value};

const LIMIT: Duration = Duration::from_secs(15);

/// The nine tools, their registry, and a transcript of every reply: a session's output is
/// shown once, in whichever reply comes first, so tests look for it in the transcript.
struct Kit {
    tools: Vec<Arc<dyn Tool>>,
    sessions: ShellSessions,
    transcript: Mutex<String>,
}

impl Kit {
    fn new() -> Kit {
        Kit::with(ShellToolsConfig::default())
    }

    fn with(config: ShellToolsConfig) -> Kit {
        let kit = shell_toolkit(&config);
        Kit {
            tools: kit.tools,
            sessions: kit.sessions,
            transcript: Mutex::new(String::new()),
        }
    }

    /// The current end of the transcript.
    fn mark(&self) -> usize {
        self.transcript.lock().unwrap().len()
    }

    /// The transcript from `mark` on.
    fn since(&self, mark: usize) -> String {
        self.transcript.lock().unwrap()[mark..].to_string()
    }

    async fn call(&self, tool: &str, args: Value, ctx: &ToolContext) -> ToolOutput {
        self.try_call(tool, args.clone(), ctx)
            .await
            .unwrap_or_else(|e| panic!("{tool} {args}: {e}"))
    }

    async fn try_call(
        &self,
        tool: &str,
        args: Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let tool = self.tools.iter().find(|t| t.name() == tool).unwrap();
        let result = tool.execute(args, ctx).await;
        let text = match &result {
            Ok(out) => out.content.clone(),
            Err(e) => e.to_string(),
        };
        let mut transcript = self.transcript.lock().unwrap();
        transcript.push_str(&text);
        transcript.push('\n');
        result
    }

    /// Starts `command` with a 1 s wait; it must still be running: returns its reply.
    async fn start(&self, command: &str, ctx: &ToolContext) -> ToolOutput {
        let out = self
            .call(SHELL_EXEC, json!({"command": command, "wait_secs": 1}), ctx)
            .await;
        assert!(
            out.content
                .starts_with("still running after 1 s; session id: sh"),
            "{}",
            out.content
        );
        assert!(!out.is_error, "{}", out.content);
        out
    }

    /// Views session `id` until the transcript from `mark` on contains `needle`; returns
    /// that part of the transcript.
    async fn view_until(&self, id: &str, needle: &str, mark: usize, ctx: &ToolContext) -> String {
        let started = Instant::now();
        loop {
            let seen = self.since(mark);
            if seen.contains(needle) {
                return seen;
            }
            assert!(
                started.elapsed() < LIMIT,
                "timed out waiting for {needle:?} in:\n{seen}"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
            self.call(SHELL_VIEW, json!({ "id": id }), ctx).await;
        }
    }
}

/// The session id in a `still running` reply.
fn session_id(out: &ToolOutput) -> String {
    let first = out.content.lines().next().unwrap();
    first.rsplit("session id: ").next().unwrap().to_string()
}

async fn all_gone(pids: &[i32]) {
    for &pid in pids {
        wait_until(&format!("process {pid} to die"), LIMIT, || {
            process_gone(pid)
        })
        .await;
    }
}

fn assert_invalid(result: Result<ToolOutput, ToolError>, expected: &str) {
    assert!(
        matches!(&result, Err(ToolError::InvalidArguments(m)) if m.contains(expected)),
        "expected {expected:?}, got {result:?}"
    );
}

#[tokio::test]
async fn a_long_command_returns_still_running_with_a_session_id() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let kit = Kit::new();
    let out = kit.start("echo started; read -r never", &ctx).await;
    assert_eq!(session_id(&out), "sh1");
    let second_line = out.content.lines().nth(1).unwrap();
    assert!(
        second_line.contains("killed 60 s after it started"),
        "{out:?}"
    );
    assert!(
        second_line.contains("shell_view") && second_line.contains("shell_kill"),
        "{second_line}"
    );
    assert!(out.content.contains("\n--- stdout"), "{}", out.content);
    assert!(out.content.contains("\n--- stderr"), "{}", out.content);
    // The output so far is in the reply, or in the next look if it was slow to arrive.
    kit.view_until("sh1", "started", 0, &ctx).await;
    assert_eq!(kit.sessions.ids("run_1"), ["sh1"]);
    assert_eq!(kit.sessions.running("run_1"), 1);

    let second = kit.start("read -r never", &ctx).await;
    assert_eq!(session_id(&second), "sh2");

    // A command ending within its wait is reported as always and leaves no session.
    let quick = kit
        .call(SHELL_EXEC, json!({"command": "echo quick"}), &ctx)
        .await;
    assert_eq!(
        quick.content,
        "exit code: 0\n--- stdout ---\nquick\n--- stderr: (empty) ---"
    );
    assert_eq!(kit.sessions.ids("run_1"), ["sh1", "sh2"]);
    assert_eq!(kit.sessions.close_run("run_1").await, 2);
}

#[tokio::test]
async fn shell_view_shows_only_new_output() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let kit = Kit::new();
    kit.start(
        "echo one; echo err-one >&2; read -r a; echo \"two:$a\"; read -r b",
        &ctx,
    )
    .await;
    let seen = kit.view_until("sh1", "err-one", 0, &ctx).await;
    assert!(seen.contains("one\n"), "{seen}");
    // The command now waits for input: nothing new to show.
    let quiet = kit.call(SHELL_VIEW, json!({"id": "sh1"}), &ctx).await;
    assert!(!quiet.is_error);
    let status = quiet.content.lines().next().unwrap();
    assert!(
        status.starts_with("session sh1: still running after ")
            && status.ends_with("(killed at 60 s)"),
        "{status}"
    );
    assert!(
        quiet
            .content
            .ends_with("--- new stdout: (empty) ---\n--- new stderr: (empty) ---"),
        "{}",
        quiet.content
    );
    let mark = kit.mark();
    kit.call(SHELL_WRITE, json!({"id": "sh1", "input": "x"}), &ctx)
        .await;
    let seen = kit.view_until("sh1", "two:x", mark, &ctx).await;
    assert!(!seen.contains("one"), "old output shown again: {seen}");
    assert!(seen.contains("--- new stdout ---\ntwo:x"), "{seen}");
    kit.sessions.close_run("run_1").await;
}

#[tokio::test]
async fn shell_write_sends_a_line_and_shell_wait_sees_the_exit() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let kit = Kit::new();
    kit.start("read -r line; echo \"got:$line\"; exit 4", &ctx)
        .await;
    let wrote = kit
        .call(SHELL_WRITE, json!({"id": "sh1", "input": "hello"}), &ctx)
        .await;
    assert!(
        wrote.content.lines().nth(1) == Some("wrote 6 bytes to its stdin"),
        "{}",
        wrote.content
    );
    let waited = kit
        .call(SHELL_WAIT, json!({"id": "sh1", "seconds": 30}), &ctx)
        .await;
    let all = format!("{}\n{}", wrote.content, waited.content);
    assert!(all.contains("got:hello"), "{all}");
    assert!(
        waited.content.starts_with("session sh1: exit code: 4"),
        "{}",
        waited.content
    );
    assert!(
        waited.is_error,
        "a non-zero exit is a failure, as for shell_exec"
    );

    // The command has ended: writing is an error, looking again shows the same status.
    let err = kit
        .try_call(SHELL_WRITE, json!({"id": "sh1", "input": "more"}), &ctx)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ToolError::Failed(m) if m.contains("session sh1 has ended; nothing was written")),
        "{err:?}"
    );
    let again = kit.call(SHELL_VIEW, json!({"id": "sh1"}), &ctx).await;
    assert!(again.content.starts_with("session sh1: exit code: 4"));
    assert!(!again.content.contains("got:hello"), "{}", again.content);
}

#[tokio::test]
async fn shell_write_without_enter_sends_the_bare_input() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let kit = Kit::new();
    kit.start("read -r -n 3 x; echo \"got:$x.\"", &ctx).await;
    let wrote = kit
        .call(
            SHELL_WRITE,
            json!({"id": "sh1", "input": "abc", "press_enter": false}),
            &ctx,
        )
        .await;
    assert!(wrote.content.contains("wrote 3 bytes"), "{}", wrote.content);
    let waited = kit
        .call(SHELL_WAIT, json!({"id": "sh1", "seconds": 30}), &ctx)
        .await;
    let all = format!("{}\n{}", wrote.content, waited.content);
    assert!(all.contains("got:abc."), "{all}");
    assert!(waited.content.starts_with("session sh1: exit code: 0"));
    assert!(!waited.is_error);
}

#[tokio::test]
async fn a_command_that_closed_its_stdin_cannot_be_written_to() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let kit = Kit::new();
    kit.start(
        "exec 0<&-; echo closed; while [ ! -e go ]; do sleep 0.05; done",
        &ctx,
    )
    .await;
    kit.view_until("sh1", "closed", 0, &ctx).await;
    let written = kit
        .try_call(SHELL_WRITE, json!({"id": "sh1", "input": "x"}), &ctx)
        .await;
    if common::contained() {
        // In its own PID namespace the command's `unshare` parent still holds the pipe
        // open, so the write lands in the pipe, unread: harmless, and it never blocks.
        let out = written.unwrap();
        assert!(out.content.contains("wrote 2 bytes"), "{}", out.content);
    } else {
        let err = written.unwrap_err();
        assert!(
            matches!(&err, ToolError::Failed(m) if m.contains("closed its stdin")),
            "{err:?}"
        );
    }
    kit.sessions.close_run("run_1").await;
}

#[tokio::test]
async fn shell_wait_returns_when_the_command_ends_or_the_time_is_up() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let kit = Kit::new();
    kit.start(
        "echo waiting; while [ ! -e go ]; do sleep 0.05; done; echo bye; exit 3",
        &ctx,
    )
    .await;
    let still = kit
        .call(SHELL_WAIT, json!({"id": "sh1", "seconds": 1}), &ctx)
        .await;
    assert!(
        still
            .content
            .starts_with("session sh1: still running after "),
        "{}",
        still.content
    );
    assert!(!still.is_error);
    std::fs::write(dir.path().join("go"), "").unwrap();
    let started = Instant::now();
    let done = kit
        .call(SHELL_WAIT, json!({"id": "sh1", "seconds": 60}), &ctx)
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "returned at the end"
    );
    assert!(
        done.content.starts_with("session sh1: exit code: 3"),
        "{}",
        done.content
    );
    assert!(done.content.contains("bye"), "{}", done.content);
    assert!(done.is_error);
}

#[tokio::test]
async fn shell_kill_kills_the_whole_group() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let pids = dir.path().join("pids");
    let kit = Kit::new();
    kit.start(
        "sleep 300 & echo $! >> pids; sleep 300 & echo $! >> pids; echo $$ >> pids; wait",
        &ctx,
    )
    .await;
    wait_until("the command to start", LIMIT, || has_lines(&pids, 3)).await;
    let killed = kit.call(SHELL_KILL, json!({"id": "sh1"}), &ctx).await;
    assert!(
        killed
            .content
            .starts_with("session sh1: killed on request; process group killed"),
        "{}",
        killed.content
    );
    assert!(!killed.is_error);
    all_gone(&read_pids(&pids)).await;
    let again = kit.call(SHELL_KILL, json!({"id": "sh1"}), &ctx).await;
    assert!(
        again
            .content
            .contains("it had already ended; nothing was killed"),
        "{}",
        again.content
    );
    assert_eq!(kit.sessions.running("run_1"), 0);
}

#[tokio::test]
async fn unknown_ids_and_bad_arguments_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let kit = Kit::new();
    for tool in [SHELL_VIEW, SHELL_KILL] {
        assert_invalid(
            kit.try_call(tool, json!({"id": "sh9"}), &ctx).await,
            "no shell session 'sh9'; this run has no shell sessions",
        );
    }
    kit.start("read -r never", &ctx).await;
    kit.start("read -r never", &ctx).await;
    let cases = [
        (SHELL_VIEW, json!({"id": "sh9"})),
        (SHELL_WAIT, json!({"id": "sh9", "seconds": 1})),
        (SHELL_WRITE, json!({"id": "sh9", "input": "x"})),
        (SHELL_KILL, json!({"id": "sh9"})),
    ];
    for (tool, args) in cases {
        assert_invalid(
            kit.try_call(tool, args, &ctx).await,
            "no shell session 'sh9'; this run's sessions: sh1 (running), sh2 (running)",
        );
    }
    assert_invalid(
        kit.try_call(SHELL_VIEW, json!({"id": " "}), &ctx).await,
        "`id` must not be empty; this run's sessions: sh1 (running), sh2 (running)",
    );
    let bad = [
        (SHELL_VIEW, json!({}), "missing field `id`"),
        (SHELL_VIEW, json!({"id": 1}), "invalid type"),
        (SHELL_WAIT, json!({"id": "sh1"}), "missing field `seconds`"),
        (
            SHELL_WAIT,
            json!({"id": "sh1", "seconds": 0}),
            "shell_wait: `seconds` must be a whole number between 1 and 600, got 0 (shell_view \
             looks without waiting)",
        ),
        (
            SHELL_WAIT,
            json!({"id": "sh1", "seconds": -2}),
            "`seconds` must be a whole number between 1 and 600, got -2",
        ),
        (
            SHELL_WAIT,
            json!({"id": "sh1", "seconds": 5000}),
            "`seconds` must be a whole number between 1 and 600, got 5000",
        ),
        (
            SHELL_WAIT,
            json!({"id": "sh1", "seconds": 3_000_000_000_000_000_u64}),
            "`seconds` must be a whole number between 1 and 600, got 3000000000000000",
        ),
        (SHELL_WRITE, json!({"id": "sh1"}), "missing field `input`"),
        (
            SHELL_WRITE,
            json!({"id": "sh1", "input": "", "press_enter": false}),
            "nothing to write",
        ),
        (
            SHELL_KILL,
            json!({"id": "sh1", "force": true}),
            "unknown field `force`",
        ),
        (
            SHELL_EXEC,
            json!({"command": "ls", "wait_secs": 0}),
            "`wait_secs` must be a whole number between 1 and 600, got 0",
        ),
        (
            SHELL_EXEC,
            json!({"command": "ls", "wait_secs": "soon"}),
            "`wait_secs` must be a whole number between 1 and 600, got \"soon\"",
        ),
    ];
    for (tool, args, expected) in bad {
        assert_invalid(kit.try_call(tool, args, &ctx).await, expected);
    }
    // The sessions survived the bad calls.
    assert_eq!(kit.sessions.running("run_1"), 2);
    // An ended session is still listed, as ended.
    kit.call(SHELL_KILL, json!({"id": "sh1"}), &ctx).await;
    assert_invalid(
        kit.try_call(SHELL_VIEW, json!({"id": "plan_1"}), &ctx)
            .await,
        "no shell session 'plan_1'; this run's sessions: sh1 (ended), sh2 (running)",
    );
    kit.sessions.close_run("run_1").await;
}

#[tokio::test]
async fn sessions_of_one_run_are_invisible_to_another() {
    let dir = tempfile::tempdir().unwrap();
    let run_a = ctx_in_run(dir.path(), "run_a");
    let run_b = ctx_in_run(dir.path(), "run_b");
    let kit = Kit::new();
    // Each in a folder of its own: `$$` may be a namespace pid, resolved by folder.
    std::fs::create_dir(dir.path().join("a")).unwrap();
    std::fs::create_dir(dir.path().join("b")).unwrap();
    kit.start("cd a && echo $$ > pid; echo from-a; read -r never", &run_a)
        .await;
    assert_invalid(
        kit.try_call(SHELL_VIEW, json!({"id": "sh1"}), &run_b).await,
        "no shell session 'sh1'; this run has no shell sessions",
    );
    // Run B numbers its own sessions and sees only its own output.
    let mark = kit.mark();
    let b = kit
        .start("cd b && echo $$ > pid; echo from-b; read -r never", &run_b)
        .await;
    assert_eq!(session_id(&b), "sh1");
    let seen = kit.view_until("sh1", "from-b", mark, &run_b).await;
    assert!(!seen.contains("from-a"), "{seen}");
    wait_until("both pids", LIMIT, || {
        has_lines(&dir.path().join("a/pid"), 1) && has_lines(&dir.path().join("b/pid"), 1)
    })
    .await;
    let pid_a = read_pids(&dir.path().join("a/pid"))[0];
    let pid_b = read_pids(&dir.path().join("b/pid"))[0];

    // Closing run A leaves run B's session alone.
    assert_eq!(kit.sessions.close_run("run_a").await, 1);
    all_gone(&[pid_a]).await;
    assert!(!process_gone(pid_b));
    assert!(kit.sessions.ids("run_a").is_empty());
    assert_eq!(kit.sessions.ids("run_b"), ["sh1"]);
    assert_invalid(
        kit.try_call(SHELL_VIEW, json!({"id": "sh1"}), &run_a).await,
        "this run has no shell sessions",
    );
    assert_eq!(kit.sessions.close_run("run_b").await, 1);
    all_gone(&[pid_b]).await;
}

#[tokio::test]
async fn close_run_kills_every_session_of_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let kit = Kit::new();
    for n in 1..=3 {
        kit.start(
            &format!("sleep 300 & echo $! >> pids{n}; echo $$ >> pids{n}; wait"),
            &ctx,
        )
        .await;
    }
    // One of them ended already: it is not counted as killed.
    kit.call(SHELL_KILL, json!({"id": "sh3"}), &ctx).await;
    let files: Vec<_> = (1..=3)
        .map(|n| dir.path().join(format!("pids{n}")))
        .collect();
    wait_until("the commands to start", LIMIT, || {
        files[..2].iter().all(|f| has_lines(f, 2))
    })
    .await;
    assert_eq!(kit.sessions.close_run("run_1").await, 2);
    for file in &files[..2] {
        all_gone(&read_pids(file)).await;
    }
    assert!(kit.sessions.ids("run_1").is_empty());
    assert_eq!(kit.sessions.close_run("run_1").await, 0);
}

#[tokio::test]
async fn the_hard_timeout_kills_a_session() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let pids = dir.path().join("pids");
    let kit = Kit::new();
    let out = kit
        .call(
            SHELL_EXEC,
            json!({
                "command": "sleep 300 & echo $! >> pids; echo $$ >> pids; wait",
                "wait_secs": 1,
                "timeout_secs": 2
            }),
            &ctx,
        )
        .await;
    assert!(
        out.content.contains("killed 2 s after it started"),
        "{}",
        out.content
    );
    let waited = kit
        .call(SHELL_WAIT, json!({"id": "sh1", "seconds": 60}), &ctx)
        .await;
    assert!(
        waited
            .content
            .starts_with("session sh1: timed out after 2 s; process group killed"),
        "{}",
        waited.content
    );
    assert!(waited.is_error);
    all_gone(&read_pids(&pids)).await;
}

#[tokio::test]
async fn background_processes_die_when_the_session_command_exits() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let kit = Kit::new();
    kit.start(
        "sleep 300 & echo $! > bg.pid; while [ ! -e go ]; do sleep 0.05; done",
        &ctx,
    )
    .await;
    wait_until("the background pid", LIMIT, || {
        has_lines(&dir.path().join("bg.pid"), 1)
    })
    .await;
    std::fs::write(dir.path().join("go"), "").unwrap();
    let done = kit
        .call(SHELL_WAIT, json!({"id": "sh1", "seconds": 60}), &ctx)
        .await;
    assert!(
        done.content.starts_with("session sh1: exit code: 0"),
        "{}",
        done.content
    );
    all_gone(&read_pids(&dir.path().join("bg.pid"))).await;
}

#[tokio::test]
async fn cancelling_the_run_kills_its_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let pids = dir.path().join("pids");
    let kit = Kit::new();
    kit.start("sleep 300 & echo $! >> pids; echo $$ >> pids; wait", &ctx)
        .await;
    wait_until("the command to start", LIMIT, || has_lines(&pids, 2)).await;
    ctx.cancel.cancel();
    all_gone(&read_pids(&pids)).await;
    // Asked in a context whose token is not cancelled, so the wait is for the end.
    let out = kit
        .call(
            SHELL_WAIT,
            json!({"id": "sh1", "seconds": 30}),
            &ctx_in_run(dir.path(), "run_1"),
        )
        .await;
    assert!(
        out.content
            .starts_with("session sh1: cancelled; process group killed"),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn dropping_the_registry_and_tools_kills_the_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let pids = dir.path().join("pids");
    let kit = Kit::new();
    kit.start("sleep 300 & echo $! >> pids; echo $$ >> pids; wait", &ctx)
        .await;
    wait_until("the command to start", LIMIT, || has_lines(&pids, 2)).await;
    drop(kit);
    all_gone(&read_pids(&pids)).await;
}

#[tokio::test]
async fn a_dropped_call_kills_its_command() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let pids = dir.path().join("pids");
    let kit = Arc::new(Kit::new());
    let call = {
        let (kit, ctx) = (kit.clone(), ctx.clone());
        tokio::spawn(async move {
            kit.call(
                SHELL_EXEC,
                json!({"command": "sleep 300 & echo $! >> pids; echo $$ >> pids; wait"}),
                &ctx,
            )
            .await
        })
    };
    wait_until("the command to start", LIMIT, || has_lines(&pids, 2)).await;
    call.abort();
    assert!(call.await.unwrap_err().is_cancelled());
    all_gone(&read_pids(&pids)).await;
    assert!(kit.sessions.ids("run_1").is_empty());
}

/// Output keeps being captured, bounded, while nobody looks.
#[tokio::test]
async fn session_output_is_capped_per_look() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let kit = Kit::with(ShellToolsConfig {
        max_output_bytes: 64,
        ..ShellToolsConfig::default()
    });
    kit.start(
        "echo begin; read -r x; seq 1 100000; echo THE-END; read -r y",
        &ctx,
    )
    .await;
    kit.view_until("sh1", "begin", 0, &ctx).await;
    let mark = kit.mark();
    let mut replies = vec![
        kit.call(SHELL_WRITE, json!({"id": "sh1", "input": ""}), &ctx)
            .await
            .content,
    ];
    let started = Instant::now();
    while !replies.last().unwrap().contains("THE-END") {
        assert!(started.elapsed() < LIMIT, "no THE-END in {replies:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
        replies.push(
            kit.call(SHELL_VIEW, json!({"id": "sh1"}), &ctx)
                .await
                .content,
        );
    }
    assert!(
        kit.since(mark).contains("bytes omitted from the middle"),
        "{replies:?}"
    );
    for reply in &replies {
        assert!(reply.len() < 400, "{} bytes: {reply}", reply.len());
    }
    kit.sessions.close_run("run_1").await;
}
