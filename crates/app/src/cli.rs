//! Command-line arguments (clap derive).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Planwright: an LLM agent runtime that plans, acts with real tools, verifies and adapts.
#[derive(Debug, Parser)]
#[command(name = "planwright", version, about, long_about = None)]
pub struct Cli {
    /// SQLite file holding runs, plans and events.
    #[arg(
        long,
        global = true,
        env = "PLANWRIGHT_DB",
        default_value = "./.planwright/planwright.db"
    )]
    pub db: PathBuf,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Plan and execute a task, then print a summary.
    Run(RunArgs),
    /// Inspect stored runs.
    Runs {
        #[command(subcommand)]
        command: RunsCommand,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// One upfront plan through the `planning` tool, steps in order.
    Flow,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Planning style.
    #[arg(long, value_enum, default_value = "flow")]
    pub mode: ModeArg,

    /// Model name sent to the OpenAI-compatible endpoint.
    #[arg(long, env = "PLANWRIGHT_MODEL", default_value = "gpt-4o-mini")]
    pub model: String,

    /// Workspace folder for the run's files [default: ./.planwright/runs/<run_id>/workspace].
    #[arg(long)]
    pub workspace: Option<PathBuf>,

    /// Most LLM turns an executor may take for one plan step (OpenManus's max_steps).
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub max_steps: u32,

    /// Print one JSON object with the outcome on stdout instead of the summary text.
    #[arg(long)]
    pub json: bool,

    /// The task, in plain words.
    #[arg(required = true, num_args = 1.., value_name = "TASK")]
    pub task: Vec<String>,
}

#[derive(Debug, Subcommand)]
pub enum RunsCommand {
    /// List runs, newest first.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Show one run: plan with markers, step results, token usage.
    Show {
        run_id: String,
        #[arg(long)]
        json: bool,
    },
}
