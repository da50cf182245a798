//! This process's lease owner id, and whether another owner on this host is provably gone
//! (docs/durability.md, "Leases").
//!
//! An owner id is `host/pid/start/boot`: the host name, the process id, the process's start
//! time in clock ticks since boot, and the first 8 characters of the kernel's boot id. A pid
//! alone would lie after a container restart (PID namespaces start at 1 again) or once the
//! pid is reused; a process with the same pid *and* start time on the same boot is the same
//! process. Owners on other hosts are never judged: their leases expire. A process holding
//! a run for something other than executing it adds the role (`host/pid/start/boot/undo`,
//! [`role_owner_id`]), so its hold is not taken for the process's own execution lease.

use std::sync::OnceLock;

/// This process's owner id (computed once).
pub fn owner_id() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        let pid = std::process::id();
        format!(
            "{}/{pid}/{}/{}",
            host_name(),
            start_ticks(pid).unwrap_or(0),
            boot_id()
        )
    })
}

/// This process's owner id for holding a run as `role` (e.g. `undo`): never the same as
/// its execution lease's ([`owner_id`]), which the store would grant again to its holder.
pub fn role_owner_id(role: &str) -> String {
    format!("{}/{role}", owner_id())
}

/// Whether `owner` names a process of this host and boot that no longer runs (whatever
/// role it held the run in): its lease can be taken at once instead of waiting for it to
/// expire.
pub fn is_gone(owner: &str) -> bool {
    let mut parts = owner.split('/');
    let (Some(host), Some(pid), Some(start), Some(boot), _role, None) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return false;
    };
    if host != host_name() || boot != boot_id() {
        return false;
    }
    let (Ok(pid), Ok(start)) = (pid.parse::<u32>(), start.parse::<u64>()) else {
        return false;
    };
    start_ticks(pid) != Some(start)
}

/// This host's name, read once (it names owners, and `is_gone` compares with it for every
/// run listed).
fn host_name() -> &'static str {
    static HOST: OnceLock<String> = OnceLock::new();
    HOST.get_or_init(read_host_name)
}

fn read_host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().replace('/', "_"))
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}

/// The first 8 characters of the kernel's boot id, read once.
fn boot_id() -> &'static str {
    static BOOT: OnceLock<String> = OnceLock::new();
    BOOT.get_or_init(read_boot_id)
}

fn read_boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|b| b.trim().chars().filter(|c| *c != '-').take(8).collect())
        .unwrap_or_else(|_| "noboot".to_string())
}

/// The start time (field 22 of `/proc/<pid>/stat`) of a live, non-zombie process.
fn start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: fields after the last ')'.
    let rest = stat.rsplit_once(')')?.1;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?;
    if state == "Z" || state == "X" {
        return None;
    }
    // `rest` starts at field 3 (state); field 22 is the 20th from there.
    fields.nth(18)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_not_gone() {
        assert!(!is_gone(owner_id()), "{}", owner_id());
        assert!(!is_gone(&role_owner_id("undo")));
        assert_ne!(role_owner_id("undo"), owner_id());
    }

    #[test]
    fn a_finished_child_is_gone() {
        let mut child = std::process::Command::new("true").spawn().expect("spawn");
        let pid = child.id();
        let start = start_ticks(pid);
        child.wait().expect("wait");
        let owner = format!("{}/{pid}/{}/{}", host_name(), start.unwrap_or(1), boot_id());
        assert!(is_gone(&owner));
        assert!(is_gone(&format!("{owner}/undo")), "a role's hold too");
    }

    #[test]
    fn the_same_pid_with_another_start_time_is_gone() {
        // What a container restart looks like: pid 1 runs, but it is not the recorded one.
        let pid = std::process::id();
        let start = start_ticks(pid).expect("own start time");
        let owner = format!("{}/{pid}/{}/{}", host_name(), start + 1, boot_id());
        assert!(is_gone(&owner));
    }

    #[test]
    fn other_hosts_and_odd_ids_are_never_judged() {
        assert!(!is_gone("elsewhere/1/1/deadbeef"));
        assert!(!is_gone("pid:42"));
        assert!(!is_gone("a/1/2/3/undo/more"));
        assert!(!is_gone(""));
    }
}
