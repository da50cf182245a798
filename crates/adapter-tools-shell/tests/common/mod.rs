//! Helpers shared by the integration tests.
#![allow(dead_code, clippy::unwrap_used)]

use std::path::Path;

use domain::ports::ToolContext;

#[allow(unused_imports)] // not every test binary uses both
pub use test_support::{process_gone, wait_until};

pub fn ctx(workspace: &Path) -> ToolContext {
    ctx_in_run(workspace, "run_1")
}

/// A context of run `run_id`.
pub fn ctx_in_run(workspace: &Path, run_id: &str) -> ToolContext {
    test_support::tool_context(workspace, run_id)
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
pub fn bwrap_usable(test: &str) -> bool {
    test_support::require_or_skip(adapter_tools_shell::bwrap_available().map_err(|reason| {
        format!(
            "{test} requires a working bwrap sandbox (CI installs the Debian package \
             `bubblewrap`): {reason}"
        )
    }))
    .is_some()
}
