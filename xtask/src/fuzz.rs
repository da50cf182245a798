//! `cargo xtask fuzz [--cases N]`: the property tests named `fuzz_*` (parsers and builders
//! that take what models and clients send: the SSE assembler, the text tool protocol, the
//! planning tool's arguments, the schema-to-grammar builder, the cassette reader, the HTTP
//! request bodies) with many more cases than CI's default 256 (unit tests and the `fuzz`
//! integration tests only, in the test profile CI has already built). A failing
//! case is shrunk and saved by proptest under the crate's `proptest-regressions/`: commit
//! that file and it is replayed first on every run, CI included.
//!
//! `cargo xtask fuzz --coverage [--seconds N]`: the coverage-guided cargo-fuzz targets in
//! `fuzz/` (libFuzzer with AddressSanitizer, nightly toolchain; `cargo install cargo-fuzz`)
//! for N seconds each (default 60). A crash leaves its input under `fuzz/artifacts/<target>/`;
//! turn it into a regression test beside the target's property test.

use std::process::Command;
use std::time::Instant;

use crate::{report, TaskError};

const DEFAULT_CASES: u64 = 20_000;

/// The cargo-fuzz targets of `fuzz/Cargo.toml`.
const TARGETS: [&str; 4] = ["sse", "text_tools", "planning_args", "cassette"];
const DEFAULT_SECONDS: u64 = 60;

pub(crate) fn fuzz(args: &[String]) -> Result<(), TaskError> {
    if args.first().is_some_and(|a| a == "--coverage") {
        return coverage(&args[1..]);
    }
    let cases = match args {
        [] => DEFAULT_CASES,
        [flag, n] if flag == "--cases" => {
            n.parse::<u64>().ok().filter(|n| *n > 0).ok_or_else(|| {
                TaskError::Input(format!("--cases takes a positive number, not '{n}'"))
            })?
        }
        other => {
            return Err(TaskError::Input(format!(
                "usage: cargo xtask fuzz [--cases N] (got: {})",
                other.join(" ")
            )))
        }
    };
    let cargo = crate::cargo_program();
    report(&format!(
        "$ PROPTEST_CASES={cases} cargo test --workspace --lib --bins --test fuzz fuzz_"
    ));
    let started = Instant::now();
    let status = Command::new(&cargo)
        .args([
            "test",
            "--workspace",
            "--lib",
            "--bins",
            "--test",
            "fuzz",
            "fuzz_",
        ])
        .env("PROPTEST_CASES", cases.to_string())
        .status()
        .map_err(|e| TaskError::Failed(format!("cannot start cargo: {e}")))?;
    report(&format!(
        "fuzz: {cases} cases per property, {} s",
        started.elapsed().as_secs()
    ));
    if status.success() {
        Ok(())
    } else {
        Err(TaskError::Failed(
            "a property failed; its shrunk case is saved under proptest-regressions/".into(),
        ))
    }
}

/// Each cargo-fuzz target for the given seconds; the first crash stops the task.
fn coverage(args: &[String]) -> Result<(), TaskError> {
    let seconds = match args {
        [] => DEFAULT_SECONDS,
        [flag, n] if flag == "--seconds" => {
            n.parse::<u64>().ok().filter(|n| *n > 0).ok_or_else(|| {
                TaskError::Input(format!("--seconds takes a positive number, not '{n}'"))
            })?
        }
        other => {
            return Err(TaskError::Input(format!(
                "usage: cargo xtask fuzz --coverage [--seconds N] (got: {})",
                other.join(" ")
            )))
        }
    };
    let fuzz_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz");
    let cargo_fuzz = |args: &[&str]| {
        report(&format!("$ cargo +nightly fuzz {}", args.join(" ")));
        Command::new("cargo")
            .arg("+nightly")
            .arg("fuzz")
            .args(args)
            .current_dir(&fuzz_dir)
            .status()
            .map_err(|e| TaskError::Failed(format!("cannot start cargo fuzz: {e}")))
    };
    if !cargo_fuzz(&["build"])?.success() {
        return Err(TaskError::Failed(
            "cargo +nightly fuzz build failed (needs the nightly toolchain and `cargo install cargo-fuzz`)".into(),
        ));
    }
    let limit = format!("-max_total_time={seconds}");
    for target in TARGETS {
        let started = Instant::now();
        if !cargo_fuzz(&["run", target, "--", &limit])?.success() {
            return Err(TaskError::Failed(format!(
                "target {target} crashed; its input is under fuzz/artifacts/{target}/"
            )));
        }
        report(&format!(
            "fuzz: {target}: no crash in {} s",
            started.elapsed().as_secs()
        ));
    }
    Ok(())
}
