//! Which sandbox shell commands run in (`--sandbox`, docs/security.md): `auto`, the
//! default, takes bubblewrap when it works on this machine and otherwise runs commands
//! unsandboxed with one warning; `bwrap` requires it; `none` opts out silently. `serve`
//! and `worker` run other people's tasks, so they do not fall back to no sandbox unless
//! told `--sandbox none`.
//!
//! Whether bubblewrap works is found out once per process, by running `true` inside it
//! with the namespaces real commands use (bwrap may be installed and still fail, e.g. in a
//! container without user namespaces). A command that will ask starts that probe on a
//! thread of its own as soon as its arguments are read ([`probe_in_background`]), so it
//! runs while the configuration, the store and the LLM client are set up instead of
//! before them.

use std::sync::{Once, OnceLock};

use crate::notice::{Level, Notices};
use crate::RunnerError;
use crate::SandboxMode;

/// Whether this build has the shell tools, the only commands a sandbox is for.
const SHELL_TOOLS: bool = cfg!(feature = "tools-shell");

/// The sandbox commands actually run in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effective {
    None,
    Bwrap,
}

impl Effective {
    /// The name `--sandbox` takes for it.
    pub fn name(self) -> &'static str {
        match self {
            Effective::None => "none",
            Effective::Bwrap => "bwrap",
        }
    }
}

/// Starts [`bwrap_usable`]'s probe on a thread of its own when `arg` will need it; the
/// first caller of [`bwrap_usable`] then waits only for what is left of it.
pub fn probe_in_background(arg: SandboxMode) {
    if arg == SandboxMode::None || !SHELL_TOOLS {
        return;
    }
    let started = std::thread::Builder::new()
        .name("bwrap-probe".into())
        .spawn(|| {
            let _ = bwrap_usable();
        });
    if let Err(e) = started {
        tracing::debug!(error = %e, "the sandbox probe runs when first needed instead");
    }
}

/// Whether bubblewrap works here (probed on the first call), or why not.
pub fn bwrap_usable() -> Result<(), String> {
    static PROBE: OnceLock<Result<(), String>> = OnceLock::new();
    PROBE.get_or_init(probe).clone()
}

#[cfg(feature = "tools-shell")]
fn probe() -> Result<(), String> {
    adapter_tools_shell::bwrap_available().map(|_| ())
}

#[cfg(not(feature = "tools-shell"))]
fn probe() -> Result<(), String> {
    Err("this planwright was built without the shell tools (the `tools-shell` feature)".into())
}

/// The sandbox of a `run`, `resume` or `tools list`: `auto` without a working bubblewrap
/// is no sandbox, said once per process (a warning to `notices`).
pub fn resolve(arg: SandboxMode, notices: Notices) -> Result<Effective, RunnerError> {
    match arg {
        // Without the shell tools no command runs: nothing to sandbox, nothing to say.
        SandboxMode::Auto if !SHELL_TOOLS => Ok(Effective::None),
        SandboxMode::None => Ok(Effective::None),
        SandboxMode::Bwrap => bwrap_usable().map(|()| Effective::Bwrap).map_err(|why| {
            RunnerError::Config(format!("--sandbox bwrap is not usable here: {why}"))
        }),
        SandboxMode::Auto => match bwrap_usable() {
            Ok(()) => Ok(Effective::Bwrap),
            Err(why) => {
                warn_once(&why, notices);
                Ok(Effective::None)
            }
        },
    }
}

/// The sandbox of `serve` and `worker`: as [`resolve`], but `auto` without a working
/// bubblewrap is an error naming the fix.
pub fn resolve_for_server(
    arg: SandboxMode,
    command: &str,
    notices: Notices,
) -> Result<Effective, RunnerError> {
    if arg == SandboxMode::Auto && SHELL_TOOLS {
        if let Err(why) = bwrap_usable() {
            return Err(RunnerError::Config(format!(
                "`planwright {command}` does not run shell commands unsandboxed by default and \
                 bubblewrap is not usable here ({}); fix bubblewrap or pass --sandbox none",
                short(&why)
            )));
        }
    }
    resolve(arg, notices)
}

fn warn_once(why: &str, notices: Notices) {
    static WARNED: Once = Once::new();
    WARNED.call_once(|| {
        notices.say(Level::Warning, &warning(why));
    });
}

/// The one line `auto` writes when it falls back to no sandbox.
fn warning(why: &str) -> String {
    format!(
        "warning: bubblewrap is not usable here ({}): shell commands run unsandboxed; \
         --sandbox none silences this",
        short(why)
    )
}

/// The probe's reason on one line, without its leading "the bwrap sandbox is not
/// available: ".
fn short(why: &str) -> String {
    why.strip_prefix("the bwrap sandbox is not available: ")
        .unwrap_or(why)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_warning_is_one_line_naming_the_reason_and_the_fix() {
        let w = warning("the bwrap sandbox is not available: `bwrap` was not found on PATH");
        assert_eq!(
            w,
            "warning: bubblewrap is not usable here (`bwrap` was not found on PATH): shell \
             commands run unsandboxed; --sandbox none silences this"
        );
        assert!(!w.contains('\n'));
    }

    #[test]
    fn none_is_none_without_a_probe() {
        let notices = Notices::default();
        assert_eq!(
            resolve(SandboxMode::None, notices).ok(),
            Some(Effective::None)
        );
        assert_eq!(
            resolve_for_server(SandboxMode::None, "serve", notices).ok(),
            Some(Effective::None)
        );
    }
}
