//! `cargo xtask ci`: format check, no import circle in the domain (`cargo xtask cycles`),
//! clippy with warnings denied, `cargo deny check`, each
//! adapter feature of the binary built alone, then every test.

use std::process::Command;

use crate::{cargo, report};

/// Test counts summed over every `test result:` line cargo prints.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Tally {
    passed: u64,
    failed: u64,
    ignored: u64,
}

impl Tally {
    /// Adds the counts of a line like `test result: ok. 12 passed; 0 failed; 1 ignored; ...`.
    fn add_line(&mut self, line: &str) {
        let Some(rest) = line.trim().strip_prefix("test result:") else {
            return;
        };
        for part in rest.split(';') {
            let words: Vec<&str> = part.split_whitespace().collect();
            let (n, what) = match words.as_slice() {
                [.., n, what] => (n.parse::<u64>().unwrap_or(0), *what),
                _ => continue,
            };
            match what {
                "passed" => self.passed += n,
                "failed" => self.failed += n,
                "ignored" => self.ignored += n,
                _ => {}
            }
        }
    }
}

/// Runs `cargo test ARGS`, echoing its output, and tallies the results.
fn cargo_test(args: &[&str], tally: &mut Tally) -> Result<(), String> {
    use std::io::{BufRead, BufReader, Write};
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    report(&format!("$ cargo test {}", args.join(" ")));
    let mut child = Command::new(&cargo)
        .arg("test")
        .args(args)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start cargo: {e}"))?;
    if let Some(out) = child.stdout.take() {
        let mut stdout = std::io::stdout().lock();
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            tally.add_line(&line);
            let _ = writeln!(stdout, "{line}");
        }
    }
    let status = child.wait().map_err(|e| format!("cargo test: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "`cargo test {}` exited with {status}",
            args.join(" ")
        ))
    }
}

pub(crate) fn ci() -> Result<(), String> {
    cargo(&["fmt", "--all", "--", "--check"])?;
    crate::cycles::cycles()?;
    cargo(&[
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ])?;
    crate::deny::deny()?;
    features_alone()?;
    let mut tally = Tally::default();
    let result = cargo_test(&["--workspace", "--doc"], &mut tally)
        .and_then(|()| cargo_test(&["--workspace", "--all-targets"], &mut tally));
    summary(&tally);
    result?;
    if tally.passed == 0 {
        return Err("no test ran".to_string());
    }
    Ok(())
}

/// The binary's adapter features (crates/app/Cargo.toml): each must build alone.
const FEATURES: [&str; 8] = [
    "openai",
    "llama",
    "tools-shell",
    "tools-browser",
    "search",
    "store-sqlite",
    "store-postgres",
    "mcp",
];

/// Clippy, warnings denied, on the binary with no adapter feature and with each one alone:
/// a feature that only builds beside another, or leaves code unreachable, fails here.
fn features_alone() -> Result<(), String> {
    let base = ["clippy", "-p", "planwright", "--no-default-features"];
    let deny = ["--", "-D", "warnings"];
    cargo(&[&base[..], &deny[..]].concat())?;
    for feature in FEATURES {
        cargo(&[&base[..], &["--features", feature], &deny[..]].concat())?;
    }
    Ok(())
}

fn summary(t: &Tally) {
    use std::io::Write;
    let _ = writeln!(
        std::io::stdout(),
        "\nci: {} passed, {} failed, {} skipped",
        t.passed,
        t.failed,
        t.ignored
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tally_sums_cargo_result_lines() {
        let mut t = Tally::default();
        t.add_line("test result: ok. 12 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.02s");
        t.add_line(
            "test result: FAILED. 3 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out",
        );
        t.add_line("running 5 tests");
        assert_eq!(
            t,
            Tally {
                passed: 15,
                failed: 2,
                ignored: 1
            }
        );
    }
}
