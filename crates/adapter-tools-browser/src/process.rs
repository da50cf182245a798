//! The Chromium child process: started in its own process group with its DevTools on a
//! pipe (descriptors 3 and 4, see [`crate::devtools_pipe`]), and the whole group killed
//! when it is closed or dropped.

use std::collections::VecDeque;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::task::JoinHandle;

use crate::error::BrowserError;

/// Stderr lines kept to explain a failed start.
const STDERR_TAIL: usize = 12;

/// Gives Chromium our stdin pipe as its descriptor 3 (DevTools commands in) and our stdout
/// pipe as its descriptor 4 (answers out), then runs it (`$0`) with its arguments. A shell
/// does the descriptor plumbing because the workspace forbids `unsafe` (`pre_exec`).
const PIPE_LAUNCHER: &str = r#"exec "$0" "$@" 3<&0 4>&1 </dev/null >/dev/null"#;

/// A running Chromium and every process it forked (same process group).
///
/// Dropping it kills the group with SIGKILL, so Chromium never outlives its owner, not even a
/// panicking test.
pub(crate) struct ChromiumProcess {
    child: Child,
    pid: u32,
    /// Forwards Chromium's stderr to tracing (and keeps the pipe from filling up).
    stderr_task: JoinHandle<()>,
    /// Its last stderr lines, to explain a failed start.
    tail: Arc<StdMutex<VecDeque<String>>>,
    group_killed: bool,
}

/// The two ends of Chromium's DevTools pipe.
pub(crate) struct DevToolsPipe {
    pub to_chromium: ChildStdin,
    pub from_chromium: ChildStdout,
}

impl ChromiumProcess {
    /// Starts `exe` with `args` (which must include `--remote-debugging-pipe`).
    pub(crate) fn spawn(
        exe: &Path,
        args: &[String],
    ) -> Result<(ChromiumProcess, DevToolsPipe), BrowserError> {
        let mut command = Command::new("/bin/sh");
        command
            .arg("-c")
            .arg(PIPE_LAUNCHER)
            .arg(exe)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        let mut child = command.spawn().map_err(|e| {
            BrowserError::Unavailable(format!("could not start {}: {e}", exe.display()))
        })?;
        let pid = child.id().unwrap_or(0);
        let (Some(stderr), Some(to_chromium), Some(from_chromium)) =
            (child.stderr.take(), child.stdin.take(), child.stdout.take())
        else {
            return Err(BrowserError::Unavailable(
                "Chromium's pipes were not captured".to_string(),
            ));
        };
        let tail = Arc::new(StdMutex::new(VecDeque::new()));
        let stderr_task = tokio::spawn(drain(BufReader::new(stderr).lines(), pid, tail.clone()));
        tracing::debug!(pid, "chromium started");
        Ok((
            ChromiumProcess {
                child,
                pid,
                stderr_task,
                tail,
                group_killed: false,
            },
            DevToolsPipe {
                to_chromium,
                from_chromium,
            },
        ))
    }

    /// Resolves when the main Chromium process exits (cancel-safe).
    pub(crate) async fn exited(&mut self) {
        let _ = self.child.wait().await;
    }

    /// Why a start failed, as far as Chromium said: its exit status, if it exited, and its
    /// last stderr lines.
    pub(crate) async fn explain(&mut self) -> String {
        let status = match self.child.try_wait() {
            Ok(Some(status)) => {
                // Its stderr ends with it: let the last lines be read first.
                let drain = std::mem::replace(&mut self.stderr_task, tokio::spawn(async {}));
                let _ = tokio::time::timeout(Duration::from_secs(1), drain).await;
                format!("Chromium exited ({status})")
            }
            _ => "Chromium is running".to_string(),
        };
        let tail = self
            .tail
            .lock()
            .map(|t| t.iter().cloned().collect::<Vec<_>>().join(" | "))
            .unwrap_or_default();
        if tail.is_empty() {
            status
        } else {
            format!("{status}: {tail}")
        }
    }

    pub(crate) fn pid(&self) -> u32 {
        self.pid
    }

    /// Whether the main Chromium process has exited (it is reaped if so).
    pub(crate) fn has_exited(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }

    /// Waits up to `grace` for Chromium to exit on its own (after `Browser.close`), then
    /// kills whatever is left of its process group and reaps the main process.
    pub(crate) async fn shutdown(&mut self, grace: Duration) {
        if tokio::time::timeout(grace, self.child.wait())
            .await
            .is_err()
        {
            tracing::debug!(pid = self.pid, "chromium did not exit in time; killing it");
        }
        self.kill_group();
        if tokio::time::timeout(Duration::from_secs(5), self.child.wait())
            .await
            .is_err()
        {
            tracing::warn!(pid = self.pid, "chromium survived SIGKILL for 5 s");
        }
    }

    /// SIGKILL to the whole group (the browser, its zygotes, renderers and utilities).
    fn kill_group(&mut self) {
        self.stderr_task.abort();
        if self.group_killed || self.pid == 0 {
            return;
        }
        self.group_killed = true;
        let Ok(raw) = i32::try_from(self.pid) else {
            return;
        };
        match killpg(Pid::from_raw(raw), Signal::SIGKILL) {
            Ok(()) | Err(nix::errno::Errno::ESRCH) => {}
            Err(e) => tracing::warn!(pid = self.pid, error = %e, "could not kill chromium"),
        }
    }
}

impl Drop for ChromiumProcess {
    fn drop(&mut self) {
        self.kill_group();
        // Reap the main process if it is already gone; otherwise tokio's kill_on_drop and
        // its orphan queue take care of it.
        for _ in 0..50 {
            if !matches!(self.child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

async fn drain(
    mut lines: tokio::io::Lines<BufReader<ChildStderr>>,
    pid: u32,
    tail: Arc<StdMutex<VecDeque<String>>>,
) {
    while let Ok(Some(line)) = lines.next_line().await {
        tracing::trace!(target: "chromium", pid, "{line}");
        if line.trim().is_empty() {
            continue;
        }
        if let Ok(mut tail) = tail.lock() {
            if tail.len() == STDERR_TAIL {
                tail.pop_front();
            }
            tail.push_back(line);
        }
    }
}
