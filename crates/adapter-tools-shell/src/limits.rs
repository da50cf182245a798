//! Resource limits of shell commands (docs/security.md, "Limits"), set by the supervisor in
//! front of every command ([`crate::supervisor`]) so they hold for the command and
//! everything it starts:
//!
//! - file size: 1 GiB per file written (`RLIMIT_FSIZE`);
//! - data: 4 GiB of heap per process (`RLIMIT_DATA`; address-space limits would break
//!   runtimes that reserve large virtual ranges);
//! - processes: 2048 for the user (`RLIMIT_NPROC`). The kernel counts every process of
//!   the user and does not enforce it for root; under root it is no fork-bomb guard.
//!
//! Soft and hard limits are both set, to the value or to Planwright's own hard limit when
//! that is lower (a process may lower its limits, never raise its hard ones).

use std::sync::OnceLock;

use nix::sys::resource::{getrlimit, rlim_t, Resource, RLIM_INFINITY};

/// Largest file a command may write.
pub(crate) const FILE_SIZE_BYTES: u64 = 1 << 30;
/// Largest heap of one process.
pub(crate) const DATA_BYTES: u64 = 4 << 30;
/// Most processes of the user while a command runs.
pub(crate) const PROCESSES: u64 = 2048;

/// bash's `ulimit` options for the limits: `-f KiB -d KiB -u N`.
pub(crate) fn ulimit_args() -> &'static str {
    static ARGS: OnceLock<String> = OnceLock::new();
    ARGS.get_or_init(|| {
        let capped = |resource, wanted: u64| {
            let hard = getrlimit(resource).map_or(RLIM_INFINITY, |(_, hard)| hard);
            rlim_t::min(wanted, hard)
        };
        let kib = |bytes: rlim_t| bytes / 1024;
        format!(
            "-f {} -d {} -u {}",
            kib(capped(Resource::RLIMIT_FSIZE, FILE_SIZE_BYTES)),
            kib(capped(Resource::RLIMIT_DATA, DATA_BYTES)),
            capped(Resource::RLIMIT_NPROC, PROCESSES)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_never_exceed_the_current_hard_limits() {
        let args = ulimit_args();
        let values: Vec<u64> = args
            .split_whitespace()
            .skip(1)
            .step_by(2)
            .filter_map(|v| v.parse().ok())
            .collect();
        assert_eq!(values.len(), 3, "{args}");
        let hard = |r| getrlimit(r).map_or(RLIM_INFINITY, |(_, h)| h);
        assert!(values[0] * 1024 <= hard(Resource::RLIMIT_FSIZE), "{args}");
        assert!(values[1] * 1024 <= hard(Resource::RLIMIT_DATA), "{args}");
        assert!(values[2] <= hard(Resource::RLIMIT_NPROC), "{args}");
    }
}
