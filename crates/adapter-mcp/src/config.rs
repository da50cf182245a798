//! What one MCP server is: the `[mcp_servers.NAME]` table of the planned config, as a plain
//! serde struct, and the transport it resolves to.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;
use thiserror::Error;

/// One `[mcp_servers.NAME]` table: a child process spoken to over stdio (`command`), or a
/// streamable HTTP endpoint (`url`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    /// Program to start (stdio transport).
    #[serde(default)]
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables set for `command`, on top of the few it inherits (`PATH`, `HOME`, locale,
    /// user; `server/environment.rs`): no other variable of Planwright's reaches it.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Working directory of `command`.
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// Streamable HTTP endpoint.
    #[serde(default)]
    pub url: Option<String>,
    /// Environment variable holding the bearer token sent to `url`.
    #[serde(default)]
    pub bearer_token_env: Option<String>,
    /// When set, only these tools (MCP names) are offered.
    #[serde(default)]
    pub enabled_tools: Option<Vec<String>>,
    /// Tools (MCP names) never offered.
    #[serde(default)]
    pub disabled_tools: Vec<String>,
    #[serde(default = "default_startup_timeout_secs")]
    pub startup_timeout_secs: u64,
    #[serde(default = "default_tool_timeout_secs")]
    pub tool_timeout_secs: u64,
}

fn default_startup_timeout_secs() -> u64 {
    10
}

fn default_tool_timeout_secs() -> u64 {
    60
}

/// How the client reaches a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
    },
    Http {
        url: String,
        bearer_token_env: Option<String>,
    },
}

/// A server declaration that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConfigError {
    #[error("MCP server `{server}`: set `command` (stdio) or `url` (streamable HTTP)")]
    NoTransport { server: String },
    #[error("MCP server `{server}`: set `command` or `url`, not both")]
    BothTransports { server: String },
    #[error("MCP server `{server}`: `{key}` applies to `command` servers only")]
    StdioKeyWithUrl { server: String, key: &'static str },
    #[error("MCP server `{server}`: `bearer_token_env` applies to `url` servers only")]
    TokenWithCommand { server: String },
    #[error("MCP server name `{server}`: use letters, digits, `_` and `-` only")]
    InvalidName { server: String },
}

impl McpServerConfig {
    /// A stdio server running `command args...`, with the default timeouts.
    pub fn stdio(command: impl Into<String>, args: &[&str]) -> McpServerConfig {
        McpServerConfig {
            command: Some(command.into()),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            ..McpServerConfig::empty()
        }
    }

    /// A streamable HTTP server at `url`, with the default timeouts.
    pub fn http(url: impl Into<String>) -> McpServerConfig {
        McpServerConfig {
            url: Some(url.into()),
            ..McpServerConfig::empty()
        }
    }

    fn empty() -> McpServerConfig {
        McpServerConfig {
            command: None,
            args: Vec::new(),
            env: BTreeMap::new(),
            cwd: None,
            url: None,
            bearer_token_env: None,
            enabled_tools: None,
            disabled_tools: Vec::new(),
            startup_timeout_secs: default_startup_timeout_secs(),
            tool_timeout_secs: default_tool_timeout_secs(),
        }
    }

    /// The transport this declaration names; `server` is its `NAME`, for the error.
    pub fn transport(&self, server: &str) -> Result<Transport, ConfigError> {
        let server = server.to_owned();
        let valid_name = !server.is_empty()
            && server
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid_name {
            return Err(ConfigError::InvalidName { server });
        }
        match (&self.command, &self.url) {
            (None, None) => Err(ConfigError::NoTransport { server }),
            (Some(_), Some(_)) => Err(ConfigError::BothTransports { server }),
            (Some(command), None) => {
                if self.bearer_token_env.is_some() {
                    return Err(ConfigError::TokenWithCommand { server });
                }
                Ok(Transport::Stdio {
                    command: command.clone(),
                    args: self.args.clone(),
                    env: self.env.clone(),
                    cwd: self.cwd.clone(),
                })
            }
            (None, Some(url)) => {
                let stdio_key = [
                    ("args", !self.args.is_empty()),
                    ("env", !self.env.is_empty()),
                    ("cwd", self.cwd.is_some()),
                ]
                .into_iter()
                .find(|(_, set)| *set);
                if let Some((key, _)) = stdio_key {
                    return Err(ConfigError::StdioKeyWithUrl { server, key });
                }
                Ok(Transport::Http {
                    url: url.clone(),
                    bearer_token_env: self.bearer_token_env.clone(),
                })
            }
        }
    }

    /// Whether the MCP tool `tool` is offered (`enabled_tools`, then `disabled_tools`).
    pub fn offers(&self, tool: &str) -> bool {
        let enabled = self
            .enabled_tools
            .as_ref()
            .is_none_or(|names| names.iter().any(|n| n == tool));
        enabled && !self.disabled_tools.iter().any(|n| n == tool)
    }

    pub fn startup_timeout(&self) -> Duration {
        Duration::from_secs(self.startup_timeout_secs)
    }

    pub fn tool_timeout(&self) -> Duration {
        Duration::from_secs(self.tool_timeout_secs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> McpServerConfig {
        serde_json::from_str(json).expect("valid declaration")
    }

    #[test]
    fn defaults_apply() {
        let config = parse(r#"{"command": "mcp-server-x"}"#);
        assert_eq!(config.startup_timeout(), Duration::from_secs(10));
        assert_eq!(config.tool_timeout(), Duration::from_secs(60));
        assert!(matches!(
            config.transport("x"),
            Ok(Transport::Stdio { command, .. }) if command == "mcp-server-x"
        ));
    }

    #[test]
    fn neither_command_nor_url_is_a_typed_error() {
        let config = parse(r#"{"args": ["a"]}"#);
        assert_eq!(
            config.transport("x"),
            Err(ConfigError::NoTransport { server: "x".into() })
        );
    }

    #[test]
    fn both_and_misplaced_keys_are_refused() {
        let both = parse(r#"{"command": "a", "url": "http://h/mcp"}"#);
        assert!(matches!(
            both.transport("x"),
            Err(ConfigError::BothTransports { .. })
        ));
        let env_on_url = parse(r#"{"url": "http://h/mcp", "env": {"A": "1"}}"#);
        assert!(matches!(
            env_on_url.transport("x"),
            Err(ConfigError::StdioKeyWithUrl { key: "env", .. })
        ));
        let token_on_command = parse(r#"{"command": "a", "bearer_token_env": "T"}"#);
        assert!(matches!(
            token_on_command.transport("x"),
            Err(ConfigError::TokenWithCommand { .. })
        ));
        assert!(matches!(
            McpServerConfig::stdio("a", &[]).transport("bad name"),
            Err(ConfigError::InvalidName { .. })
        ));
    }

    #[test]
    fn unknown_keys_are_refused() {
        assert!(serde_json::from_str::<McpServerConfig>(r#"{"comand": "a"}"#).is_err());
    }

    #[test]
    fn enabled_then_disabled_tools_filter() {
        let config = parse(
            r#"{"command": "a", "enabled_tools": ["read", "write"], "disabled_tools": ["write"]}"#,
        );
        assert!(config.offers("read"));
        assert!(!config.offers("write"));
        assert!(!config.offers("list"));
        assert!(parse(r#"{"command": "a"}"#).offers("anything"));
    }
}
