//! The Chromium child process: started in its own process group, its DevTools websocket
//! address read from stderr, and the whole group killed when it is closed or dropped.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStderr, Command};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::error::BrowserError;

/// Stderr lines kept to explain a failed start.
const STDERR_TAIL: usize = 12;
/// What Chromium prints once its DevTools endpoint is up.
const DEVTOOLS_PREFIX: &str = "DevTools listening on ";

/// A running Chromium and every process it forked (same process group).
///
/// Dropping it kills the group with SIGKILL, so Chromium never outlives its owner, not even a
/// panicking test.
pub(crate) struct ChromiumProcess {
    child: Child,
    pid: u32,
    /// Forwards the rest of Chromium's stderr to tracing (and keeps the pipe from filling up).
    stderr_task: JoinHandle<()>,
    group_killed: bool,
}

impl ChromiumProcess {
    /// Starts `exe` with `args` and waits (at most `timeout`) for its DevTools websocket URL.
    pub(crate) async fn spawn(
        exe: &Path,
        args: &[String],
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<(ChromiumProcess, String), BrowserError> {
        let mut command = Command::new(exe);
        command
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        let mut child = command.spawn().map_err(|e| {
            BrowserError::Unavailable(format!("could not start {}: {e}", exe.display()))
        })?;
        let pid = child.id().unwrap_or(0);
        let Some(stderr) = child.stderr.take() else {
            return Err(BrowserError::Unavailable(
                "Chromium's stderr was not captured".to_string(),
            ));
        };
        // From here on, the guard owns the child: any early return kills the group.
        let mut process = ChromiumProcess {
            child,
            pid,
            stderr_task: tokio::spawn(async {}),
            group_killed: false,
        };
        let mut lines = BufReader::new(stderr).lines();
        let mut tail: Vec<String> = Vec::new();
        let found = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(BrowserError::Cancelled),
            r = tokio::time::timeout(timeout, read_ws_url(&mut lines, &mut tail)) => r,
        };
        let url = match found {
            Ok(Some(url)) => url,
            Ok(None) => {
                let status = process
                    .child
                    .try_wait()
                    .ok()
                    .flatten()
                    .map(|s| format!(" ({s})"))
                    .unwrap_or_default();
                return Err(BrowserError::Unavailable(format!(
                    "Chromium exited before it was ready{status}: {}",
                    tail.join(" | ")
                )));
            }
            Err(_) => {
                return Err(BrowserError::Unavailable(format!(
                    "Chromium did not become ready within {}s: {}",
                    timeout.as_secs(),
                    tail.join(" | ")
                )));
            }
        };
        process.stderr_task = tokio::spawn(drain(lines, pid));
        tracing::debug!(pid, %url, "chromium started");
        Ok((process, url))
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

async fn read_ws_url(
    lines: &mut tokio::io::Lines<BufReader<ChildStderr>>,
    tail: &mut Vec<String>,
) -> Option<String> {
    while let Ok(Some(line)) = lines.next_line().await {
        if let Some(rest) = line.trim().strip_prefix(DEVTOOLS_PREFIX) {
            return Some(rest.trim().to_string());
        }
        tracing::trace!(target: "chromium", "{line}");
        if !line.trim().is_empty() {
            if tail.len() == STDERR_TAIL {
                tail.remove(0);
            }
            tail.push(line);
        }
    }
    None
}

async fn drain(mut lines: tokio::io::Lines<BufReader<ChildStderr>>, pid: u32) {
    while let Ok(Some(line)) = lines.next_line().await {
        tracing::trace!(target: "chromium", pid, "{line}");
    }
}
