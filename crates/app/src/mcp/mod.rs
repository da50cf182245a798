//! The MCP servers of the config files (`[mcp_servers.NAME]`, docs/mcp.md) as the executor's
//! tools: one `adapter_mcp::McpToolbox` per process, built when the files are read and
//! shared by every run (`serve` and `worker` run many), offered after the built-in tools
//! (`domain::tools::combined`: a built-in name wins). A server that is missing, exits or
//! hangs never stops a run from starting: its tools are absent and `tools list`,
//! `mcp list` and `mcp check` say why.

mod commands;
mod servers;

pub use commands::{check, list, tools_lines};
pub use servers::{declare, executor_toolbox};
