//! The subcommands that run or inspect runs (`run`, `resume`, `tools list`, `runs`): each
//! reads its clap arguments, asks the runner (`runner`) and prints through the output layer
//! (`report`, `view`, `jsonl`).

pub mod run;
pub mod run_changes;
pub mod runs;
pub mod tools;
