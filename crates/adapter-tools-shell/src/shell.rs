//! The `shell_exec` tool.

use std::fmt::Write as _;
use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use domain::ports::{Tool, ToolContext, ToolOutput};
use domain::ToolError;

use crate::capture::CappedBuffer;
use crate::process::{self, CommandSpec, Ending, Finished};
use crate::{args, workspace, SHELL_EXEC};

pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
pub(crate) const MAX_TIMEOUT: Duration = Duration::from_secs(600);
pub(crate) const DEFAULT_MAX_OUTPUT_BYTES: usize = 64 * 1024;

/// The description shown to the model, with this tool's limits filled in.
fn describe(default_timeout: Duration, max_timeout: Duration, max_output_bytes: usize) -> String {
    format!(
        "Run a shell command with `bash -c` in the workspace folder (the current directory) \
         and get its exit code, stdout and stderr. Stdin is empty, so interactive programs \
         will not work: pass flags like `-y`. The command is killed, together with everything \
         it started, when it exits or after `timeout_secs` (default {}, max {}); background \
         processes (`cmd &`) do not survive the call, so do not start servers expecting them \
         to keep running. Each stream keeps at most {} (the beginning and the end; the \
         middle is cut and the cut is reported), so filter long output (`| tail -n 50`, \
         `grep`). API keys and other secrets are not in the environment. A non-zero exit \
         code is reported as a failed call. Prefer file_read / file_write / \
         file_str_replace for reading and editing files.",
        default_timeout.as_secs(),
        max_timeout.as_secs(),
        human_bytes(max_output_bytes)
    )
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
}

/// Runs `bash -c COMMAND` in the workspace; see the crate docs.
#[derive(Debug, Clone)]
pub struct ShellExecTool {
    description: String,
    default_timeout: Duration,
    max_timeout: Duration,
    max_output_bytes: usize,
}

impl Default for ShellExecTool {
    fn default() -> Self {
        ShellExecTool::new(DEFAULT_TIMEOUT)
    }
}

impl ShellExecTool {
    /// A tool whose calls time out after `default_timeout` unless they say otherwise.
    pub fn new(default_timeout: Duration) -> ShellExecTool {
        ShellExecTool {
            description: String::new(),
            default_timeout,
            max_timeout: MAX_TIMEOUT.max(default_timeout),
            max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
        }
        .described()
    }

    fn described(mut self) -> ShellExecTool {
        self.description = describe(
            self.default_timeout.min(self.max_timeout),
            self.max_timeout,
            self.max_output_bytes,
        );
        self
    }

    /// The largest `timeout_secs` honoured; larger requests are capped (default 600 s).
    pub fn with_max_timeout(mut self, max_timeout: Duration) -> ShellExecTool {
        self.max_timeout = max_timeout;
        self.described()
    }

    /// Bytes kept per output stream, half from the start and half from the end.
    pub fn with_max_output_bytes(mut self, max_output_bytes: usize) -> ShellExecTool {
        self.max_output_bytes = max_output_bytes;
        self.described()
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

    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: ShellExecArgs = args::parse(SHELL_EXEC, args)?;
        if args.command.trim().is_empty() {
            return Err(ToolError::InvalidArguments(
                "shell_exec: command must not be empty".to_string(),
            ));
        }
        let (timeout, note) = self.timeout_for(args.timeout_secs)?;
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::Failed(
                "the run was cancelled; the command was not started".to_string(),
            ));
        }
        let cwd = workspace::canonical_workspace(&ctx.workspace)?;
        tracing::info!(command = %args.command, timeout_s = timeout.as_secs_f64(), "shell_exec");
        let spec = CommandSpec {
            command: &args.command,
            cwd: &cwd,
            timeout,
            max_output_bytes: self.max_output_bytes,
        };
        let finished = process::run(spec, &ctx.cancel)
            .await
            .map_err(|e| ToolError::Failed(format!("could not run the command: {e}")))?;
        if matches!(finished.ending, Ending::Cancelled) {
            tracing::info!("shell_exec cancelled");
            return Err(ToolError::Failed(
                "the command was cancelled; its process group was killed".to_string(),
            ));
        }
        Ok(report(&finished, timeout, note))
    }
}

/// The text the model reads: status line, then stdout, then stderr.
fn report(finished: &Finished, timeout: Duration, note: Option<String>) -> ToolOutput {
    let (status, failed) = match finished.ending {
        Ending::Exited(status) => match (status.code(), status.signal()) {
            (Some(code), _) => (format!("exit code: {code}"), code != 0),
            (None, Some(signal)) => (format!("killed by signal {signal}"), true),
            (None, None) => ("exit status unknown".to_string(), true),
        },
        Ending::TimedOut => (
            format!(
                "timed out after {} s; process group killed (output below is partial)",
                timeout.as_secs()
            ),
            true,
        ),
        Ending::Cancelled => ("cancelled; process group killed".to_string(), true),
    };
    let mut content = status;
    if let Some(note) = note {
        content.push('\n');
        content.push_str(&note);
    }
    section(&mut content, "stdout", &finished.stdout);
    section(&mut content, "stderr", &finished.stderr);
    if finished.streams_abandoned {
        content.push_str(
            "\n[a process that left the command's process group kept the output open; \
             stopped reading]",
        );
    }
    if failed {
        ToolOutput::error(content)
    } else {
        ToolOutput::ok(content)
    }
}

fn section(content: &mut String, label: &str, buffer: &CappedBuffer) {
    if buffer.is_empty() {
        let _ = write!(content, "\n--- {label}: (empty) ---");
        return;
    }
    let text = buffer.render();
    let _ = write!(
        content,
        "\n--- {label} ---\n{}",
        text.strip_suffix('\n').unwrap_or(&text)
    );
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
        assert_eq!(human_bytes(65536), "64 KiB");
        assert_eq!(human_bytes(1000), "1000 bytes");
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
    fn report_layout() {
        let mut stdout = CappedBuffer::new(100);
        stdout.push(b"hello\n");
        let finished = Finished {
            ending: Ending::Exited(std::process::ExitStatus::from_raw(3 << 8)),
            stdout,
            stderr: CappedBuffer::new(100),
            streams_abandoned: false,
        };
        let out = report(&finished, Duration::from_secs(1), None);
        assert!(out.is_error);
        assert_eq!(
            out.content,
            "exit code: 3\n--- stdout ---\nhello\n--- stderr: (empty) ---"
        );
    }

    #[test]
    fn signal_and_timeout_are_errors() {
        let finished = Finished {
            ending: Ending::Exited(std::process::ExitStatus::from_raw(9)),
            stdout: CappedBuffer::new(10),
            stderr: CappedBuffer::new(10),
            streams_abandoned: false,
        };
        let out = report(&finished, Duration::from_secs(1), None);
        assert!(out.is_error);
        assert!(out.content.starts_with("killed by signal 9"));
        let finished = Finished {
            ending: Ending::TimedOut,
            ..finished
        };
        let out = report(&finished, Duration::from_secs(2), None);
        assert!(out.is_error);
        assert!(out
            .content
            .starts_with("timed out after 2 s; process group killed"));
    }
}
