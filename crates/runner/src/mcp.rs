//! The MCP servers of the config files (`[mcp_servers.NAME]`, docs/mcp.md) as the executor's
//! tools: one `adapter_mcp::McpToolbox` per process, built when the files are read and
//! shared by every run (`serve` and `worker` run many), offered after the built-in tools
//! (`domain::tools::combined`: a built-in name wins). A server that is missing, exits or
//! hangs never stops a run from starting: its tools are absent.
//!
//! What this process knows of MCP: the declared servers and, with the `mcp` feature, the one
//! `McpToolbox` over them, set once ([`declare`]) by the front end that read the files.

use std::sync::{Arc, OnceLock};

use domain::ports::Toolbox;
use domain::tools::builtin::ToolSet;

use crate::RunnerError;

/// A declared server and the file declaring it.
#[derive(Debug, Clone)]
pub struct Declaration {
    pub name: String,
    /// The file declaring it, as shown to users.
    pub file: String,
    /// Its line in that file.
    pub line: usize,
    /// The checked declaration (`mcp` feature only: without it the table is only read).
    #[cfg(feature = "mcp")]
    pub config: adapter_mcp::McpServerConfig,
}

/// What this process knows of MCP: the declarations and, with the `mcp` feature, the one
/// toolbox over them.
struct Servers {
    declarations: Vec<Declaration>,
    #[cfg(feature = "mcp")]
    toolbox: Option<adapter_mcp::McpToolbox>,
}

static SERVERS: OnceLock<Servers> = OnceLock::new();

/// Takes the files' declarations for the process (once, before any run is built); starts
/// nothing.
pub fn declare(declarations: Vec<Declaration>) -> Result<(), RunnerError> {
    #[cfg(feature = "mcp")]
    let toolbox = if declarations.is_empty() {
        None
    } else {
        let servers = declarations
            .iter()
            .map(|d| (d.name.clone(), d.config.clone()));
        Some(
            adapter_mcp::McpToolbox::new(servers)
                .map_err(|e| RunnerError::Config(e.to_string()))?,
        )
    };
    #[cfg(not(feature = "mcp"))]
    if let Some(first) = declarations.first() {
        tracing::warn!(
            "{}:{} declares the MCP server `{}`, but this planwright was built without MCP \
             (the `mcp` feature): its tools are not offered",
            first.file,
            first.line,
            first.name
        );
    }
    let _ = SERVERS.set(Servers {
        declarations,
        #[cfg(feature = "mcp")]
        toolbox,
    });
    Ok(())
}

/// The declared servers, by name.
pub fn declarations() -> &'static [Declaration] {
    SERVERS.get().map_or(&[], |s| s.declarations.as_slice())
}

/// The process's MCP toolbox, when servers are declared.
#[cfg(feature = "mcp")]
pub fn toolbox() -> Option<&'static adapter_mcp::McpToolbox> {
    SERVERS.get().and_then(|s| s.toolbox.as_ref())
}

/// The executor's toolbox: the built-in tools, then the MCP servers' (when any is declared)
/// but those `disabled` names (`--disabled-tools` patterns; the built-in set is already
/// without them).
pub fn executor_toolbox(builtin: ToolSet, disabled: &[String]) -> Arc<dyn Toolbox> {
    #[cfg(feature = "mcp")]
    if let Some(mcp) = toolbox() {
        let combined = domain::tools::combined::CombinedToolbox::new()
            .then("the built-in tools", Arc::new(builtin))
            .then("an MCP server", Arc::new(mcp.clone()))
            .without(disabled);
        return Arc::new(combined);
    }
    let _ = disabled;
    Arc::new(builtin)
}
