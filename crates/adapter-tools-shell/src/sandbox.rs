//! The optional bubblewrap (`bwrap`) sandbox around shell commands.
//!
//! A sandboxed command is started as
//!
//! ```text
//! setsid bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp
//!              [--tmpfs $HOME] --bind WS WS [--remount-ro $HOME]
//!              --unshare-pid --unshare-ipc [--unshare-net] --cap-drop ALL
//!              --chdir WS -- bash -c COMMAND
//! ```
//!
//! - The whole filesystem is read-only except the workspace `WS`; `/tmp` is a private,
//!   empty tmpfs that vanishes with the command; the home folder (`$HOME`) is an empty
//!   read-only folder (unless it is the workspace or inside it).
//! - `--unshare-net` (unless the network is allowed) leaves only a private loopback device.
//! - `--cap-drop ALL`: bwrap run by root otherwise keeps every capability inside the
//!   sandbox, and a root with `CAP_SYS_ADMIN` could simply remount `/` writable.
//! - `setsid` (instead of bwrap's `--new-session`) detaches the command from the caller's
//!   terminal (no `TIOCSTI` keystroke injection) and makes bwrap the leader of a process
//!   group whose id is its pid, so killing that group kills bwrap's in-sandbox init, which
//!   tears down the pid namespace and every process in it, even ones that called `setsid`.
//! - No `--die-with-parent`: its `PR_SET_PDEATHSIG` fires when the *thread* that spawned
//!   bwrap exits, and tokio retires threads; the supervisor kills the group instead.

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Where shell commands run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sandbox {
    /// Directly on the host with the user's rights, in the workspace folder (the default).
    #[default]
    None,
    /// Inside bubblewrap: only the workspace is writable, the home folder is hidden and,
    /// unless `allow_network`, there is no network. When bwrap is missing or cannot create
    /// its namespaces, every `shell_exec` call fails with the reason; commands never run
    /// unsandboxed.
    Bwrap { allow_network: bool },
}

/// How long the availability probe may take.
const PROBE_LIMIT: Duration = Duration::from_secs(10);

/// The programs that start a sandboxed command, found on `PATH`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BwrapPrograms {
    pub bwrap: PathBuf,
    pub setsid: PathBuf,
}

/// The path of a working `bwrap`, or why the bwrap sandbox cannot be used here: bwrap or
/// `setsid` is not on `PATH`, or bwrap is present but cannot create its namespaces (user
/// namespaces disabled or restricted). Runs a trivial sandboxed command to find out, so it
/// blocks for a few milliseconds.
pub fn bwrap_available() -> Result<PathBuf, String> {
    find_bwrap().map(|programs| programs.bwrap)
}

/// [`bwrap_available`], keeping `setsid`'s path too.
pub(crate) fn find_bwrap() -> Result<BwrapPrograms, String> {
    let bwrap = find_program("bwrap").ok_or_else(|| {
        "the bwrap sandbox is not available: `bwrap` was not found on PATH; install \
         bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`)"
            .to_string()
    })?;
    let setsid = find_program("setsid").ok_or_else(|| {
        "the bwrap sandbox is not available: `setsid` (util-linux) was not found on PATH"
            .to_string()
    })?;
    let programs = BwrapPrograms { bwrap, setsid };
    probe(&programs)?;
    Ok(programs)
}

/// Runs `true` in a sandbox with the namespaces real commands use.
fn probe(programs: &BwrapPrograms) -> Result<(), String> {
    let broken = |reason: String| {
        format!(
            "the bwrap sandbox is not available: {} is installed but cannot create a \
             sandbox here ({reason}); user namespaces may be disabled or restricted \
             (kernel.unprivileged_userns_clone, user.max_user_namespaces, an AppArmor \
             policy, or a container without the needed privileges)",
            programs.bwrap.display()
        )
    };
    let mut child = Command::new(&programs.setsid)
        .arg(&programs.bwrap)
        .args([
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--tmpfs",
            "/tmp",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-net",
            "--cap-drop",
            "ALL",
            "--chdir",
            "/",
            "--",
            "true",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| broken(format!("it could not be started: {e}")))?;
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() < PROBE_LIMIT => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(broken(format!(
                    "a trivial sandboxed command did not finish within {} s",
                    PROBE_LIMIT.as_secs()
                )));
            }
            Err(e) => return Err(broken(format!("waiting for it failed: {e}"))),
        }
    };
    if status.success() {
        return Ok(());
    }
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        use std::io::Read;
        let _ = pipe.read_to_string(&mut stderr);
    }
    let stderr = stderr.trim();
    Err(broken(if stderr.is_empty() {
        format!("a trivial sandboxed command failed with {status}")
    } else {
        stderr.to_string()
    }))
}

/// The first executable file called `name` in a folder of `PATH`.
fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// bwrap's arguments (before `--`) for a command working in the canonical workspace `cwd`.
pub(crate) fn bwrap_args(cwd: &Path, allow_network: bool) -> Vec<OsString> {
    let mut args: Vec<OsString> = Vec::new();
    let mut push = |items: &[&std::ffi::OsStr]| args.extend(items.iter().map(|s| s.into()));
    push(&["--ro-bind".as_ref(), "/".as_ref(), "/".as_ref()]);
    push(&["--dev".as_ref(), "/dev".as_ref()]);
    push(&["--proc".as_ref(), "/proc".as_ref()]);
    push(&["--tmpfs".as_ref(), "/tmp".as_ref()]);
    let home = home_to_hide(cwd);
    if let Some(home) = &home {
        push(&["--tmpfs".as_ref(), home.as_os_str()]);
    }
    // After the tmpfs mounts, so a workspace under /tmp or the home folder shows through.
    push(&["--bind".as_ref(), cwd.as_os_str(), cwd.as_os_str()]);
    if let Some(home) = &home {
        // Not recursive: the workspace bound inside it stays writable.
        push(&["--remount-ro".as_ref(), home.as_os_str()]);
    }
    push(&["--unshare-pid".as_ref(), "--unshare-ipc".as_ref()]);
    if !allow_network {
        push(&["--unshare-net".as_ref()]);
    }
    push(&["--cap-drop".as_ref(), "ALL".as_ref()]);
    push(&["--chdir".as_ref(), cwd.as_os_str()]);
    args
}

/// The caller's home folder, canonical, unless there is none or it is `/`, the workspace
/// or a folder inside the workspace (which the command may use anyway).
fn home_to_hide(cwd: &Path) -> Option<PathBuf> {
    let home = PathBuf::from(std::env::var_os("HOME")?);
    let home = std::fs::canonicalize(home).ok()?;
    if !home.is_dir() || home.parent().is_none() || home.starts_with(cwd) {
        tracing::debug!(home = %home.display(), "the home folder is not hidden in the sandbox");
        return None;
    }
    Some(home)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn joined(args: &[OsString]) -> String {
        args.iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn arguments_isolate_the_command() {
        let ws = tempfile::tempdir().unwrap();
        let ws = ws.path().canonicalize().unwrap();
        let args = joined(&bwrap_args(&ws, false));
        let w = ws.display();
        assert!(
            args.starts_with("--ro-bind / / --dev /dev --proc /proc --tmpfs /tmp"),
            "{args}"
        );
        assert!(args.contains(&format!("--bind {w} {w}")), "{args}");
        assert!(
            args.ends_with(&format!(
                "--unshare-pid --unshare-ipc --unshare-net --cap-drop ALL --chdir {w}"
            )),
            "{args}"
        );
        let open = joined(&bwrap_args(&ws, true));
        assert!(!open.contains("--unshare-net"), "{open}");
        assert!(open.contains("--cap-drop ALL"), "{open}");
    }

    #[test]
    fn the_home_folder_is_hidden_unless_it_holds_nothing_but_the_workspace() {
        let Some(home) = std::env::var_os("HOME").and_then(|h| std::fs::canonicalize(h).ok())
        else {
            return;
        };
        if home.parent().is_none() {
            return;
        }
        let elsewhere = Path::new("/nonexistent-workspace");
        assert_eq!(home_to_hide(elsewhere), Some(home.clone()));
        assert_eq!(home_to_hide(&home), None);
        if let Some(parent) = home.parent() {
            assert_eq!(home_to_hide(parent), None);
        }
        let args = joined(&bwrap_args(&home.join("ws"), false));
        let h = home.display();
        let tmpfs = args.find(&format!("--tmpfs {h}")).unwrap();
        let bind = args.find("--bind").unwrap();
        let ro = args.find(&format!("--remount-ro {h}")).unwrap();
        assert!(tmpfs < bind && bind < ro, "{args}");
    }

    #[test]
    fn programs_are_looked_up_on_path() {
        assert!(find_program("bash").is_some());
        assert!(find_program("surely-no-such-program-here").is_none());
    }
}
