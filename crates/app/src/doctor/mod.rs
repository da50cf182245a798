//! `planwright doctor`: checks each part Planwright uses (the embedded model, Chromium,
//! bubblewrap, the LLM endpoint, the database, the workspace root) and prints one line per
//! check, `ok`, `warn` or `fail`, saying how to fix what is missing. Exit code 0 when no
//! check failed, 1 otherwise.
//!
//! A part that is configured explicitly (`--model-path`, `PLANWRIGHT_CHROMIUM`, `--sandbox
//! bwrap`, an endpoint) and does not work fails; an optional part merely absent warns.

#[cfg(feature = "anthropic")]
mod anthropic;
mod checks;
mod endpoint;

use std::process::ExitCode;

use crate::cli::DoctorArgs;
use crate::terminal::{paint, Colour};
use runner::database::Database;

/// How a check went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Ok,
    Warn,
    Fail,
}

impl Status {
    fn word(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Fail => "fail",
        }
    }

    fn colour(self) -> Colour {
        match self {
            Status::Ok => Colour::Green,
            Status::Warn => Colour::Yellow,
            Status::Fail => Colour::Red,
        }
    }
}

/// One checked part: what it is, how it went, and what was found or how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    pub part: &'static str,
    pub status: Status,
    pub detail: String,
}

impl Check {
    pub fn new(part: &'static str, status: Status, detail: impl Into<String>) -> Check {
        Check {
            part,
            status,
            detail: detail.into(),
        }
    }

    /// The check's line (no newline); the status word padded so details line up.
    pub fn line(&self, colour: bool) -> String {
        let word = self.status.word();
        let pad = " ".repeat(5 - word.len());
        format!(
            "{}{pad}{}: {}",
            paint(word, self.status.colour(), colour),
            self.part,
            self.detail
        )
    }
}

/// Runs every check, prints its line on stdout as it is done, and picks the exit code.
pub async fn doctor(db: &Database, args: &DoctorArgs) -> ExitCode {
    let colour = crate::terminal::get().colour_stdout;
    let mut failed = false;
    let mut say = |check: Check| {
        failed |= check.status == Status::Fail;
        crate::terminal::print_stdout(&format!("{}\n", check.line(colour)));
    };
    let settings = args.opts.settings();
    say(checks::model(&settings));
    say(checks::chromium(settings.chromium.as_deref()));
    say(checks::bubblewrap(settings.sandbox));
    say(checks::python());
    #[cfg(feature = "anthropic")]
    if settings.provider == Some(runner::Provider::Anthropic) {
        say(anthropic::check(&settings, args.timeout_secs).await);
    } else {
        say(endpoint::check(&settings, args.timeout_secs).await);
    }
    #[cfg(not(feature = "anthropic"))]
    say(endpoint::check(&settings, args.timeout_secs).await);
    say(checks::database(db).await);
    say(checks::workspace_root(
        &crate::cli::settings::workspace_root(args.workspace_root.as_ref(), db),
    ));
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// A size in bytes as people read it (`1.1 GB`).
#[cfg(feature = "llama")]
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if bytes < 1000 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1000.0;
    let mut unit = 0;
    while value >= 1000.0 && unit + 1 < UNITS.len() {
        value /= 1000.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_names_the_status_the_part_and_the_detail() {
        let c = Check::new("database", Status::Warn, "not created yet");
        assert_eq!(c.line(false), "warn database: not created yet");
        let c = Check::new("chromium", Status::Ok, "/usr/bin/chromium");
        assert_eq!(c.line(false), "ok   chromium: /usr/bin/chromium");
        assert_eq!(
            Check::new("x", Status::Fail, "y").line(true),
            "\x1b[31mfail\x1b[0m x: y"
        );
    }

    #[cfg(feature = "llama")]
    #[test]
    fn sizes_read_as_people_read_them() {
        assert_eq!(human_size(999), "999 B");
        assert_eq!(human_size(1_500), "1.5 KB");
        assert_eq!(human_size(1_120_000_000), "1.1 GB");
    }
}
