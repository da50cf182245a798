//! The `[mcp_servers.NAME]` tables of a config file (docs/mcp.md): the MCP servers whose
//! tools a run is offered. Only at a file's top level (not in profiles); a project file's
//! server replaces the user file's server of the same name. Each table is checked here, so
//! that a mistake stops the command with one line naming the file's line.

use std::collections::BTreeMap;

use toml::de::DeValue;
use toml::Spanned;

use super::toml_table::entries;
pub use super::toml_table::Problem;

/// The keys of a `[mcp_servers.NAME]` table (`adapter_mcp::McpServerConfig`'s fields).
pub const SERVER_KEYS: [&str; 10] = [
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "bearer_token_env",
    "enabled_tools",
    "disabled_tools",
    "startup_timeout_secs",
    "tool_timeout_secs",
];

/// The keys of a server that run a program or send a secret: pinned by `planwright trust`
/// (docs/security.md, "Project configuration and trust").
pub const PINNED_SERVER_KEYS: [&str; 6] =
    ["command", "args", "env", "cwd", "url", "bearer_token_env"];

/// One declared server.
#[derive(Debug, Clone, PartialEq)]
pub struct Declared {
    /// Its line in the file.
    pub line: usize,
    /// Its [`PINNED_SERVER_KEYS`] as one line of TOML, in that order: what trust pins.
    pub pinned: String,
    /// The checked declaration (`mcp` feature only: without it the table is only read).
    #[cfg(feature = "mcp")]
    pub config: adapter_mcp::McpServerConfig,
}

/// The declared servers by name.
pub type Servers = BTreeMap<String, Declared>;

/// Reads the value of `mcp_servers` (a table of `[mcp_servers.NAME]` tables).
/// `line`: a byte offset's line in the file.
pub fn parse(
    value: &Spanned<DeValue<'_>>,
    line: impl Fn(usize) -> usize,
) -> Result<Servers, Problem> {
    let DeValue::Table(servers) = value.get_ref() else {
        return Err(Problem {
            span: value.span(),
            text: "mcp_servers must hold [mcp_servers.NAME] tables".into(),
        });
    };
    let mut declared = Servers::new();
    for (name, table) in entries(servers) {
        let name_str = name.get_ref().as_ref();
        let DeValue::Table(keys) = table.get_ref() else {
            return Err(Problem {
                span: table.span(),
                text: format!("mcp_servers.{name_str} must be a table"),
            });
        };
        for (key, _) in entries(keys) {
            let key_str = key.get_ref().as_ref();
            if !SERVER_KEYS.contains(&key_str) {
                return Err(Problem {
                    span: key.span(),
                    text: unknown(name_str, key_str),
                });
            }
        }
        let pinned = PINNED_SERVER_KEYS
            .iter()
            .filter_map(|k| {
                let (_, value) = entries(keys).into_iter().find(|(n, _)| n.get_ref() == k)?;
                Some(format!("{k} = {}", render(value.get_ref())))
            })
            .collect::<Vec<_>>()
            .join(", ");
        let entry = Declared {
            line: line(name.span().start),
            pinned,
            #[cfg(feature = "mcp")]
            config: typed(name_str, table)?,
        };
        declared.insert(name_str.to_string(), entry);
    }
    Ok(declared)
}

/// The table as the adapter's declaration, its transport checked.
#[cfg(feature = "mcp")]
fn typed(
    name: &str,
    table: &Spanned<DeValue<'_>>,
) -> Result<adapter_mcp::McpServerConfig, Problem> {
    use serde::de::{Deserialize, IntoDeserializer};
    let config = adapter_mcp::McpServerConfig::deserialize(table.clone().into_deserializer())
        .map_err(|e| Problem {
            span: e.span().unwrap_or_else(|| table.span()),
            text: format!("mcp_servers.{name}: {}", e.message().trim_end()),
        })?;
    config.transport(name).map_err(|e| Problem {
        span: table.span(),
        text: e.to_string(),
    })?;
    Ok(config)
}

/// A TOML value as one line of TOML (strings quoted and escaped as JSON, which TOML reads).
fn render(value: &DeValue<'_>) -> String {
    match value {
        DeValue::String(s) => serde_json::Value::from(s.as_ref()).to_string(),
        DeValue::Integer(i) => i.to_string(),
        DeValue::Float(f) => f.to_string(),
        DeValue::Boolean(b) => b.to_string(),
        DeValue::Datetime(d) => d.to_string(),
        DeValue::Array(items) => {
            let items: Vec<String> = items.iter().map(|i| render(i.get_ref())).collect();
            format!("[{}]", items.join(", "))
        }
        DeValue::Table(table) => {
            let items: Vec<String> = entries(table)
                .into_iter()
                .map(|(k, v)| {
                    let key = serde_json::Value::from(k.get_ref().as_ref()).to_string();
                    format!("{key} = {}", render(v.get_ref()))
                })
                .collect();
            format!("{{ {} }}", items.join(", "))
        }
    }
}

fn unknown(server: &str, key: &str) -> String {
    let nearest = SERVER_KEYS
        .iter()
        .map(|c| (strsim::jaro_winkler(key, c), *c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match nearest {
        Some((_, near)) => {
            format!("unknown key \"{key}\" in mcp_servers.{server} (did you mean \"{near}\"?)")
        }
        None => format!(
            "unknown key \"{key}\" in mcp_servers.{server} (known: {})",
            SERVER_KEYS.join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    /// Every key listed here is a field of the adapter's declaration.
    #[cfg(feature = "mcp")]
    #[test]
    fn the_keys_are_the_adapters_fields() {
        use serde::de::{Deserialize, IntoDeserializer};
        for key in super::SERVER_KEYS {
            let value = match key {
                "args" | "enabled_tools" | "disabled_tools" => "[]",
                "env" => "{}",
                "startup_timeout_secs" | "tool_timeout_secs" => "1",
                _ => "\"x\"",
            };
            let text = format!("{key} = {value}\n");
            let table = toml::de::DeTable::parse(&text).unwrap();
            let parsed = adapter_mcp::McpServerConfig::deserialize(table.into_deserializer());
            assert!(parsed.is_ok(), "{key}: {:?}", parsed.err());
        }
    }
}
