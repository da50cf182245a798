//! The optional bubblewrap (`bwrap`) sandbox around shell commands (docs/security.md).
//!
//! A sandboxed command is started as
//!
//! ```text
//! SUPERVISOR bwrap --ro-bind /usr /usr  (/bin, /sbin, /lib*: the same symlinks or binds)
//!                  --ro-bind STAGE /etc  --ro-bind-try /etc/D /etc/D
//!                      (only the /etc files and folders programs need; see [`crate::etc_stage`])
//!                  --dev /dev --proc /proc --tmpfs /tmp --bind WS WS
//!                  --ro-bind WS/P WS/P  (each read-only path P that exists in WS: the
//!                      project's config and state, `.git`, `.hg`, `.svn`)
//!                  --remount-ro /
//!                  --unshare-pid --unshare-ipc [--unshare-net] --die-with-parent
//!                  --new-session --cap-drop ALL --chdir WS -- bash -c COMMAND
//! ```
//!
//! started in a process group of its own; the supervisor (`crate::supervisor`) joins the
//! command's pids cgroup, sets the resource limits and becomes bwrap.
//!
//! - The command sees the programs and libraries of `/usr`, a few `/etc` files
//!   (`ETC_FILES`) and its workspace `WS`, read-write at its own path; nothing else of
//!   the host exists inside: not the project around the workspace, not other workspaces,
//!   not Planwright's database or `server-token`, not `/root`, `/home` or `/etc/shadow`.
//!   The root is an empty read-only tmpfs; `/tmp` is a private tmpfs that vanishes with
//!   the command; `HOME` is the workspace (see [`crate::env`]).
//! - `--unshare-pid`: Planwright and every other host process are invisible (no
//!   `/proc/<pid>/environ` to read); `--unshare-net` (unless the network is allowed)
//!   leaves only a private loopback device.
//! - `--cap-drop ALL`: bwrap run by root otherwise keeps every capability inside the
//!   sandbox (a root with `CAP_DAC_OVERRIDE` reads any file bound in).
//! - `--new-session`: the command runs in a session of the sandbox's own, without the
//!   caller's terminal (no `TIOCSTI` keystroke injection).
//! - The process group: bwrap leads it (its id is bwrap's pid), so killing that group kills
//!   bwrap; its in-sandbox init then gets `SIGKILL` (`--die-with-parent`), which tears down
//!   the pid namespace and every process in it, even ones that called `setsid`.
//! - `--die-with-parent`: if Planwright dies (even `kill -9`), bwrap gets `SIGKILL` and
//!   the namespace goes with it. The signal follows the *thread* that started bwrap;
//!   commands are started from the async runtime's worker threads, which live as long as
//!   the runtime.

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use crate::etc_stage::{EtcView, ETC_FILES};

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

/// The program that starts a sandboxed command, found on `PATH`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BwrapPrograms {
    pub bwrap: PathBuf,
}

/// The path of a working `bwrap`, or why the bwrap sandbox cannot be used here: bwrap is
/// not on `PATH`, or it is present but cannot create its namespaces (user namespaces
/// disabled or restricted). The first call runs a trivial sandboxed command to find out
/// (a few milliseconds); later calls with the same `PATH` answer from memory.
pub fn bwrap_available() -> Result<PathBuf, String> {
    find_bwrap().map(|programs| programs.bwrap)
}

/// [`bwrap_available`]'s answer, probed once per process and `PATH` (the app and every
/// toolkit share it).
pub(crate) fn find_bwrap() -> Result<BwrapPrograms, String> {
    type Probed = Option<(Option<OsString>, Result<BwrapPrograms, String>)>;
    static PROBED: Mutex<Probed> = Mutex::new(None);
    let path = std::env::var_os("PATH");
    let mut probed = PROBED.lock().unwrap_or_else(PoisonError::into_inner);
    match &*probed {
        Some((probed_path, answer)) if *probed_path == path => answer.clone(),
        _ => {
            let answer = probe_bwrap();
            *probed = Some((path, answer.clone()));
            answer
        }
    }
}

fn probe_bwrap() -> Result<BwrapPrograms, String> {
    let bwrap = find_program("bwrap").ok_or_else(|| {
        "the bwrap sandbox is not available: `bwrap` was not found on PATH; install \
         bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`)"
            .to_string()
    })?;
    let programs = BwrapPrograms { bwrap };
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
    let child = Command::new(&programs.bwrap)
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
    let pid = child.id();
    // Waited for on a thread of its own, so the answer comes as soon as bwrap exits.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let output = match rx.recv_timeout(PROBE_LIMIT) {
        Ok(Ok(output)) => output,
        Ok(Err(e)) => return Err(broken(format!("waiting for it failed: {e}"))),
        Err(_) => {
            if let Ok(pid) = i32::try_from(pid) {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            return Err(broken(format!(
                "a trivial sandboxed command did not finish within {} s",
                PROBE_LIMIT.as_secs()
            )));
        }
    };
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stderr = stderr.trim();
    Err(broken(if stderr.is_empty() {
        format!("a trivial sandboxed command failed with {}", output.status)
    } else {
        stderr.to_string()
    }))
}

/// The first executable file called `name` in a folder of `PATH`.
pub(crate) fn find_program(name: &str) -> Option<PathBuf> {
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

/// The version-control folders of a workspace: read-only to sandboxed commands and the file
/// tools unless the run allows writing them (`--sandbox-vcs-writes`), since a hook or a
/// `core.fsmonitor` planted there runs as the user at their next `git status`
/// (docs/security.md, "Version control").
pub const VCS_FOLDERS: [&str; 3] = [".git", ".hg", ".svn"];

/// Top-level folders of programs and libraries: bound read-only, or recreated as the same
/// symbolic link (merged-`/usr` systems link `/bin` to `usr/bin`).
const SYSTEM_DIRS: [&str; 7] = [
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];

/// bwrap's arguments (before `--`) for a command working in the canonical workspace `cwd`;
/// the existing paths of `read_only` that lie in it (a relative one: in `cwd`) are bound
/// read-only over it. `/etc` is `etc`'s stage and folders when given, else a bind per
/// allow-listed file.
pub(crate) fn bwrap_args(
    cwd: &Path,
    allow_network: bool,
    read_only: &[PathBuf],
    etc: Option<&EtcView>,
) -> Vec<OsString> {
    let mut args: Vec<OsString> = Vec::new();
    let mut push = |items: &[&std::ffi::OsStr]| args.extend(items.iter().map(|s| s.into()));
    for dir in SYSTEM_DIRS {
        let path = Path::new(dir);
        match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                if let Ok(target) = std::fs::read_link(path) {
                    push(&["--symlink".as_ref(), target.as_os_str(), path.as_os_str()]);
                }
            }
            Ok(meta) if meta.is_dir() => {
                push(&["--ro-bind".as_ref(), path.as_os_str(), path.as_os_str()]);
            }
            _ => {}
        }
    }
    match etc {
        Some(view) => {
            push(&[
                "--ro-bind".as_ref(),
                view.stage.as_os_str(),
                "/etc".as_ref(),
            ]);
            for folder in &view.folders {
                push(&[
                    "--ro-bind-try".as_ref(),
                    folder.as_os_str(),
                    folder.as_os_str(),
                ]);
            }
        }
        None => {
            for file in ETC_FILES {
                push(&["--ro-bind-try".as_ref(), file.as_ref(), file.as_ref()]);
            }
        }
    }
    push(&["--dev".as_ref(), "/dev".as_ref()]);
    push(&["--proc".as_ref(), "/proc".as_ref()]);
    push(&["--tmpfs".as_ref(), "/tmp".as_ref()]);
    // After the tmpfs, so a workspace under /tmp shows through.
    push(&["--bind".as_ref(), cwd.as_os_str(), cwd.as_os_str()]);
    // After the workspace, so they cover its writable bind.
    for path in read_only {
        if let Ok(path) = std::fs::canonicalize(cwd.join(path)) {
            if path.starts_with(cwd) {
                push(&["--ro-bind".as_ref(), path.as_os_str(), path.as_os_str()]);
            }
        }
    }
    // Not recursive: the workspace and /tmp stay writable.
    push(&["--remount-ro".as_ref(), "/".as_ref()]);
    push(&["--unshare-pid".as_ref(), "--unshare-ipc".as_ref()]);
    if !allow_network {
        push(&["--unshare-net".as_ref()]);
    }
    push(&["--die-with-parent".as_ref(), "--new-session".as_ref()]);
    push(&["--cap-drop".as_ref(), "ALL".as_ref()]);
    push(&["--chdir".as_ref(), cwd.as_os_str()]);
    args
}

#[cfg(test)]
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
        let args = joined(&bwrap_args(&ws, false, &[], None));
        let w = ws.display();
        assert!(args.contains("--ro-bind /usr /usr"), "{args}");
        assert!(
            args.contains("--ro-bind-try /etc/passwd /etc/passwd"),
            "{args}"
        );
        assert!(!args.contains("--ro-bind / /"), "{args}");
        assert!(!args.contains("shadow"), "{args}");
        assert!(
            args.ends_with(&format!(
                "--dev /dev --proc /proc --tmpfs /tmp --bind {w} {w} --remount-ro / \
                 --unshare-pid --unshare-ipc --unshare-net --die-with-parent --new-session \
                 --cap-drop ALL --chdir {w}"
            )),
            "{args}"
        );
        let open = joined(&bwrap_args(&ws, true, &[], None));
        assert!(!open.contains("--unshare-net"), "{open}");
        assert!(open.contains("--cap-drop ALL"), "{open}");
    }

    #[test]
    fn protected_paths_in_the_workspace_are_bound_read_only_after_it() {
        let dir = tempfile::tempdir().unwrap();
        let ws = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::write(ws.join("planwright.toml"), "").unwrap();
        std::fs::create_dir(ws.join(".planwright")).unwrap();
        std::fs::create_dir(ws.join(".git")).unwrap();
        let outside = PathBuf::from("/etc");
        let protected = [
            ws.join("planwright.toml"),
            PathBuf::from(".planwright"),
            PathBuf::from(".git"),
            PathBuf::from(".hg"),
            ws.join("missing"),
            outside.clone(),
        ];
        let args = joined(&bwrap_args(&ws, false, &protected, None));
        let w = ws.display();
        let bind = args.find(&format!("--bind {w} {w}")).unwrap();
        let toml = args
            .find(&format!(
                "--ro-bind {w}/planwright.toml {w}/planwright.toml"
            ))
            .unwrap();
        let state = args
            .find(&format!("--ro-bind {w}/.planwright {w}/.planwright"))
            .unwrap();
        let git = args.find(&format!("--ro-bind {w}/.git {w}/.git")).unwrap();
        assert!(bind < toml && bind < state && bind < git, "{args}");
        assert!(!args.contains(".hg"), "a missing one is skipped: {args}");
        assert!(!args.contains("missing"), "{args}");
        assert!(!args.contains("--ro-bind /etc /etc"), "{args}");
    }

    #[test]
    fn system_folders_keep_their_shape() {
        let args = joined(&bwrap_args(Path::new("/ws"), false, &[], None));
        for dir in SYSTEM_DIRS {
            let path = Path::new(dir);
            let Ok(meta) = std::fs::symlink_metadata(path) else {
                assert!(!args.contains(&format!(" {dir} ")), "{dir}: {args}");
                continue;
            };
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(path).unwrap();
                let link = format!("--symlink {} {dir}", target.display());
                assert!(args.contains(&link), "{link}: {args}");
            } else if meta.is_dir() {
                assert!(args.contains(&format!("--ro-bind {dir} {dir}")), "{args}");
            }
        }
    }

    #[test]
    fn a_stage_is_bound_as_etc_with_its_folders_over_it() {
        let ws = tempfile::tempdir().unwrap();
        let ws = ws.path().canonicalize().unwrap();
        let Some(view) = crate::etc_stage::for_workspace(&ws) else {
            return;
        };
        let args = joined(&bwrap_args(&ws, false, &[], Some(&view)));
        let stage = format!("--ro-bind {} /etc", view.stage.display());
        assert!(args.contains(&stage), "{args}");
        assert!(!args.contains("--ro-bind-try /etc/passwd"), "{args}");
        for folder in &view.folders {
            let bind = format!("--ro-bind-try {0} {0}", folder.display());
            assert!(args.find(&bind) > args.find(&stage), "{args}");
        }
        assert!(view.stage.join("passwd").exists() || !Path::new("/etc/passwd").exists());
        assert!(!view.stage.join("shadow").exists());
    }

    #[test]
    fn programs_are_looked_up_on_path() {
        assert!(find_program("bash").is_some());
        assert!(find_program("surely-no-such-program-here").is_none());
    }
}
