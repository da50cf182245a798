//! `cargo xtask fuzz [--cases N]`: the property tests named `fuzz_*` (parsers and builders
//! that take what models and clients send: the SSE assembler, the text tool protocol, the
//! planning tool's arguments, the schema-to-grammar builder, the cassette reader, the HTTP
//! request bodies) with many more cases than CI's default 256 (unit tests and the `fuzz`
//! integration tests only, in the test profile CI has already built). A failing
//! case is shrunk and saved by proptest under the crate's `proptest-regressions/`: commit
//! that file and it is replayed first on every run, CI included.

use std::process::Command;
use std::time::Instant;

use crate::{report, TaskError};

const DEFAULT_CASES: u64 = 20_000;

pub(crate) fn fuzz(args: &[String]) -> Result<(), TaskError> {
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
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
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
