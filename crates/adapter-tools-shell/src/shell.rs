//! The `shell_exec` tool: runs a command, waits up to `wait_secs` for it to end, and hands
//! a command still running after that over to [`ShellSessions`] as a session.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::OnceCell;

use domain::ports::{Tool, ToolContext, ToolEffect, ToolFamily, ToolOutput};
use domain::tools::args::{self as tool_args, IntRange, NumberArg};
use domain::ToolError;

use crate::env::ShellEnv;
use crate::process::{self, CommandSpec, Ending, Launch, Proc};
use crate::report::{report, still_running};
use crate::sandbox::{find_bwrap, BwrapPrograms, Sandbox};
use crate::sessions::ShellSessions;
use crate::{args, workspace, SHELL_EXEC};

pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
pub(crate) const MAX_TIMEOUT: Duration = Duration::from_secs(600);
pub(crate) const DEFAULT_WAIT: Duration = Duration::from_secs(30);
pub(crate) const DEFAULT_MAX_OUTPUT_BYTES: usize = 64 * 1024;

/// The limits a description states.
#[derive(Debug, Clone, Copy)]
struct Limits {
    default_timeout: Duration,
    max_timeout: Duration,
    default_wait: Duration,
    max_output_bytes: usize,
    sandbox: Sandbox,
}

/// The description shown to the model, with this tool's limits filled in; the ranges of
/// the arguments are in the schema ([`ShellExecTool::parameters`]).
fn describe(limits: Limits) -> String {
    let sandbox = match limits.sandbox {
        Sandbox::None => "",
        Sandbox::Bwrap {
            allow_network: false,
        } => " Sandboxed: only the workspace and a private /tmp are writable; no network.",
        Sandbox::Bwrap {
            allow_network: true,
        } => " Sandboxed: only the workspace and a private /tmp are writable.",
    };
    format!(
        "Run a bash command in the workspace; returns exit code, stdout, stderr (each cut to \
         {}). Name in `changes` the existing files it changes, moves or deletes. Still \
         running after wait_secs (default {}): returns a session id and keeps running. Killed \
         after timeout_secs (default {}). Stdin is open: use -y, </dev/null. `cmd &` dies \
         with it.{sandbox}",
        human_bytes(limits.max_output_bytes),
        secs(limits.default_wait.min(limits.default_timeout)),
        secs(limits.default_timeout.min(limits.max_timeout)),
    )
}

/// `30` for whole seconds, `0.5` otherwise.
pub(crate) fn secs(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        d.as_secs().to_string()
    } else {
        format!("{:.1}", d.as_secs_f64())
    }
}

/// `65536` → `64 KiB`.
pub(crate) fn human_bytes(n: usize) -> String {
    // `checked_rem` rather than `is_multiple_of`, which needs Rust 1.87 (MSRV is 1.85).
    if n >= 1024 * 1024 && n.checked_rem(1024 * 1024) == Some(0) {
        format!("{} MiB", n / (1024 * 1024))
    } else if n >= 1024 && n.checked_rem(1024) == Some(0) {
        format!("{} KiB", n / 1024)
    } else {
        format!("{n} bytes")
    }
}

/// Arguments of `shell_exec`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShellExecArgs {
    /// A bash command line, e.g. `ls -la`.
    pub command: String,
    // Seconds until the command and its children are killed. (Plain comments, not doc
    // comments: the tool's description explains both and the schema shows no text.)
    #[serde(default)]
    #[schemars(with = "Option<u64>")]
    pub timeout_secs: Option<NumberArg>,
    // Seconds to wait before returning a session id.
    #[serde(default)]
    #[schemars(with = "Option<u64>")]
    pub wait_secs: Option<NumberArg>,
    // Existing files the command changes, moves or deletes (docs/security.md, "Input
    // files"); the runtime reads it, the tool does not.
    #[serde(default)]
    pub changes: Vec<String>,
}

/// Runs `bash -c COMMAND` in the workspace; see the crate docs.
#[derive(Debug, Clone)]
pub struct ShellExecTool {
    description: String,
    default_timeout: Duration,
    max_timeout: Duration,
    max_output_bytes: usize,
    default_wait: Duration,
    sandbox: Sandbox,
    /// Paths kept read-only inside the sandbox although they lie in the workspace.
    read_only: Arc<[PathBuf]>,
    env: Arc<ShellEnv>,
    sessions: ShellSessions,
    /// bwrap and setsid, once found working (a failure is retried at the next call).
    bwrap: Arc<OnceCell<BwrapPrograms>>,
}

impl Default for ShellExecTool {
    fn default() -> Self {
        ShellExecTool::new(DEFAULT_TIMEOUT)
    }
}

impl ShellExecTool {
    /// A tool whose calls time out after `default_timeout` unless they say otherwise. It
    /// has a registry of its own; give it a shared one with [`ShellExecTool::with_sessions`].
    pub fn new(default_timeout: Duration) -> ShellExecTool {
        ShellExecTool {
            description: String::new(),
            default_timeout,
            max_timeout: MAX_TIMEOUT.max(default_timeout),
            max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
            default_wait: DEFAULT_WAIT,
            sandbox: Sandbox::None,
            read_only: Arc::from(Vec::new()),
            env: Arc::new(ShellEnv::default()),
            sessions: ShellSessions::new(),
            bwrap: Arc::new(OnceCell::new()),
        }
        .described()
    }

    fn described(mut self) -> ShellExecTool {
        self.description = describe(Limits {
            default_timeout: self.default_timeout,
            max_timeout: self.max_timeout,
            default_wait: self.default_wait,
            max_output_bytes: self.max_output_bytes,
            sandbox: self.sandbox,
        });
        self
    }

    /// The largest `timeout_secs` and `wait_secs` a call may ask for; larger ones are refused
    /// with an error naming the range (default 600 s).
    pub fn with_max_timeout(mut self, max_timeout: Duration) -> ShellExecTool {
        self.max_timeout = max_timeout;
        self.described()
    }

    /// Bytes kept per output stream, half from the start and half from the end (per look
    /// at a session's output).
    pub fn with_max_output_bytes(mut self, max_output_bytes: usize) -> ShellExecTool {
        self.max_output_bytes = max_output_bytes;
        self.described()
    }

    /// How long a call waits for its command when it gives no `wait_secs` (default 30 s).
    pub fn with_default_wait(mut self, default_wait: Duration) -> ShellExecTool {
        self.default_wait = default_wait;
        self.described()
    }

    /// Where commands run (default [`Sandbox::None`]).
    pub fn with_sandbox(mut self, sandbox: Sandbox) -> ShellExecTool {
        self.sandbox = sandbox;
        self.described()
    }

    /// Paths that stay read-only inside the bwrap sandbox when they lie in a command's
    /// workspace (the project's config and state, version control: docs/security.md); a
    /// relative one names that path in every workspace; missing ones are skipped.
    pub fn with_read_only(mut self, paths: Vec<PathBuf>) -> ShellExecTool {
        self.read_only = Arc::from(paths);
        self
    }

    /// Which of Planwright's environment variables commands see, on top of the built-in
    /// allow-list (see [`ShellEnv`]).
    pub fn with_env(mut self, env: ShellEnv) -> ShellExecTool {
        self.env = Arc::new(env);
        self
    }

    /// The registry that commands outliving their wait join.
    pub fn with_sessions(mut self, sessions: ShellSessions) -> ShellExecTool {
        self.sessions = sessions;
        self
    }

    /// The registry that commands outliving their wait join.
    pub fn sessions(&self) -> &ShellSessions {
        &self.sessions
    }

    /// Timeout of a command whose call names none.
    pub(crate) fn default_timeout(&self) -> Duration {
        self.default_timeout.min(self.max_timeout)
    }

    /// Bytes kept per output stream.
    pub(crate) fn max_output_bytes(&self) -> usize {
        self.max_output_bytes
    }

    /// What reaches commands of Planwright's environment.
    pub(crate) fn env(&self) -> &ShellEnv {
        &self.env
    }

    /// The range of `timeout_secs` and `wait_secs`: 1 s to the largest timeout.
    fn seconds_range(&self) -> IntRange {
        IntRange::between(1, self.max_timeout.as_secs().max(1))
    }

    /// The timeout of a call.
    fn timeout_for(&self, requested: Option<&NumberArg>) -> Result<Duration, ToolError> {
        let requested = self
            .seconds_range()
            .check_opt(SHELL_EXEC, "timeout_secs", requested)?;
        Ok(requested.map_or(
            self.default_timeout.min(self.max_timeout),
            Duration::from_secs,
        ))
    }

    /// How long a call waits before handing its command over to a session; a wait of at
    /// least the timeout means waiting for the end.
    fn wait_for(
        &self,
        requested: Option<&NumberArg>,
        timeout: Duration,
    ) -> Result<Duration, ToolError> {
        let requested = self
            .seconds_range()
            .check_opt(SHELL_EXEC, "wait_secs", requested)?;
        Ok(requested
            .map_or(self.default_wait, Duration::from_secs)
            .min(timeout))
    }

    /// How to start commands: plainly, or in bwrap when it is configured and works.
    pub(crate) async fn launch(&self) -> Result<Launch, ToolError> {
        let Sandbox::Bwrap { allow_network } = self.sandbox else {
            return Ok(Launch::Plain);
        };
        let programs = self
            .bwrap
            .get_or_try_init(|| async {
                tokio::task::spawn_blocking(find_bwrap)
                    .await
                    .map_err(|e| format!("checking the bwrap sandbox failed: {e}"))?
            })
            .await
            .map_err(|reason| {
                tracing::warn!(%reason, "shell_exec refused: the sandbox is not available");
                ToolError::Failed(format!(
                    "{reason}. The command was not run: shell commands are configured to run \
                     in the bwrap sandbox and never run without it."
                ))
            })?;
        Ok(Launch::Bwrap {
            programs: programs.clone(),
            allow_network,
            read_only: self.read_only.clone(),
        })
    }
}

/// Refuses an empty command, and a command that starts with a tool's name (small models
/// put the tool they mean to call there, e.g. `shell_exec` or `file_read notes.txt`).
fn check_command(command: &str) -> Result<(), ToolError> {
    let command = tool_args::non_empty(SHELL_EXEC, "command", command)?.trim();
    let first = command.split_whitespace().next().unwrap_or_default();
    if first == SHELL_EXEC {
        return Err(ToolError::InvalidArguments(format!(
            "`{SHELL_EXEC}` is the tool's name, not a shell command: put the command to run in \
             `command`, e.g. `ls -la`"
        )));
    }
    if is_tool_name(first) {
        return Err(ToolError::InvalidArguments(format!(
            "`{first}` is a tool's name, not a shell command: call the {first} tool itself, \
             or put a shell command in `command`, e.g. `ls -la`"
        )));
    }
    Ok(())
}

/// Whether `word` is the name of a Planwright tool (the tool names are a contract; see
/// docs/architecture.md) rather than a program.
fn is_tool_name(word: &str) -> bool {
    const EXACT: [&str; 3] = ["planning", "complete_step", "web_search"];
    const FAMILIES: [&str; 5] = ["shell_", "file_", "browser_", "message_", "mcp__"];
    EXACT.contains(&word)
        || FAMILIES.iter().any(|family| {
            word.strip_prefix(family).is_some_and(|rest| {
                !rest.is_empty() && rest.chars().all(|c| c.is_ascii_lowercase() || c == '_')
            })
        })
}

/// Kills a command whose `shell_exec` call was dropped before it ended or became a
/// session (the executor abandoned the call).
struct KillUnlessKept(Option<Arc<Proc>>);

impl KillUnlessKept {
    fn keep(&mut self) {
        self.0 = None;
    }
}

impl Drop for KillUnlessKept {
    fn drop(&mut self) {
        if let Some(proc) = self.0.take() {
            proc.kill();
        }
    }
}

#[async_trait]
impl Tool for ShellExecTool {
    fn name(&self) -> &str {
        SHELL_EXEC
    }
    fn family(&self) -> ToolFamily {
        ToolFamily::Shell
    }
    fn effect(&self) -> ToolEffect {
        ToolEffect::Acts
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> Value {
        let mut schema = args::schema::<ShellExecArgs>();
        self.seconds_range().declare(&mut schema, "timeout_secs");
        self.seconds_range().declare(&mut schema, "wait_secs");
        schema
    }

    /// The run ended: none of its shell sessions may outlive it.
    async fn close_run(&self, run_id: &str) {
        let killed = self.sessions().close_run(run_id).await;
        if killed > 0 {
            tracing::info!(run_id, killed, "shell sessions ended with the run");
        }
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: ShellExecArgs = args::parse(SHELL_EXEC, args)?;
        check_command(&args.command)?;
        let timeout = self.timeout_for(args.timeout_secs.as_ref())?;
        let wait = self.wait_for(args.wait_secs.as_ref(), timeout)?;
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::Failed(
                "the run was cancelled; the command was not started".to_string(),
            ));
        }
        let cwd = workspace::canonical_workspace(&ctx.workspace)?;
        let launch = self.launch().await?;
        tracing::info!(
            command = %args.command,
            timeout_s = timeout.as_secs_f64(),
            wait_s = wait.as_secs_f64(),
            sandboxed = matches!(launch, Launch::Bwrap { .. }),
            "shell_exec"
        );
        let spec = CommandSpec {
            command: &args.command,
            cwd: &cwd,
            timeout,
            max_output_bytes: self.max_output_bytes,
            launch: &launch,
            env: &self.env,
        };
        let proc = process::spawn(spec, ctx.cancel.clone())
            .map_err(|e| ToolError::Failed(format!("could not run the command: {e}")))?;
        let mut guard = KillUnlessKept(Some(proc.clone()));
        let ended_in_time = if wait >= timeout {
            proc.ended().await;
            true
        } else {
            tokio::time::timeout(wait, proc.ended()).await.is_ok()
        };
        guard.keep();
        if !ended_in_time {
            let session = self.sessions.adopt(&ctx.run_id, proc);
            let mut out = still_running(&session.id, wait, &session.proc);
            out.content = workspace_relative(&out.content, &[&cwd, &ctx.workspace]);
            return Ok(out);
        }
        let finished = process::finish(&proc).await;
        if matches!(finished.ending, Ending::Cancelled) {
            tracing::info!("shell_exec cancelled");
            return Err(ToolError::Failed(
                "the command was cancelled; its process group was killed".to_string(),
            ));
        }
        let mut out = report(&finished, timeout);
        out.content = workspace_relative(&out.content, &[&cwd, &ctx.workspace]);
        Ok(out)
    }
}

/// `text` with the workspace's absolute path taken off the paths under it
/// (`/tmp/x/ws/squares.py` → `squares.py`): the model works in the workspace with relative
/// paths, and a small one copied the absolute path's last folders into its next file name
/// (`python/ws/squares.py`). The workspace itself (`pwd`) stays.
pub(crate) fn workspace_relative(text: &str, workspaces: &[&std::path::Path]) -> String {
    let mut text = text.to_string();
    for ws in workspaces {
        let prefix = format!("{}/", ws.display().to_string().trim_end_matches('/'));
        if prefix.len() > 1 && text.contains(&prefix) {
            text = text.replace(&prefix, "");
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_under_the_workspace_are_shown_relative() {
        let ws = std::path::Path::new("/tmp/eval/python/ws");
        let text = "python3: can't open file '/tmp/eval/python/ws/squares.py': [Errno 2]\n\
                    /tmp/eval/python/ws\n/tmp/eval/python/other.txt";
        assert_eq!(
            workspace_relative(text, &[ws]),
            "python3: can't open file 'squares.py': [Errno 2]\n/tmp/eval/python/ws\n\
             /tmp/eval/python/other.txt"
        );
    }

    #[test]
    fn description_states_the_limits() {
        let tool = ShellExecTool::new(Duration::from_secs(30)).with_max_output_bytes(1 << 20);
        let d = tool.description();
        assert!(d.contains("timeout_secs (default 30)"), "{d}");
        assert!(d.contains("1 MiB"), "{d}");
        assert!(d.contains("wait_secs (default 30)"), "{d}");
        assert!(!d.contains("Sandboxed"), "{d}");
        assert_eq!(human_bytes(65536), "64 KiB");
        assert_eq!(human_bytes(1000), "1000 bytes");
        let tool = tool
            .with_default_wait(Duration::from_millis(500))
            .with_sandbox(Sandbox::Bwrap {
                allow_network: false,
            });
        let d = tool.description();
        assert!(d.contains("wait_secs (default 0.5)"), "{d}");
        assert!(d.contains("no network"), "{d}");
    }

    #[test]
    fn the_schema_declares_the_ranges() {
        let tool =
            ShellExecTool::new(Duration::from_secs(5)).with_max_timeout(Duration::from_secs(90));
        let p = tool.parameters();
        for arg in ["timeout_secs", "wait_secs"] {
            assert_eq!(p["properties"][arg]["minimum"], 1, "{p}");
            assert_eq!(p["properties"][arg]["maximum"], 90, "{p}");
            assert_eq!(p["properties"][arg]["type"], "integer", "{p}");
        }
        assert_eq!(p["required"], serde_json::json!(["command"]));
    }

    fn n(v: u64) -> NumberArg {
        NumberArg(serde_json::json!(v))
    }

    #[test]
    fn timeouts() {
        let tool = ShellExecTool::new(Duration::from_secs(5));
        assert_eq!(tool.timeout_for(None).unwrap(), Duration::from_secs(5));
        assert_eq!(
            tool.timeout_for(Some(&n(7))).unwrap(),
            Duration::from_secs(7)
        );
        assert_eq!(tool.timeout_for(Some(&n(600))).unwrap(), MAX_TIMEOUT);
        for bad in [0, 601, 10_000] {
            assert!(matches!(
                tool.timeout_for(Some(&n(bad))),
                Err(ToolError::InvalidArguments(m))
                    if m.contains(&format!("`timeout_secs` must be a whole number between 1 and 600, got {bad}"))
            ));
        }
    }

    #[test]
    fn waits_are_capped_by_the_timeout() {
        let tool = ShellExecTool::new(Duration::from_secs(5));
        let t = Duration::from_secs(60);
        assert_eq!(tool.wait_for(None, t).unwrap(), DEFAULT_WAIT);
        assert_eq!(
            tool.wait_for(Some(&n(3)), t).unwrap(),
            Duration::from_secs(3)
        );
        assert_eq!(
            tool.wait_for(Some(&n(90)), t).unwrap(),
            Duration::from_secs(60)
        );
        assert_eq!(
            tool.wait_for(None, Duration::from_secs(2)).unwrap(),
            Duration::from_secs(2)
        );
        for bad in [0, 601, 3_000_000_000_000_000] {
            assert!(matches!(
                tool.wait_for(Some(&n(bad)), t),
                Err(ToolError::InvalidArguments(m))
                    if m == format!("shell_exec: `wait_secs` must be a whole number between 1 and 600, got {bad}")
            ));
        }
    }

    #[test]
    fn commands_are_not_tool_names() {
        assert!(check_command("ls -la").is_ok());
        assert!(check_command("file README.md").is_ok());
        assert!(check_command("shellcheck x.sh").is_ok());
        assert!(check_command("./file_reader").is_ok());
        let e = check_command("  shell_exec ").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid arguments: `shell_exec` is the tool's name, not a shell command: put the \
             command to run in `command`, e.g. `ls -la`"
        );
        for other in [
            "file_read notes.txt",
            "browser_navigate",
            "complete_step",
            "mcp__git__log",
        ] {
            let e = check_command(other).unwrap_err();
            assert!(
                e.to_string()
                    .contains("is a tool's name, not a shell command"),
                "{e}"
            );
        }
        for empty in ["", "  \n"] {
            assert_eq!(
                check_command(empty).unwrap_err().to_string(),
                "invalid arguments: shell_exec: `command` must not be empty"
            );
        }
    }

    #[test]
    fn seconds_are_shown_plainly() {
        assert_eq!(secs(Duration::from_secs(30)), "30");
        assert_eq!(secs(Duration::from_millis(1500)), "1.5");
    }
}
