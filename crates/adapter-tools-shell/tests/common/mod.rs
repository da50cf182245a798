//! Helpers shared by the integration tests.
#![allow(dead_code, clippy::unwrap_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use domain::ports::ToolContext;
use nix::errno::Errno;
use nix::sys::signal::kill;
use nix::unistd::Pid;
use tokio_util::sync::CancellationToken;

pub fn ctx(workspace: &Path) -> ToolContext {
    ToolContext {
        run_id: "run_1".to_string(),
        step_id: Some("s1".to_string()),
        workspace: workspace.to_path_buf(),
        cancel: CancellationToken::new(),
    }
}

/// Polls `condition` until it holds; panics after `limit`. Used to synchronise on files
/// and process exits, never to wait a fixed time.
pub async fn wait_until(what: &str, limit: Duration, mut condition: impl FnMut() -> bool) {
    let started = Instant::now();
    while !condition() {
        assert!(started.elapsed() < limit, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Whether process `pid` is dead (gone, or a zombie waiting to be reaped).
pub fn process_gone(pid: i32) -> bool {
    match kill(Pid::from_raw(pid), None) {
        Err(Errno::ESRCH) => true,
        Ok(()) => {
            // A killed orphan may linger as a zombie until init reaps it.
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let state = stat
                .rsplit(") ")
                .next()
                .and_then(|rest| rest.chars().next());
            matches!(state, Some('Z' | 'X') | None)
        }
        Err(_) => false,
    }
}

/// The pids (one per line) written to `file` by a test command.
pub fn read_pids(file: &Path) -> Vec<i32> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect()
}

/// Whether `file` holds `lines` complete lines.
pub fn has_lines(file: &Path, lines: usize) -> bool {
    std::fs::read_to_string(file)
        .map(|s| s.ends_with('\n') && s.lines().count() >= lines)
        .unwrap_or(false)
}
