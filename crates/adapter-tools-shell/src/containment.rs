//! Keeping an unsandboxed command from outliving its run (docs/security.md, "Processes").
//!
//! ```text
//! SUPERVISOR setpriv --pdeathsig KILL -- unshare --pid --fork --kill-child -- bash -c CMD
//! ```
//!
//! (the supervisor, [`crate::supervisor`], joins the pids cgroup and sets the limits).
//!
//! - `unshare --pid --fork --kill-child` runs the command as PID 1 of a new PID namespace.
//!   When that `bash` ends, the kernel kills every process left in the namespace, however
//!   it detached (`setsid cmd &`, double forks, `nohup`): nothing outlives the command, as
//!   under bubblewrap. `--kill-child` kills the namespace when `unshare` itself dies.
//! - `setpriv --pdeathsig KILL` kills `unshare` when Planwright dies, even by `kill -9`; with
//!   the line above, that ends the whole command.
//!
//! A PID namespace needs `CAP_SYS_ADMIN` (Planwright as root, as in containers); elsewhere the
//! probe fails and commands run with the parent-death signal only, and a detached process can
//! outlive its command (logged once; docs/security.md says so). Each tool is probed once,
//! by running it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// The programs put between the supervisor and `bash`, or nothing when none works here.
pub(crate) fn prefix() -> Vec<OsString> {
    static PREFIX: OnceLock<Vec<OsString>> = OnceLock::new();
    PREFIX.get_or_init(probe).clone()
}

fn probe() -> Vec<OsString> {
    let mut prefix: Vec<OsString> = Vec::new();
    match crate::sandbox::find_program("setpriv").filter(|p| works(p, &pdeathsig_args(), &[])) {
        Some(setpriv) => {
            prefix.push(setpriv.into_os_string());
            prefix.extend(pdeathsig_args());
        }
        None => tracing::warn!(
            "`setpriv --pdeathsig` (util-linux) does not work here: a command's process can \
             outlive a killed Planwright"
        ),
    }
    match crate::sandbox::find_program("unshare").filter(|p| works(p, &namespace_args(), &prefix)) {
        Some(unshare) => {
            prefix.push(unshare.into_os_string());
            prefix.extend(namespace_args());
        }
        None => tracing::warn!(
            "`unshare --pid` does not work here (it needs CAP_SYS_ADMIN): a process a command \
             detaches (`setsid cmd &`) can outlive the command; use --sandbox bwrap to contain it"
        ),
    }
    prefix
}

fn pdeathsig_args() -> Vec<OsString> {
    vec!["--pdeathsig".into(), "KILL".into(), "--".into()]
}

fn namespace_args() -> Vec<OsString> {
    vec![
        "--pid".into(),
        "--fork".into(),
        "--kill-child".into(),
        "--".into(),
    ]
}

/// Whether `before… program args… true` exits 0.
fn works(program: &Path, args: &[OsString], before: &[OsString]) -> bool {
    let mut line: Vec<OsString> = before.to_vec();
    line.push(program.as_os_str().to_owned());
    line.extend(args.iter().cloned());
    line.push(true_program().into_os_string());
    succeeds(&line)
}

/// Whether the command line runs and exits 0, its input and output discarded.
pub(crate) fn succeeds(line: &[OsString]) -> bool {
    let Some((first, rest)) = line.split_first() else {
        return false;
    };
    Command::new(first)
        .args(rest)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn true_program() -> PathBuf {
    crate::sandbox::find_program("true").unwrap_or_else(|| PathBuf::from("/bin/true"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prefix_runs_a_command() {
        let mut line = prefix();
        line.push("echo".into());
        line.push("contained".into());
        let (first, rest) = line.split_first().expect("non-empty");
        let out = Command::new(first).args(rest).output().expect("runs");
        assert!(out.status.success());
        assert_eq!(String::from_utf8_lossy(&out.stdout), "contained\n");
    }
}
