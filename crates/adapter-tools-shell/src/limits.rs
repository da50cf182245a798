//! Resource limits of shell commands (docs/security.md, "Limits"), set with util-linux's
//! `prlimit` in front of `bash` so they hold for the command and everything it starts.
//!
//! - file size: 1 GiB per file written (`RLIMIT_FSIZE`);
//! - data: 4 GiB of heap per process (`RLIMIT_DATA`; address-space limits would break
//!   runtimes that reserve large virtual ranges);
//! - processes: 2048 for the user (`RLIMIT_NPROC`). The kernel counts every process of
//!   the user and does not enforce it for root; under root it is no fork-bomb guard.
//!
//! Without `prlimit` on `PATH`, commands run without these limits (logged once).

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::OnceLock;

/// Largest file a command may write.
pub(crate) const FILE_SIZE_BYTES: u64 = 1 << 30;
/// Largest heap of one process.
pub(crate) const DATA_BYTES: u64 = 4 << 30;
/// Most processes of the user while a command runs.
pub(crate) const PROCESSES: u64 = 2048;

/// `prlimit --fsize=… --data=… --nproc=… --`, or nothing when `prlimit` is missing.
pub(crate) fn prefix() -> Vec<OsString> {
    static PRLIMIT: OnceLock<Option<PathBuf>> = OnceLock::new();
    let found = PRLIMIT.get_or_init(|| {
        let found = crate::sandbox::find_program("prlimit");
        if found.is_none() {
            tracing::warn!(
                "`prlimit` (util-linux) is not on PATH: shell commands run without resource limits"
            );
        }
        found
    });
    match found {
        Some(path) => vec![
            path.clone().into_os_string(),
            format!("--fsize={FILE_SIZE_BYTES}").into(),
            format!("--data={DATA_BYTES}").into(),
            format!("--nproc={PROCESSES}").into(),
            "--".into(),
        ],
        None => Vec::new(),
    }
}
