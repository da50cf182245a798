//! The MCP servers of the config files (`[mcp_servers.NAME]`, docs/mcp.md) as the executor's
//! tools: [`McpServers`], the declared servers and (with the `mcp` feature) one
//! `adapter_mcp::McpToolbox` over them, built by the front end that read the files and
//! carried in the run settings (`RunSettings::mcp_servers`), so every run built from those
//! settings shares it (`serve` and `worker` run many) and two embedders in one process keep
//! their own. Their tools are offered after the built-in ones (`domain::tools::combined`: a
//! built-in name wins). A server that is missing, exits or hangs never stops a run from
//! starting: its tools are absent.

use std::sync::Arc;

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

/// The declared servers and, with the `mcp` feature, the one toolbox over them; cloning
/// shares it. The default declares none.
#[derive(Clone, Default)]
pub struct McpServers {
    inner: Arc<Servers>,
}

#[derive(Default)]
struct Servers {
    declarations: Vec<Declaration>,
    #[cfg(feature = "mcp")]
    toolbox: Option<adapter_mcp::McpToolbox>,
}

impl std::fmt::Debug for McpServers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self
            .inner
            .declarations
            .iter()
            .map(|d| d.name.as_str())
            .collect();
        f.debug_struct("McpServers").field("names", &names).finish()
    }
}

impl McpServers {
    /// The servers of the files' `declarations`; starts nothing.
    pub fn declare(declarations: Vec<Declaration>) -> Result<McpServers, RunnerError> {
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
                "{}:{} declares the MCP server `{}`, but this planwright was built without \
                 MCP (the `mcp` feature): its tools are not offered",
                first.file,
                first.line,
                first.name
            );
        }
        Ok(McpServers {
            inner: Arc::new(Servers {
                declarations,
                #[cfg(feature = "mcp")]
                toolbox,
            }),
        })
    }

    /// The declared servers, in the files' order.
    pub fn declarations(&self) -> &[Declaration] {
        &self.inner.declarations
    }

    /// The toolbox over them, when any is declared.
    #[cfg(feature = "mcp")]
    pub fn toolbox(&self) -> Option<&adapter_mcp::McpToolbox> {
        self.inner.toolbox.as_ref()
    }
}

/// The executor's toolbox: the built-in tools, then the MCP servers' (when any is declared)
/// but those `disabled` names (`--disabled-tools` patterns; the built-in set is already
/// without them).
pub fn executor_toolbox(
    builtin: ToolSet,
    disabled: &[String],
    servers: &McpServers,
) -> Arc<dyn Toolbox> {
    #[cfg(feature = "mcp")]
    if let Some(mcp) = servers.toolbox() {
        let combined = domain::tools::combined::CombinedToolbox::new()
            .then("the built-in tools", Arc::new(builtin))
            .then("an MCP server", Arc::new(mcp.clone()))
            .without(disabled);
        return Arc::new(combined);
    }
    let _ = (disabled, servers);
    Arc::new(builtin)
}
