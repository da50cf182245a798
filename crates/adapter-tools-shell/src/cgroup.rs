//! A pids cgroup per command: the fork-bomb guard that also holds for root
//! (docs/security.md, "Limits").
//!
//! `RLIMIT_NPROC` counts a user's processes and the kernel never enforces it for root, which
//! is how Planwright runs in most containers. A cgroup's `pids.max` counts the processes *in
//! the cgroup*, for every user. Each command gets its own child cgroup of Planwright's pids
//! cgroup (v1 `pids` hierarchy or the v2 unified one) with `pids.max` = [`PROCESSES`],
//! joined by the command's first process, the supervisor ([`crate::supervisor`]), before
//! anything else runs (it writes its pid to `…/planwright-<pid>-<n>/cgroup.procs`). When the
//! command has ended, any process still in it is killed; once no process is left in it
//! (killed ones may still be counted until they are reaped) it is kept for a later command
//! ([`MAX_SPARE`] at most; making and removing a cgroup costs milliseconds each), otherwise
//! removed.
//!
//! Where no writable pids cgroup exists (no delegation, not root), commands run without it
//! (logged once) and `RLIMIT_NPROC` is the only process limit.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

use crate::limits::PROCESSES;

/// Most empty cgroups kept for later commands.
const MAX_SPARE: usize = 8;

/// Empty cgroups of ended commands, limited to [`PROCESSES`], ready for the next ones.
static SPARE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn spare() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    SPARE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One command's pids cgroup; emptied on drop, then kept for another command or removed.
#[derive(Debug)]
pub(crate) struct PidsCgroup {
    dir: PathBuf,
}

impl PidsCgroup {
    /// An empty cgroup limited to [`PROCESSES`] (a spare one or a new one), or `None` where
    /// pids cgroups cannot be used here.
    pub(crate) fn create() -> Option<PidsCgroup> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let base = base()?;
        if let Some(dir) = spare().pop() {
            return Some(PidsCgroup { dir });
        }
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

    /// The `cgroup.procs` file a process writes its pid to to join the cgroup.
    pub(crate) fn procs(&self) -> PathBuf {
        self.dir.join("cgroup.procs")
    }
}

impl Drop for PidsCgroup {
    fn drop(&mut self) {
        kill_members(&self.dir);
        if members(&self.dir).is_empty() {
            let mut spare = spare();
            if spare.len() < MAX_SPARE {
                spare.push(std::mem::take(&mut self.dir));
                return;
            }
        }
        remove(&self.dir);
    }
}

fn kill_members(dir: &Path) {
    for pid in members(dir) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
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
        kill_members(dir);
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

/// Whether a child cgroup of `base` can be made, limited and joined by a new process.
fn usable(base: &Path) -> bool {
    let probe = PidsCgroup {
        dir: base.join(format!("planwright-{}-probe", std::process::id())),
    };
    if make(&probe.dir).is_err() {
        return false;
    }
    let mut line = crate::supervisor::prefix(Some(probe.procs()));
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `cmd` started by the supervisor in `cgroup`.
    fn start_in(cgroup: &PidsCgroup, cmd: &[&str]) -> std::process::Child {
        let mut line = crate::supervisor::prefix(Some(cgroup.procs()));
        line.extend(cmd.iter().map(Into::into));
        std::process::Command::new(&line[0])
            .args(&line[1..])
            .spawn()
            .unwrap()
    }

    /// An ended command's cgroup is kept and handed to the next command; a cgroup handed
    /// over holds nothing of the command before and is still limited.
    #[test]
    fn a_kept_cgroup_is_emptied_and_still_limited() {
        let Some(first) = PidsCgroup::create() else {
            // No writable pids cgroup here (the fork-bomb test in tests/shell.rs fails
            // under CI=true in that case).
            return;
        };
        assert!(start_in(&first, &["true"]).wait().unwrap().success());
        let dir = first.dir.clone();
        drop(first);
        let second = PidsCgroup::create().unwrap();
        assert_eq!(second.dir, dir, "the empty cgroup is used again");

        // A process left behind is killed when the cgroup is dropped.
        let mut sleeper = start_in(&second, &["sleep", "300"]);
        let pid = sleeper.id() as i32;
        let started = std::time::Instant::now();
        while members(&second.dir) != vec![pid] {
            assert!(started.elapsed().as_secs() < 10, "the sleeper never joined");
            std::thread::yield_now();
        }
        let killer = std::thread::spawn(move || drop(second));
        assert!(!sleeper.wait().unwrap().success());
        killer.join().unwrap();
        let third = PidsCgroup::create().unwrap();
        assert!(members(&third.dir).is_empty());
        assert_eq!(
            std::fs::read_to_string(third.dir.join("pids.max"))
                .unwrap()
                .trim(),
            PROCESSES.to_string()
        );
    }
}
