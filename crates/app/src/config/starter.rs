//! `planwright config init`: a commented starter `./planwright.toml` listing every key with
//! its default, generated from the same keys as the parser.

use std::path::Path;

use super::keys::{Key, Kind};
use super::paths::PROJECT_FILE;
use super::show::toml_value;
use super::ConfigError;

/// The starter file's text: every key commented out.
pub fn text(keys: &[Key]) -> String {
    let mut out = String::from(
        "# Planwright settings for this project (docs/configuration.md).\n\
         # Precedence: flags > environment > profile > this file > ~/.config/planwright/config.toml\n\
         # > defaults. `planwright config show` prints what is in effect and why.\n\
         # Secrets never go here: name the variable that holds the key (api_key_env = \"MY_KEY\").\n",
    );
    for key in keys {
        out.push('\n');
        for line in wrap(&key.help(), 88) {
            out.push_str(&format!("# {line}\n"));
        }
        if key.kind == Kind::Choice {
            out.push_str(&format!("# One of: {}.\n", key.choices().join(", ")));
        }
        let default = key.default();
        if default.is_empty() && key.kind != Kind::List {
            out.push_str(&format!("# {} =\n", key.name));
        } else {
            out.push_str(&format!(
                "# {} = {}\n",
                key.name,
                toml_value(key.kind, &default)
            ));
        }
    }
    out.push_str(
        "\n# Profiles override the settings above when chosen with `--profile NAME`,\n\
         # PLANWRIGHT_PROFILE or `profile = \"NAME\"` at the top of this file.\n\
         # [profiles.fast]\n\
         # model = \"gpt-4o-mini\"\n\
         # max_steps = 8\n\
         \n\
         # MCP servers whose tools every run is offered, as mcp__NAME__TOOL (docs/mcp.md).\n\
         # [mcp_servers.fs]\n\
         # command = \"npx\"\n\
         # args = [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"/srv/shared\"]\n",
    );
    out
}

/// Writes the starter file in the working folder; refuses to replace one unless `force`.
/// Returns the path written.
pub fn write(keys: &[Key], force: bool) -> Result<String, ConfigError> {
    let path = Path::new(PROJECT_FILE);
    if path.exists() && !force {
        return Err(ConfigError::Exists {
            file: PROJECT_FILE.into(),
        });
    }
    std::fs::write(path, text(keys)).map_err(|e| ConfigError::Unwritable {
        file: PROJECT_FILE.into(),
        error: e.to_string(),
    })?;
    Ok(PROJECT_FILE.into())
}

/// `text` in lines of at most `width` characters (a longer word stays whole).
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.len() + 1 + word.len() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// Uncommenting every `key = value` line of the starter gives a file the parser takes.
    #[test]
    fn the_starter_file_uncommented_is_valid() {
        let keys = super::super::keys::keys(&crate::cli::Cli::command());
        let starter = text(&keys);
        let (settings, profile_example) = starter.split_once("# [profiles.fast]").unwrap();
        assert!(profile_example.contains("# max_steps = 8"));
        let (_, mcp_example) = profile_example.split_once("# [mcp_servers.fs]").unwrap();
        let uncommented_mcp: String = mcp_example
            .lines()
            .filter_map(|l| l.strip_prefix("# "))
            .map(|l| format!("{l}\n"))
            .collect();
        let file = super::super::file::parse(
            "starter",
            &format!("[mcp_servers.fs]\n{uncommented_mcp}"),
            &keys,
        )
        .unwrap();
        assert!(file.mcp_servers.contains_key("fs"));
        let uncommented: String = settings
            .lines()
            .filter_map(|l| l.strip_prefix("# "))
            .filter(|l| {
                l.split_once(" = ")
                    .is_some_and(|(k, _)| keys.iter().any(|key| key.name == k))
            })
            .map(|l| format!("{l}\n"))
            .collect();
        let file = super::super::file::parse("starter", &uncommented, &keys).unwrap();
        assert!(file.top.contains_key("max_steps"));
        assert!(file.top.contains_key("model"));
    }

    #[test]
    fn wraps_at_word_boundaries() {
        assert_eq!(wrap("aa bb cc", 5), ["aa bb", "cc"]);
    }
}
