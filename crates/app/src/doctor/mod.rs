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

/// One checked part (what it is, how it went, what was found or how to fix it) and how it
/// went: the domain's, which the model providers' own checks give too.
pub use domain::ports::{Finding as Check, Health as Status};

fn word(status: Status) -> &'static str {
    match status {
        Status::Ok => "ok",
        Status::Warn => "warn",
        Status::Fail => "fail",
    }
}

fn colour_of(status: Status) -> Colour {
    match status {
        Status::Ok => Colour::Green,
        Status::Warn => Colour::Yellow,
        Status::Fail => Colour::Red,
    }
}

/// A check's line (no newline); the status word padded so details line up.
pub fn line(check: &Check, colour: bool) -> String {
    let word = word(check.health);
    let pad = " ".repeat(5 - word.len());
    format!(
        "{}{pad}{}: {}",
        paint(word, colour_of(check.health), colour),
        check.part,
        check.detail
    )
}

/// Runs every check, prints its line on stdout as it is done, and picks the exit code.
pub async fn doctor(db: &Database, args: &DoctorArgs) -> ExitCode {
    let colour = crate::terminal::get().colour_stdout;
    let mut failed = false;
    let mut say = |check: Check| {
        failed |= check.health == Status::Fail;
        crate::terminal::print_stdout(&format!("{}\n", line(&check, colour)));
    };
    let settings = args.opts.settings();
    let timeout = std::time::Duration::from_secs(args.timeout_secs);
    for finding in runner::providers::doctor(&settings, timeout).await {
        say(finding);
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
        assert_eq!(line(&c, false), "warn database: not created yet");
        let c = Check::new("chromium", Status::Ok, "/usr/bin/chromium");
        assert_eq!(line(&c, false), "ok   chromium: /usr/bin/chromium");
        assert_eq!(
            line(&Check::new("x", Status::Fail, "y"), true),
            "\x1b[31mfail\x1b[0m x: y"
        );
    }
}
