//! `planwright mcp ...`: Planwright and the Model Context Protocol, both ways (docs/mcp.md):
//! the MCP servers of the config files, and Planwright as an MCP server.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::RunOptions;

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// The declared MCP servers ([mcp_servers.NAME]), their transport, and their state
    /// after trying to start each.
    List,
    /// Start one declared server and list its tools: exit 0 if it started, 1 (with why) if
    /// not, 2 if no server has that name.
    Check {
        /// The server's NAME in [mcp_servers.NAME].
        name: String,
    },
    /// Be an MCP server on stdin/stdout (JSON-RPC only on stdout, logs on stderr): an agent
    /// such as Claude Code, Codex or Cursor hands tasks to Planwright with the tools
    /// run_task, get_run, list_runs, cancel_run, answer, approve_call, run_diff, undo_run,
    /// and reads the runs' files as resources. `planwright serve` offers the same at `/mcp`.
    Serve(Box<McpServeArgs>),
}

/// `planwright mcp serve`: `serve`'s runner and options, without the HTTP listener.
#[derive(Debug, Args)]
pub struct McpServeArgs {
    /// Runs executed at once; further runs wait in the durable queue. 0: runs are only
    /// queued, `planwright worker` processes run them [default: 4 with a SQLite file, 0
    /// with PostgreSQL].
    #[arg(long = "workers", value_parser = clap::value_parser!(u32).range(0..=1024))]
    pub workers: Option<u32>,

    /// Seconds a run waits for the answer to `message_ask_user` (the `answer` tool) before
    /// the question fails; while it waits, its slot is free for another run.
    #[arg(long, default_value_t = 3600, value_parser = clap::value_parser!(u32).range(1..=604_800))]
    pub ask_timeout_secs: u32,

    /// Folder of the runs' workspaces (`<root>/<run_id>/workspace`), as for `serve` (the
    /// same default).
    #[arg(long, env = "PLANWRIGHT_WORKSPACE_ROOT")]
    pub workspace_root: Option<PathBuf>,

    /// Defaults of the runs (a call may choose the mode).
    #[command(flatten)]
    pub opts: RunOptions,
}
