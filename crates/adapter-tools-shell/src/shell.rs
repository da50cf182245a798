//! The `shell_exec` tool: runs a command, waits up to `wait_secs` for it to end, and hands
//! a command still running after that over to [`ShellSessions`] as a session.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::OnceCell;

use domain::ports::{Tool, ToolContext, ToolOutput};
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

/// The description shown to the model, with this tool's limits filled in.
fn describe(limits: Limits) -> String {
    let sandbox = match limits.sandbox {
        Sandbox::None => "",
        Sandbox::Bwrap {
            allow_network: false,
        } => {
            " Commands run in a sandbox: only the workspace folder (and a private, empty \
             /tmp) is writable, the home folder is hidden and there is no network access."
        }
        Sandbox::Bwrap {
            allow_network: true,
        } => {
            " Commands run in a sandbox: only the workspace folder (and a private, empty \
             /tmp) is writable and the home folder is hidden; the network is reachable."
        }
    };
    format!(
        "Run a shell command with `bash -c` in the workspace folder (the current directory) \
         and get its exit code, stdout and stderr. If it is still running after `wait_secs` \
         (default {}), the call returns `still running` with a session id (like `sh1`) and \
         the command keeps running: shell_view and shell_wait show its new output, \
         shell_write types into its stdin, shell_kill stops it. Stdin stays open, so a \
         program waiting for input waits for shell_write: pass flags like `-y`, or add \
         `< /dev/null`. The command is killed, together with everything it started, when \
         it exits or after `timeout_secs` (default {}, max {}); background processes \
         (`cmd &`) do not survive the command, so run a server in the foreground and let \
         it continue as a session. Each stream keeps at most {} (the beginning and the \
         end; the middle is cut and the cut is reported), so filter long output \
         (`| tail -n 50`, `grep`). API keys and other secrets are not in the environment. \
         A non-zero exit code is reported as a failed call.{sandbox} Prefer file_read / \
         file_write / file_str_replace for reading and editing files.",
        secs(limits.default_wait.min(limits.default_timeout)),
        secs(limits.default_timeout.min(limits.max_timeout)),
        secs(limits.max_timeout),
        human_bytes(limits.max_output_bytes)
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
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShellExecArgs {
    /// The bash command line to run, e.g. `ls -la && cat README.md`. Runs in the workspace
    /// folder.
    pub command: String,
    /// Seconds before the command and all its child processes are killed (default 60,
    /// max 600).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub timeout_secs: Option<u64>,
    /// Seconds to wait for the command to end before returning `still running` with a
    /// session id while it keeps running (default 30; at most timeout_secs).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub wait_secs: Option<u64>,
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

    /// The largest `timeout_secs` honoured; larger requests are capped (default 600 s).
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

    /// The timeout of a call and, when it was capped, a note saying so.
    fn timeout_for(&self, requested: Option<u64>) -> Result<(Duration, Option<String>), ToolError> {
        match requested {
            None => Ok((self.default_timeout.min(self.max_timeout), None)),
            Some(0) => Err(ToolError::InvalidArguments(
                "shell_exec: timeout_secs must be at least 1".to_string(),
            )),
            Some(secs) if Duration::from_secs(secs) > self.max_timeout => Ok((
                self.max_timeout,
                Some(format!(
                    "note: timeout_secs {secs} is above the maximum; using {} s",
                    self.max_timeout.as_secs()
                )),
            )),
            Some(secs) => Ok((Duration::from_secs(secs), None)),
        }
    }

    /// How long a call waits before handing its command over to a session; a wait of at
    /// least the timeout means waiting for the end.
    fn wait_for(&self, requested: Option<u64>, timeout: Duration) -> Result<Duration, ToolError> {
        let wait = match requested {
            None => self.default_wait,
            Some(0) => {
                return Err(ToolError::InvalidArguments(
                    "shell_exec: wait_secs must be at least 1".to_string(),
                ))
            }
            Some(secs) => Duration::from_secs(secs),
        };
        Ok(wait.min(timeout))
    }

    /// How to start commands: plainly, or in bwrap when it is configured and works.
    async fn launch(&self) -> Result<Launch, ToolError> {
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
        })
    }
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

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> Value {
        args::schema::<ShellExecArgs>()
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
        if args.command.trim().is_empty() {
            return Err(ToolError::InvalidArguments(
                "shell_exec: command must not be empty".to_string(),
            ));
        }
        let (timeout, note) = self.timeout_for(args.timeout_secs)?;
        let wait = self.wait_for(args.wait_secs, timeout)?;
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
            return Ok(still_running(&session.id, wait, &session.proc, note));
        }
        let finished = process::finish(&proc).await;
        if matches!(finished.ending, Ending::Cancelled) {
            tracing::info!("shell_exec cancelled");
            return Err(ToolError::Failed(
                "the command was cancelled; its process group was killed".to_string(),
            ));
        }
        Ok(report(&finished, timeout, note))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn description_states_the_limits() {
        let tool = ShellExecTool::new(Duration::from_secs(30)).with_max_output_bytes(1 << 20);
        let d = tool.description();
        assert!(d.contains("default 30, max 600"), "{d}");
        assert!(d.contains("1 MiB"), "{d}");
        assert!(d.contains("`wait_secs` (default 30)"), "{d}");
        assert!(!d.contains("sandbox"), "{d}");
        assert_eq!(human_bytes(65536), "64 KiB");
        assert_eq!(human_bytes(1000), "1000 bytes");
        let tool = tool
            .with_default_wait(Duration::from_millis(500))
            .with_sandbox(Sandbox::Bwrap {
                allow_network: false,
            });
        let d = tool.description();
        assert!(d.contains("`wait_secs` (default 0.5)"), "{d}");
        assert!(d.contains("no network access"), "{d}");
    }

    #[test]
    fn timeouts() {
        let tool = ShellExecTool::new(Duration::from_secs(5));
        assert_eq!(
            tool.timeout_for(None).unwrap(),
            (Duration::from_secs(5), None)
        );
        assert_eq!(
            tool.timeout_for(Some(7)).unwrap(),
            (Duration::from_secs(7), None)
        );
        let (t, note) = tool.timeout_for(Some(10_000)).unwrap();
        assert_eq!(t, MAX_TIMEOUT);
        assert!(note.unwrap().contains("600"));
        assert!(matches!(
            tool.timeout_for(Some(0)),
            Err(ToolError::InvalidArguments(_))
        ));
    }

    #[test]
    fn waits_are_capped_by_the_timeout() {
        let tool = ShellExecTool::new(Duration::from_secs(5));
        let t = Duration::from_secs(60);
        assert_eq!(tool.wait_for(None, t).unwrap(), DEFAULT_WAIT);
        assert_eq!(tool.wait_for(Some(3), t).unwrap(), Duration::from_secs(3));
        assert_eq!(tool.wait_for(Some(90), t).unwrap(), Duration::from_secs(60));
        assert_eq!(
            tool.wait_for(None, Duration::from_secs(2)).unwrap(),
            Duration::from_secs(2)
        );
        assert!(matches!(
            tool.wait_for(Some(0), t),
            Err(ToolError::InvalidArguments(m)) if m.contains("wait_secs must be at least 1")
        ));
    }

    #[test]
    fn seconds_are_shown_plainly() {
        assert_eq!(secs(Duration::from_secs(30)), "30");
        assert_eq!(secs(Duration::from_millis(1500)), "1.5");
    }
}
