//! The config files' MCP servers (`[mcp_servers.NAME]`, docs/mcp.md) on the command line:
//! declared to the runner once the files are read (its `runner::mcp` offers their tools to
//! every run), and what `planwright mcp list`, `planwright mcp check NAME` and `planwright
//! tools list` say of them.

mod commands;

pub use commands::{check, list, tools_lines};

use crate::config::Layers;
use crate::error::AppError;

/// Takes the files' declarations for the process (once, before any run is built); starts
/// nothing.
pub fn declare(layers: &Layers) -> Result<(), AppError> {
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
    runner::mcp::declare(declarations)?;
    Ok(())
}
