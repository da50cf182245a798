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
    ctx_in_run(workspace, "run_1")
}

/// A context of run `run_id`.
pub fn ctx_in_run(workspace: &Path, run_id: &str) -> ToolContext {
    ToolContext {
        run_id: run_id.to_string(),
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
/// Whether unsandboxed commands run in a PID namespace of their own here: Planwright runs
/// as root (CAP_SYS_ADMIN), so `unshare --pid` works (see the crate's `containment`).
pub fn contained() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|v| v.split_whitespace().nth(1).map(|uid| uid == "0"))
        .unwrap_or(false)
}

pub fn read_pids(file: &Path) -> Vec<i32> {
    let dir = file.parent().unwrap_or(Path::new("/"));
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|l| host_pid(l.trim().parse().unwrap(), dir))
        .collect()
}

/// The host pid of the process that a command saw as `pid`: unsandboxed commands run in a
/// PID namespace of their own when Planwright may create one, so `$!` and `$$` are
/// namespace pids. Found by the last `NSpid` entry and a working folder inside `dir`; a
/// process that is gone maps to a pid that does not exist (so it reads as gone).
fn host_pid(pid: i32, dir: &Path) -> i32 {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return pid;
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .find(|host| {
            let status =
                std::fs::read_to_string(format!("/proc/{host}/status")).unwrap_or_default();
            let ns_last = status
                .lines()
                .find_map(|l| l.strip_prefix("NSpid:"))
                .and_then(|v| v.split_whitespace().last()?.parse::<i32>().ok());
            ns_last == Some(pid)
                && std::fs::read_link(format!("/proc/{host}/cwd"))
                    .is_ok_and(|cwd| cwd.starts_with(&dir))
        })
        .unwrap_or(i32::MAX)
}

/// Whether `file` holds `lines` complete lines.
pub fn has_lines(file: &Path, lines: usize) -> bool {
    std::fs::read_to_string(file)
        .map(|s| s.ends_with('\n') && s.lines().count() >= lines)
        .unwrap_or(false)
}

/// Pids of live processes whose `argv[0]` is exactly `marker` (start them with
/// `exec -a MARKER ...`). Works for processes in other pid namespaces too.
pub fn pids_named(marker: &str) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|cmdline| cmdline.split(|b| *b == 0).next() == Some(marker.as_bytes()))
                .unwrap_or(false)
        })
        .filter(|pid| !process_gone(*pid))
        .collect()
}

/// Whether the bwrap sandbox can be tested here. Under `CI=true` it must be: the test
/// fails with the reason instead of skipping.
#[allow(clippy::print_stderr)]
pub fn bwrap_usable(test: &str) -> bool {
    match adapter_tools_shell::bwrap_available() {
        Ok(_) => true,
        Err(reason) => {
            let ci = std::env::var("CI")
                .map(|v| v.eq_ignore_ascii_case("true") || v == "1")
                .unwrap_or(false);
            assert!(
                !ci,
                "{test}: CI=true requires a working bwrap sandbox (CI installs the Debian \
                 package `bubblewrap`): {reason}"
            );
            eprintln!("skipping {test}: {reason}");
            false
        }
    }
}
