//! The config files' MCP servers (`[mcp_servers.NAME]`, docs/mcp.md) on the command line:
//! declared once the files are read (`runner::mcp::McpServers`, carried in the run
//! settings, whose runs are offered their tools), and what `planwright mcp list`, `planwright mcp check NAME` and `planwright
//! tools list` say of them.

mod commands;

pub use commands::{check, list, tools_lines};

use crate::config::Layers;
use crate::error::AppError;

/// The files' declared servers; starts nothing.
pub fn declare(layers: &Layers) -> Result<runner::mcp::McpServers, AppError> {
    let declarations = layers
        .mcp_servers()
        .into_iter()
        .map(|(name, (declared, file))| runner::mcp::Declaration {
            name,
            file,
            line: declared.line,
            #[cfg(feature = "mcp")]
            config: declared.config,
        })
        .collect();
    Ok(runner::mcp::McpServers::declare(declarations)?)
}
