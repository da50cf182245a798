//! `adapter-mcp`: the tools of Model Context Protocol servers offered to the model through
//! the domain's `Toolbox` port.
//!
//! Each `[mcp_servers.NAME]` declaration ([`McpServerConfig`]) is a child process spoken to
//! over stdio or a streamable HTTP endpoint, reached with `rmcp`, the official Rust SDK.
//! [`McpToolbox`] starts every server once per process (lazily, or with
//! [`McpToolbox::start`]) and shares them between runs; each tool is offered as
//! `mcp__<server>__<tool>` with the server's JSON schema. A server that cannot start never
//! fails the process: its tools are absent and [`McpToolbox::status`] says why; a server that
//! crashes is started again once, on the next call.
//!
//! It must not depend on any other adapter, nor on the app.

mod config;
mod names;
mod output;
mod server;
mod status;
mod toolbox;

pub use config::{ConfigError, McpServerConfig, Transport};
pub use names::{exposed_name, MAX_TOOL_NAME};
pub use output::tool_output;
pub use server::{OfferedTool, StartError};
pub use status::{ServerState, ServerStatus};
pub use toolbox::McpToolbox;
