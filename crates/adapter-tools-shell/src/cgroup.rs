//! A pids cgroup per command: the fork-bomb guard that also holds for root
//! (docs/security.md, "Limits").
//!
//! `RLIMIT_NPROC` counts a user's processes and the kernel never enforces it for root, which
//! is how Planwright runs in most containers. A cgroup's `pids.max` counts the processes *in
//! the cgroup*, for every user. Each command gets its own child cgroup of Planwright's pids
//! cgroup (v1 `pids` hierarchy or the v2 unified one) with `pids.max` = [`PROCESSES`],
//! joined before anything of the command runs:
//!
//! ```text
//! sh -c 'echo $$ >"$0" && exec "$@"' …/planwright-<pid>-<n>/cgroup.procs  setpriv … bash -c CMD
//! ```
//!
//! and removed when the command has ended (any process still in it is killed first).
//!
//! Where no writable pids cgroup exists (no delegation, not root), commands run without it
//! (logged once) and `RLIMIT_NPROC` is the only process limit.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use crate::limits::PROCESSES;

/// The script that moves itself into the cgroup whose `cgroup.procs` is `$0`, then becomes
/// the rest of the command line.
const JOIN: &str = "echo $$ >\"$0\" && exec \"$@\"";

/// One command's pids cgroup; removed on drop.
#[derive(Debug)]
pub(crate) struct PidsCgroup {
    dir: PathBuf,
}

impl PidsCgroup {
    /// A fresh cgroup limited to [`PROCESSES`], or `None` where pids cgroups cannot be
    /// used here.
    pub(crate) fn create() -> Option<PidsCgroup> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let base = base()?;
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = base.join(format!("planwright-{}-{n}", std::process::id()));
        match make(&dir) {
            Ok(()) => Some(PidsCgroup { dir }),
            Err(e) => {
                tracing::warn!(cgroup = %dir.display(), error = %e, "cannot create the command's pids cgroup");
                None
            }
        }
    }

    /// `sh -c JOIN <cgroup.procs>`: put in front of the command line.
    pub(crate) fn prefix(&self) -> Vec<OsString> {
        vec![
            sh().into_os_string(),
            "-c".into(),
            JOIN.into(),
            self.dir.join("cgroup.procs").into_os_string(),
        ]
    }
}

impl Drop for PidsCgroup {
    fn drop(&mut self) {
        remove(&self.dir);
    }
}

/// Creates `dir` with the process limit.
fn make(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir(dir)?;
    let limited = std::fs::write(dir.join("pids.max"), PROCESSES.to_string());
    if limited.is_err() {
        let _ = std::fs::remove_dir(dir);
    }
    limited
}

/// Kills whatever is left in `dir`, then removes it. A cgroup can only be removed once
/// empty; killed processes leave it when their parent has reaped them, so this retries
/// briefly and otherwise leaves the empty-to-be folder to the next start's sweep.
fn remove(dir: &Path) {
    for _ in 0..50 {
        for pid in members(dir) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        match std::fs::remove_dir(dir) {
            Ok(()) => return,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
            Err(_) => std::thread::yield_now(),
        }
    }
    tracing::debug!(cgroup = %dir.display(), "the command's pids cgroup is not empty yet; left for the next start");
}

fn members(dir: &Path) -> Vec<i32> {
    std::fs::read_to_string(dir.join("cgroup.procs"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// Planwright's own pids cgroup, if a command can be put in a child of it here (probed once,
/// by doing it); stale children of dead Planwright processes are removed on the way.
fn base() -> Option<&'static Path> {
    static BASE: OnceLock<Option<PathBuf>> = OnceLock::new();
    BASE.get_or_init(|| {
        let found = own_pids_cgroup().filter(|base| usable(base));
        match &found {
            Some(base) => sweep(base),
            None => tracing::warn!(
                "no writable pids cgroup: a command's process count is limited only by \
                 RLIMIT_NPROC, which does not hold for root"
            ),
        }
        found
    })
    .as_deref()
}

/// From `/proc/self/cgroup`: the v1 `pids` hierarchy's folder, else the v2 unified one.
fn own_pids_cgroup() -> Option<PathBuf> {
    let table = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mut unified = None;
    for line in table.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let path = path.trim_start_matches('/');
        if controllers.split(',').any(|c| c == "pids") {
            return Some(Path::new("/sys/fs/cgroup/pids").join(path));
        }
        if controllers.is_empty() {
            unified = Some(Path::new("/sys/fs/cgroup").join(path));
        }
    }
    unified
}

/// Whether a child cgroup of `base` can be made, limited and joined by a shell.
fn usable(base: &Path) -> bool {
    let probe = PidsCgroup {
        dir: base.join(format!("planwright-{}-probe", std::process::id())),
    };
    if make(&probe.dir).is_err() {
        return false;
    }
    let mut line = probe.prefix();
    line.push("true".into());
    crate::containment::succeeds(&line)
}

/// Removes `planwright-<pid>-*` children whose Planwright process is gone.
fn sweep(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("planwright-"))
            .and_then(|rest| rest.split('-').next())
        else {
            continue;
        };
        if !Path::new("/proc").join(pid).exists() {
            remove(&entry.path());
        }
    }
}

fn sh() -> PathBuf {
    crate::sandbox::find_program("sh").unwrap_or_else(|| PathBuf::from("/bin/sh"))
}
