//! A task against an OpenAI-compatible endpoint (`OPENAI_BASE_URL`, `OPENAI_API_KEY`) with
//! the shell tools and the command line's defaults (sandbox, input protection, checkpoints,
//! checked answers), its database (and the runs' workspaces beside it) in a temporary
//! folder: 12 lines of code. `cargo xtask examples` runs it
//! against a local mock server (xtask/src/examples.rs).
//!
//! `OPENAI_BASE_URL=http://localhost:11434/v1 cargo run -p planwright-runner
//! --features openai,tools-shell,store-sqlite --example openai_shell`
#![allow(clippy::print_stdout)] // An example's output is its report.

use runner::prelude::*;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let db = Database::Sqlite(std::env::temp_dir().join("planwright-example/pw.db"));
    let planwright = Planwright::open(&db, RunSettings::default()).await?;
    let outcome = planwright
        .run("Write hello.txt with the text hi", None)
        .await?;
    println!("{:?}: {}", outcome.status, outcome.summary);
    match outcome.status {
        RunStatus::Completed => Ok(()),
        _ => Err("the run did not complete".into()),
    }
}
