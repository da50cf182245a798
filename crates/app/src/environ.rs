//! Keeps Planwright's own secrets (API keys, `PLANWRIGHT_TOKEN`, database URLs) out of
//! reach of the commands it runs (docs/security.md, "Secrets").
//!
//! Shell commands get an allow-listed environment (adapter-tools-shell), but a command can
//! also look at its parent: `/proc/<ppid>/environ` shows the environment block the kernel
//! gave Planwright at start, whatever the process changed since. So, first thing in
//! `main`:
//!
//! 1. the process is marked non-dumpable: its `/proc/<pid>/environ`, `mem` and `fd/` are
//!    then readable only with `CAP_SYS_PTRACE` (root), not by the user's other processes;
//! 2. if the start-up block holds anything but harmless variables, Planwright executes
//!    itself again with only the harmless ones in the block, and hands the others over in
//!    an anonymous memory file (`memfd`) whose descriptor number is passed in
//!    [`HANDOVER_VAR`]; the new image reads it, closes it and restores the variables into
//!    its (heap) environment. `/proc/<pid>/environ` then shows no secret even to root.
//!
//! What it cannot promise: root, unsandboxed, can still read the process's memory
//! (`/proc/<pid>/mem`); the bwrap sandbox hides the parent entirely (a pid namespace).

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::process::CommandExt;

/// Names the new image finds its handed-over variables under.
pub const HANDOVER_VAR: &str = "PLANWRIGHT_ENV_FD";

/// Variables that may stay in the start-up block (exact names, plus the locale's `LC_*`).
const HARMLESS: [&str; 14] = [
    "PATH",
    "HOME",
    "PWD",
    "LANG",
    "LANGUAGE",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "TZ",
    "USER",
    "LOGNAME",
    "SHELL",
    "RUST_BACKTRACE",
    "RUST_LIB_BACKTRACE",
];

/// Whether a variable may stay in the start-up environment block.
pub fn is_harmless(name: &OsStr) -> bool {
    let name = name.to_string_lossy();
    HARMLESS.contains(&name.as_ref()) || name.starts_with("LC_")
}

/// Encodes variables as `NAME=VALUE\0` records.
pub fn encode(vars: &[(OsString, OsString)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, value) in vars {
        out.extend_from_slice(name.as_bytes());
        out.push(b'=');
        out.extend_from_slice(value.as_bytes());
        out.push(0);
    }
    out
}

/// Decodes [`encode`]'s records (a record without `=` is skipped).
pub fn decode(bytes: &[u8]) -> Vec<(OsString, OsString)> {
    bytes
        .split(|b| *b == 0)
        .filter_map(|record| {
            let eq = record.iter().position(|b| *b == b'=')?;
            let (name, value) = (&record[..eq], &record[eq + 1..]);
            (!name.is_empty()).then(|| {
                (
                    OsString::from_vec(name.to_vec()),
                    OsString::from_vec(value.to_vec()),
                )
            })
        })
        .collect()
}

/// Marks the process non-dumpable and, when needed, re-executes it with a clean start-up
/// environment block (see the module docs). Returns only in the process that goes on
/// (after a successful re-execution that is the new image). Failures are logged to
/// stderr-free `tracing` later, never fatal: the shell's allow-list still applies.
pub fn protect() -> Vec<String> {
    let mut notes = Vec::new();
    if let Err(e) = nix::sys::prctl::set_dumpable(false) {
        notes.push(format!("could not mark the process non-dumpable: {e}"));
    }
    if let Some(fd) = std::env::var_os(HANDOVER_VAR) {
        std::env::remove_var(HANDOVER_VAR);
        if let Err(e) = take_over(&fd) {
            notes.push(e);
        }
        return notes;
    }
    let (keep, hand_over): (Vec<_>, Vec<_>) =
        std::env::vars_os().partition(|(n, _)| is_harmless(n));
    if hand_over.is_empty() {
        return notes;
    }
    // Only returns on failure.
    notes.push(reexec(&keep, &hand_over));
    notes
}

/// Restores the variables handed over through the memory file `fd`, then closes it.
fn take_over(fd: &OsStr) -> Result<(), String> {
    let n: i32 = fd
        .to_str()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("{HANDOVER_VAR} is not a descriptor number: {fd:?}"))?;
    let bytes = std::fs::read(format!("/proc/self/fd/{n}"))
        .map_err(|e| format!("cannot read the handed-over environment (fd {n}): {e}"))?;
    let _ = nix::unistd::close(n);
    for (name, value) in decode(&bytes) {
        std::env::set_var(name, value);
    }
    Ok(())
}

/// Executes this program again with `keep` as its environment block and `hand_over` in a
/// memory file; returns why when that is not possible.
fn reexec(keep: &[(OsString, OsString)], hand_over: &[(OsString, OsString)]) -> String {
    use nix::sys::memfd::{memfd_create, MemFdCreateFlag};
    use std::os::fd::AsRawFd;
    let fd = match memfd_create(c"planwright-env", MemFdCreateFlag::empty()) {
        Ok(fd) => fd,
        Err(e) => return format!("cannot hide the environment (memfd_create: {e})"),
    };
    let mut file = std::fs::File::from(fd);
    if let Err(e) = file.write_all(&encode(hand_over)) {
        return format!("cannot hide the environment (writing the memory file: {e})");
    }
    let mut args = std::env::args_os();
    let arg0 = args.next().unwrap_or_else(|| OsString::from("planwright"));
    let error = std::process::Command::new("/proc/self/exe")
        .arg0(arg0)
        .args(args)
        .env_clear()
        .envs(keep.iter().cloned())
        .env(HANDOVER_VAR, file.as_raw_fd().to_string())
        .exec();
    format!("cannot hide the environment (re-executing planwright: {error})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let vars = vec![
            (OsString::from("OPENAI_API_KEY"), OsString::from("sk-a=b")),
            (OsString::from("EMPTY"), OsString::from("")),
            (OsString::from("MULTI"), OsString::from("line1\nline2")),
        ];
        assert_eq!(decode(&encode(&vars)), vars);
        assert!(decode(b"novalue\0=x\0").is_empty());
    }

    #[test]
    fn only_plain_settings_stay_in_the_block() {
        for name in ["PATH", "HOME", "LANG", "LC_ALL", "TERM"] {
            assert!(is_harmless(OsStr::new(name)), "{name}");
        }
        for name in [
            "OPENAI_API_KEY",
            "PLANWRIGHT_TOKEN",
            "DATABASE_URL",
            "GH_PAT",
            "PLANWRIGHT_DB",
        ] {
            assert!(!is_harmless(OsStr::new(name)), "{name}");
        }
    }
}
