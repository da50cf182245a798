//! How the CLI talks on the terminal: how much it says (`-q`, `-v`, `-vv`) and whether it
//! colours what it writes. Decided once in `main`; the log, the live view, the runner's
//! notices (the sandbox warning) and `doctor` read it here, so colours are switched on or off in one place.

use std::io::{IsTerminal, Write};
use std::sync::OnceLock;

use crate::cli::Verbosity;

/// The process's terminal settings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Terminal {
    /// `-q`: only errors and the final result.
    pub quiet: bool,
    /// ANSI colours on stderr.
    pub colour_stderr: bool,
    /// ANSI colours on stdout.
    pub colour_stdout: bool,
}

static SETTINGS: OnceLock<Terminal> = OnceLock::new();

/// Decides the settings from the flags and the environment; the first call wins.
pub fn init(verbosity: Verbosity) -> Terminal {
    let no_color = no_color(std::env::var_os("NO_COLOR").as_deref());
    *SETTINGS.get_or_init(|| Terminal {
        quiet: verbosity.quiet,
        colour_stderr: !no_color && std::io::stderr().is_terminal(),
        colour_stdout: !no_color && std::io::stdout().is_terminal(),
    })
}

/// The settings [`init`] decided (quiet off and no colours before it ran).
pub fn get() -> Terminal {
    SETTINGS.get().copied().unwrap_or_default()
}

/// Whether `NO_COLOR` asks for no colours: set to any non-empty value (no-color.org).
fn no_color(value: Option<&std::ffi::OsStr>) -> bool {
    value.is_some_and(|v| !v.is_empty())
}

/// The log filter: `-q` error, `-v` info, `-vv` debug; else `PLANWRIGHT_LOG`, else
/// `RUST_LOG` (an empty variable counts as unset), else warnings.
pub fn log_filter(
    verbosity: Verbosity,
    planwright_log: Option<String>,
    rust_log: Option<String>,
) -> String {
    let set = |v: Option<String>| v.filter(|v| !v.trim().is_empty());
    if verbosity.quiet {
        return "error".into();
    }
    match verbosity.verbose {
        0 => set(planwright_log)
            .or_else(|| set(rust_log))
            .unwrap_or_else(|| "warn".into()),
        1 => "info".into(),
        _ => "debug".into(),
    }
}

/// A word in colour when `on`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Colour {
    Green,
    Yellow,
    Red,
}

/// `text` wrapped in the ANSI codes of `colour` when `on`, else as is.
pub fn paint(text: &str, colour: Colour, on: bool) -> String {
    if !on {
        return text.to_string();
    }
    let code = match colour {
        Colour::Green => "32",
        Colour::Yellow => "33",
        Colour::Red => "31",
    };
    format!("\x1b[{code}m{text}\x1b[0m")
}

/// Writes `text` on stdout at once (the CLI's results; the log and notices go to stderr).
pub fn print_stdout(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// Where the runner's notices go (`runner::notice`): on stderr, warnings unless `-q`.
pub fn notice(level: runner::notice::Level, text: &str) {
    if level == runner::notice::Level::Warning && get().quiet {
        return;
    }
    let _ = writeln!(std::io::stderr(), "{text}");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(quiet: bool, verbose: u8) -> Verbosity {
        Verbosity { quiet, verbose }
    }

    #[test]
    fn flags_beat_both_variables_and_planwright_log_beats_rust_log() {
        let pl = || Some("trace".to_string());
        let rl = || Some("planwright=debug".to_string());
        assert_eq!(log_filter(v(true, 0), pl(), rl()), "error");
        assert_eq!(log_filter(v(false, 1), pl(), rl()), "info");
        assert_eq!(log_filter(v(false, 3), pl(), rl()), "debug");
        assert_eq!(log_filter(v(false, 0), pl(), rl()), "trace");
        assert_eq!(log_filter(v(false, 0), None, rl()), "planwright=debug");
        assert_eq!(
            log_filter(v(false, 0), Some(" ".into()), rl()),
            "planwright=debug"
        );
        assert_eq!(log_filter(v(false, 0), None, None), "warn");
    }

    #[test]
    fn no_color_counts_only_when_not_empty() {
        assert!(!no_color(None));
        assert!(!no_color(Some(std::ffi::OsStr::new(""))));
        assert!(no_color(Some(std::ffi::OsStr::new("1"))));
        assert!(no_color(Some(std::ffi::OsStr::new("false"))));
    }

    #[test]
    fn paint_adds_codes_only_when_on() {
        assert_eq!(paint("ok", Colour::Green, false), "ok");
        assert_eq!(paint("ok", Colour::Green, true), "\x1b[32mok\x1b[0m");
    }
}
