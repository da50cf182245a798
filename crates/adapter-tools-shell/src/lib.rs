//! # adapter-tools-shell
//!
//! Shell and file tools for Planwright agents, all confined to the run's workspace folder
//! ([`domain::ports::ToolContext::workspace`]). It implements the domain port
//! [`domain::ports::Tool`]; `domain` must not depend on this crate (the app wires it in).
//!
//! | tool | arguments | idempotent |
//! |------|-----------|------------|
//! | `shell_exec` | `command`, `timeout_secs?` | no |
//! | `file_read` | `path`, `start_line?`, `end_line?` | yes |
//! | `file_write` | `path`, `content`, `append?` | no |
//! | `file_str_replace` | `path`, `old`, `new` | no |
//! | `file_list` | `path?` | yes |
//!
//! Every path argument goes through [`workspace::resolve`], which refuses anything that
//! leaves the workspace (`..`, foreign absolute paths, symbolic links pointing outside).
//! `shell_exec` runs `bash -c` in the workspace, in its own process group, with secrets
//! removed from the environment, bounded output and a timeout that kills the whole group.
//!
//! Use [`shell_tools`] (or [`shell_tools_with`]) to get all five tools.

use std::sync::Arc;
use std::time::Duration;

use domain::ports::Tool;

mod args;
mod capture;
mod env;
mod files;
mod process;
mod shell;
pub mod workspace;

pub use files::{FileListArgs, FileReadArgs, FileStrReplaceArgs, FileWriteArgs};
pub use files::{FileListTool, FileReadTool, FileStrReplaceTool, FileWriteTool};
pub use shell::{ShellExecArgs, ShellExecTool};

/// Name of the shell tool.
pub const SHELL_EXEC: &str = "shell_exec";
/// Name of the file reading tool.
pub const FILE_READ: &str = "file_read";
/// Name of the file writing tool.
pub const FILE_WRITE: &str = "file_write";
/// Name of the exact-text replacement tool.
pub const FILE_STR_REPLACE: &str = "file_str_replace";
/// Name of the directory listing tool.
pub const FILE_LIST: &str = "file_list";

/// Limits of the tools built by [`shell_tools_with`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellToolsConfig {
    /// `shell_exec` timeout when the call gives no `timeout_secs` (default 60 s).
    pub default_timeout: Duration,
    /// Largest timeout a call may ask for; larger requests are capped (default 600 s).
    pub max_timeout: Duration,
    /// Bytes kept per output stream of `shell_exec`: the first half and the last half
    /// (default 64 KiB).
    pub max_output_bytes: usize,
    /// Largest output of one `file_read` call (default 256 KiB).
    pub max_read_bytes: usize,
    /// How deep `file_list` descends (default 3: entries, their children, grandchildren).
    pub max_list_depth: usize,
    /// Most entries one `file_list` call shows (default 500).
    pub max_list_entries: usize,
}

impl Default for ShellToolsConfig {
    fn default() -> Self {
        ShellToolsConfig {
            default_timeout: shell::DEFAULT_TIMEOUT,
            max_timeout: shell::MAX_TIMEOUT,
            max_output_bytes: shell::DEFAULT_MAX_OUTPUT_BYTES,
            max_read_bytes: files::DEFAULT_MAX_READ_BYTES,
            max_list_depth: files::DEFAULT_LIST_DEPTH,
            max_list_entries: files::DEFAULT_LIST_ENTRIES,
        }
    }
}

/// All five tools with default limits.
pub fn shell_tools() -> Vec<Arc<dyn Tool>> {
    shell_tools_with(&ShellToolsConfig::default())
}

/// All five tools with the given limits.
pub fn shell_tools_with(config: &ShellToolsConfig) -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(
            ShellExecTool::new(config.default_timeout)
                .with_max_timeout(config.max_timeout)
                .with_max_output_bytes(config.max_output_bytes),
        ),
        Arc::new(FileReadTool::new().with_max_bytes(config.max_read_bytes)),
        Arc::new(FileWriteTool::new()),
        Arc::new(FileStrReplaceTool::new()),
        Arc::new(FileListTool::new().with_limits(config.max_list_depth, config.max_list_entries)),
    ]
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn all_five_tools_with_unique_names_and_object_schemas() {
        let tools = shell_tools();
        let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
        assert_eq!(
            names,
            [
                SHELL_EXEC,
                FILE_READ,
                FILE_WRITE,
                FILE_STR_REPLACE,
                FILE_LIST
            ]
        );
        for tool in &tools {
            let schema = tool.parameters();
            assert_eq!(schema["type"], "object", "{}", tool.name());
            assert!(schema["properties"].is_object(), "{}", tool.name());
            assert!(schema.get("$schema").is_none());
            assert!(schema.get("title").is_none());
            assert!(tool.description().len() > 40);
        }
        let idempotent: Vec<&str> = tools
            .iter()
            .filter(|t| t.idempotent())
            .map(|t| t.name())
            .collect();
        assert_eq!(idempotent, [FILE_READ, FILE_LIST]);
    }

    #[test]
    fn schemas_carry_the_contract() {
        let tools = shell_tools();
        let shell = tools[0].parameters();
        assert_eq!(shell["required"], serde_json::json!(["command"]));
        assert_eq!(shell["properties"]["timeout_secs"]["type"], "integer");
        assert_eq!(shell["properties"]["timeout_secs"]["minimum"], 1);
        let read = tools[1].parameters();
        assert_eq!(read["required"], serde_json::json!(["path"]));
        assert_eq!(read["properties"]["start_line"]["minimum"], 1);
        let write = tools[2].parameters();
        assert_eq!(write["required"], serde_json::json!(["path", "content"]));
        assert_eq!(write["properties"]["append"]["type"], "boolean");
        let replace = tools[3].parameters();
        assert_eq!(
            replace["required"],
            serde_json::json!(["path", "old", "new"])
        );
        let list = tools[4].parameters();
        assert!(list.get("required").is_none());
        assert_eq!(list["properties"]["path"]["type"], "string");
    }
}
