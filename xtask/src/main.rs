//! # xtask
//!
//! Project automation, run as `cargo xtask <task>`:
//! - `ci`: format check, clippy with warnings denied, then every test of the workspace.
//! - `bench`: the benchmarks, written to `docs/benchmarks.md` with the machine's description.
//!
//! It only shells out to cargo; it must not depend on the project's crates.

use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let task = std::env::args().nth(1).unwrap_or_default();
    let result = match task.as_str() {
        "ci" => ci(),
        "bench" => bench(),
        _ => {
            let _ = usage();
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            report(&format!("xtask {task} failed: {e}"));
            ExitCode::FAILURE
        }
    }
}

fn report(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

fn usage() -> Result<(), String> {
    report(
        "usage: cargo xtask <task>\n\ntasks:\n  ci     fmt --check, clippy -D warnings, all tests\n  bench  benchmarks -> docs/benchmarks.md",
    );
    Ok(())
}

fn cargo(args: &[&str]) -> Result<(), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    report(&format!("$ cargo {}", args.join(" ")));
    let status = Command::new(&cargo)
        .args(args)
        .status()
        .map_err(|e| format!("cannot start cargo: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`cargo {}` exited with {status}", args.join(" ")))
    }
}

/// Benchmark targets, each printing a Markdown section: (package, bench name).
const BENCHES: &[(&str, &str)] = &[("domain", "scheduler")];

fn bench() -> Result<(), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let mut doc = String::from(
        "# Benchmarks\n\nWritten by `cargo xtask bench`; numbers are from the machine below, \
         measured in one run. Speed and memory targets live here, never in timed tests.\n\n",
    );
    doc.push_str(&machine());
    for (package, name) in BENCHES {
        report(&format!("$ cargo bench -p {package} --bench {name}"));
        let out = Command::new(&cargo)
            .args(["bench", "-p", package, "--bench", name])
            .stderr(std::process::Stdio::inherit())
            .output()
            .map_err(|e| format!("cannot start cargo: {e}"))?;
        if !out.status.success() {
            return Err(format!("benchmark {package}/{name} failed"));
        }
        let section = String::from_utf8_lossy(&out.stdout);
        report(&section);
        doc.push_str(&section);
        doc.push('\n');
    }
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("docs")
        .join("benchmarks.md");
    std::fs::write(&path, doc).map_err(|e| format!("writing {}: {e}", path.display()))?;
    report(&format!("wrote {}", path.display()));
    Ok(())
}

/// CPU, cores, memory, OS and toolchain, as Markdown.
fn machine() -> String {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let cpuinfo = read("/proc/cpuinfo");
    let cpu = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_else(|| "unknown".to_string());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mem_kib: u64 = read("/proc/meminfo")
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let os = read("/etc/os-release")
        .lines()
        .find(|l| l.starts_with("PRETTY_NAME="))
        .map(|l| {
            l.trim_start_matches("PRETTY_NAME=")
                .trim_matches('"')
                .to_string()
        })
        .unwrap_or_else(|| "unknown".to_string());
    let rustc = Command::new("rustc")
        .arg("-V")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    format!(
        "## Machine\n\n| | |\n| --- | --- |\n| CPU | {cpu} |\n| cores | {cores} |\n| memory | {:.1} GiB |\n| OS | {os} |\n| toolchain | {rustc} |\n\n",
        mem_kib as f64 / 1024.0 / 1024.0
    )
}

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

fn ci() -> Result<(), String> {
    cargo(&["fmt", "--all", "--", "--check"])?;
    cargo(&[
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ])?;
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
