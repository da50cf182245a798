//! `planwright mcp`: the MCP servers of the config files (docs/mcp.md).

use clap::Subcommand;

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
}
