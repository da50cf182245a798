//! Waiting for what a test started: a condition to hold, a process to be gone.

use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::kill;
use nix::unistd::Pid;

/// Polls `condition` every 10 ms until it holds; panics (`timed out waiting for {what}`)
/// after `limit`. For synchronising on files, pages and process exits, never to wait a
/// fixed time.
pub async fn wait_until(what: &str, limit: Duration, mut condition: impl FnMut() -> bool) {
    let started = Instant::now();
    while !condition() {
        assert!(started.elapsed() < limit, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Whether process `pid` is dead: gone, or a zombie waiting to be reaped (a killed orphan
/// may linger as one until init reaps it). A pid beyond `i32` names no process.
pub fn process_gone(pid: impl TryInto<i32>) -> bool {
    let Ok(pid) = pid.try_into() else {
        return true;
    };
    match kill(Pid::from_raw(pid), None) {
        Err(Errno::ESRCH) => true,
        Ok(()) => {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_not_gone_and_a_reaped_child_is() {
        assert!(!process_gone(std::process::id()));
        let mut child = std::process::Command::new("true")
            .spawn()
            .expect("spawn true");
        let pid = child.id();
        child.wait().expect("wait");
        assert!(process_gone(pid));
    }

    #[tokio::test]
    async fn waiting_ends_when_the_condition_holds() {
        let mut polls = 0;
        wait_until("three polls", Duration::from_secs(5), || {
            polls += 1;
            polls >= 3
        })
        .await;
        assert_eq!(polls, 3);
    }
}
