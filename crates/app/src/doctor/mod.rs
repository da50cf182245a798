//! `planwright doctor`: checks each part Planwright uses (the model providers' own checks:
//! the embedded model's file, the LLM endpoint; Chromium, bubblewrap, Python, the database,
//! the workspace root) and prints one line per
//! check, `ok`, `warn` or `fail`, saying how to fix what is missing. Exit code 0 when no
//! check failed, 1 otherwise.
//!
//! A part that is configured explicitly (`--model-path`, `PLANWRIGHT_CHROMIUM`, `--sandbox
//! bwrap`, an endpoint) and does not work fails; an optional part merely absent warns.

mod checks;

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

    /// A model provider's finding (`runner::providers::doctor`).
    pub fn found(finding: domain::ports::Finding) -> Check {
        let status = match finding.health {
            domain::ports::Health::Ok => Status::Ok,
            domain::ports::Health::Warn => Status::Warn,
            domain::ports::Health::Fail => Status::Fail,
        };
        Check::new(finding.part, status, finding.detail)
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
    let timeout = std::time::Duration::from_secs(args.timeout_secs);
    for finding in runner::providers::doctor(&settings, timeout).await {
        say(Check::found(finding));
    }
    say(checks::chromium(settings.chromium.as_deref()));
    say(checks::bubblewrap(settings.sandbox));
    say(checks::python());
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
}
