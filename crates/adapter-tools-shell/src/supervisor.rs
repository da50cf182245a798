//! The one program in front of every command (docs/security.md, "Limits on commands"):
//!
//! ```text
//! bash -p -c 'echo $$ >"$0" || exit 126; ulimit -f … -d … -u … || exit 126; exec "$@"' \
//!      …/planwright-<pid>-<n>/cgroup.procs  PROGRAM ARGS…
//! ```
//!
//! It joins the command's pids cgroup ([`crate::cgroup`]; the line is left out where there
//! is none), sets the resource limits ([`crate::limits`]) and becomes `PROGRAM`: `bwrap …`
//! ([`crate::sandbox`]) or the unsandboxed containment ([`crate::containment`]), which then
//! starts `bash -c COMMAND`. Everything the command starts is in the cgroup and under the
//! limits. A step that fails stops the command with exit code 126 before it runs.
//!
//! It stands for the chain once started per command (`sh` joining the cgroup, `setsid`,
//! `prlimit`), each an extra program start; the new session it gave is bwrap's own
//! `--new-session` now. `-p` keeps bash from reading a `BASH_ENV` file or importing
//! functions from the command's environment: nothing of the command runs before the limits.

use std::ffi::OsString;

/// `$0` of the supervisor when there is no cgroup to join (it shows in `ps`).
const NAME: &str = "planwright-supervisor";

/// The supervisor's command line, to be followed by the program it becomes. `cgroup_procs`:
/// the `cgroup.procs` file of the cgroup it joins first (`crate::cgroup`), if any.
pub(crate) fn prefix(cgroup_procs: Option<std::path::PathBuf>) -> Vec<OsString> {
    let mut script = String::new();
    let arg0 = match cgroup_procs {
        Some(procs) => {
            script.push_str("echo $$ >\"$0\" || exit 126\n");
            procs.into_os_string()
        }
        None => NAME.into(),
    };
    script.push_str(&format!(
        "ulimit {} || exit 126\nexec \"$@\"",
        crate::limits::ulimit_args()
    ));
    vec!["bash".into(), "-p".into(), "-c".into(), script.into(), arg0]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn run(line: Vec<OsString>, env: &[(&str, &str)]) -> std::process::Output {
        let (first, rest) = line.split_first().expect("non-empty");
        Command::new(first)
            .args(rest)
            .envs(env.iter().copied())
            .output()
            .expect("runs")
    }

    #[test]
    fn the_supervisor_sets_the_limits_and_becomes_the_program() {
        let mut line = prefix(None);
        line.extend(
            [
                "bash",
                "-c",
                "echo \"f=$(ulimit -f) d=$(ulimit -d) u=$(ulimit -u) $0\"",
            ]
            .map(OsString::from),
        );
        let out = run(line, &[]);
        assert!(out.status.success(), "{out:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        let (_, hard_f) = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_FSIZE)
            .expect("getrlimit");
        if hard_f >= crate::limits::FILE_SIZE_BYTES {
            assert!(text.contains("f=1048576 d=4194304 u=2048 bash"), "{text}");
        }
    }

    /// A `BASH_ENV` file or an exported function in the command's environment does not run
    /// in the supervisor, before the limits (the command's own `bash` may read them).
    #[test]
    fn nothing_of_the_environment_runs_before_the_limits() {
        let dir =
            std::env::temp_dir().join(format!("planwright-supervisor-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let marker = dir.join("ran");
        let rc = dir.join("rc.sh");
        std::fs::write(&rc, format!("echo bash_env >> '{}'\n", marker.display())).expect("write");
        let mut line = prefix(None);
        line.push("true".into());
        let out = run(
            line,
            &[
                ("BASH_ENV", rc.to_str().expect("utf-8")),
                ("BASH_FUNC_ulimit%%", "() { echo function >> /dev/stderr; }"),
            ],
        );
        assert!(out.status.success(), "{out:?}");
        assert!(!marker.exists(), "BASH_ENV was read");
        assert!(
            !String::from_utf8_lossy(&out.stderr).contains("function"),
            "{out:?}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
