//! A stdio server's process group: the server runs as the leader of a group of its own, and
//! the group is killed when the session ends, so that what the server started (the node an
//! `npx` wrapper runs, a shell script's `sleep`) does not outlive it.

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::process::Child;

/// Kills the group of a spawned server when dropped.
pub struct ProcessGroup {
    leader: Option<Pid>,
}

impl ProcessGroup {
    /// The group `child` leads (it was spawned with `process_group(0)`).
    pub fn of(child: &Child) -> ProcessGroup {
        ProcessGroup {
            leader: child
                .id()
                .and_then(|id| i32::try_from(id).ok())
                .map(Pid::from_raw),
        }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        if let Some(leader) = self.leader {
            // ESRCH: every member already exited.
            let _ = killpg(leader, Signal::SIGKILL);
        }
    }
}
