//! Runs one `planwright` command with a time limit. The child gets its own process group so
//! that on expiry the whole group (planwright, its shell commands, its browser) is killed.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How a limited command ended.
#[derive(Debug)]
pub(crate) struct Finished {
    pub wall: Duration,
    pub killed: bool,
    pub exit_code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `cmd` with stdout and stderr written to `out_dir/stdout` and `out_dir/stderr` (files,
/// so a chatty child never blocks on a full pipe), stdin closed, and kills its process group
/// after `limit`.
pub(crate) fn run_limited(
    mut cmd: Command,
    out_dir: &Path,
    limit: Duration,
) -> Result<Finished, String> {
    let out_path = out_dir.join("stdout");
    let err_path = out_dir.join("stderr");
    let create =
        |p: &Path| std::fs::File::create(p).map_err(|e| format!("creating {}: {e}", p.display()));
    cmd.stdin(Stdio::null())
        .stdout(create(&out_path)?)
        .stderr(create(&err_path)?)
        .process_group(0);
    let started = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {:?}: {e}", cmd.get_program()))?;
    let mut killed = false;
    let status = loop {
        if let Some(status) = child
            .try_wait()
            .map_err(|e| format!("waiting for the child: {e}"))?
        {
            break status;
        }
        if started.elapsed() >= limit {
            kill_group(child.id());
            killed = true;
            break child
                .wait()
                .map_err(|e| format!("waiting for the killed child: {e}"))?;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let wall = started.elapsed();
    let read = |p: &Path| {
        std::fs::read(p)
            .map(|b| String::from_utf8_lossy(&b).to_string())
            .unwrap_or_default()
    };
    Ok(Finished {
        wall,
        killed,
        exit_code: status.code(),
        stdout: read(&out_path),
        stderr: read(&err_path),
    })
}

/// SIGKILL to the process group `pgid` (the child made itself its group leader).
fn kill_group(pgid: u32) {
    let _ = Command::new("kill")
        .args(["-s", "KILL", "--", &format!("-{pgid}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("xtask-runner-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch");
        dir
    }

    #[test]
    fn output_and_exit_code_are_captured() {
        let dir = scratch("ok");
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo out; echo err >&2; exit 3"]);
        let f = run_limited(cmd, &dir, Duration::from_secs(60)).expect("runs");
        assert!(!f.killed);
        assert_eq!(f.exit_code, Some(3));
        assert_eq!(f.stdout, "out\n");
        assert_eq!(f.stderr, "err\n");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The limit kills the whole group, the grandchild too (which would otherwise hold the
    /// workspace's files and the terminal long after planwright is gone).
    #[test]
    fn the_limit_kills_the_process_group() {
        let dir = scratch("kill");
        let pid_file = dir.join("grandchild.pid");
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg(format!(
            "sleep 600 & echo $! > {}; wait",
            pid_file.display()
        ));
        let f = run_limited(cmd, &dir, Duration::from_secs(2)).expect("runs");
        assert!(f.killed);
        assert_eq!(f.exit_code, None);
        let pid = std::fs::read_to_string(&pid_file).expect("the grandchild started");
        // Gone, or a zombie waiting for init to reap it: either way no longer running. A
        // SIGKILL lands asynchronously, so poll for that state (bounded) rather than once.
        let stat_path = format!("/proc/{}/stat", pid.trim());
        let dead = || match std::fs::read_to_string(&stat_path) {
            Err(_) => true,
            Ok(stat) => {
                stat.rsplit(')')
                    .next()
                    .unwrap_or("")
                    .split_whitespace()
                    .next()
                    == Some("Z")
            }
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while !dead() && Instant::now() < deadline {
            std::thread::yield_now();
        }
        assert!(dead(), "the grandchild outlived the kill");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
