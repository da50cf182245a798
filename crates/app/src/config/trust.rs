//! Trust in a project folder (docs/security.md, "Project configuration and trust"). A
//! folder's `planwright.toml` (and its `.planwright/` state, see `runner::state_folder`) is
//! read only once the user trusts the folder: `planwright trust [PATH]`, `--trust-project`
//! for one run, or a question on first use when stdin and stderr are a terminal. Trusted
//! folders are recorded in the user's config file as `[trusted_projects."PATH"]` tables.
//!
//! On top of that, the values of a project file that run a program or send a secret
//! ([`PINNED_KEYS`], each MCP server's [`PINNED_SERVER_KEYS`] and `[providers.anthropic]`'s
//! `base_url` and `api_key_env`) are pinned: their digests
//! are recorded with the folder, and a new or changed one is refused (asked in a terminal)
//! until `planwright trust` has shown and recorded it.

use std::collections::BTreeMap;
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::error::ConfigError;
use super::file::{self, ConfigFile, Pins};
use super::keys::Key;
#[cfg(doc)]
use super::mcp_servers::PINNED_SERVER_KEYS;
use super::paths::{user_file, PROJECT_FILE};

/// The settings of a project file that run a program or send a secret somewhere.
pub const PINNED_KEYS: [&str; 5] = [
    "base_url",
    "api_key_env",
    "shell_env",
    "chromium",
    "ca_certs",
];

/// One pinned value of a project file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pinned {
    /// `base_url`, `profiles.NAME.base_url` or `mcp_servers.NAME`.
    pub label: String,
    /// The value in full, as TOML.
    pub shown: String,
}

impl Pinned {
    /// The digest recorded for it: `sha256:` and the hex of label and value.
    pub fn digest(&self) -> String {
        let mut hash = Sha256::new();
        hash.update(self.label.as_bytes());
        hash.update([0]);
        hash.update(self.shown.as_bytes());
        let hex: String = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
        format!("sha256:{hex}")
    }
}

/// The pinned values a file sets, in a stable order.
pub fn pinned(file: &ConfigFile, keys: &[Key]) -> Vec<Pinned> {
    let mut out = Vec::new();
    let mut settings = |prefix: &str, settings: &file::Settings| {
        for name in PINNED_KEYS {
            let (Some(entry), Some(key)) =
                (settings.get(name), keys.iter().find(|k| k.name == name))
            else {
                continue;
            };
            let label = format!("{prefix}{name}");
            let value = super::show::toml_value(key.kind, &entry.values);
            out.push(Pinned {
                shown: format!("{label} = {value}"),
                label,
            });
        }
    };
    settings("", &file.top);
    for (profile, values) in &file.profiles {
        settings(&format!("profiles.{profile}."), values);
    }
    for (name, server) in &file.mcp_servers {
        out.push(Pinned {
            label: format!("mcp_servers.{name}"),
            shown: format!("[mcp_servers.{name}] {}", server.pinned),
        });
    }
    if let Some(table) = &file.providers.anthropic {
        let pinned = table.pinned();
        if !pinned.is_empty() {
            out.push(Pinned {
                label: "providers.anthropic".into(),
                shown: format!("[providers.anthropic] {pinned}"),
            });
        }
    }
    // Where spans are sent, and whether with content: data leaving the machine.
    let telemetry: Vec<String> = super::telemetry::PINNED_TELEMETRY_KEYS
        .iter()
        .filter_map(|k| {
            let value = file.telemetry.get(*k)?;
            Some(match *k {
                "capture_message_content" => format!("{k} = {}", value.text),
                _ => format!("{k} = {}", serde_json::Value::from(value.text.as_str())),
            })
        })
        .collect();
    if !telemetry.is_empty() {
        out.push(Pinned {
            label: "telemetry".into(),
            shown: format!("[telemetry] {}", telemetry.join(", ")),
        });
    }
    out
}

/// The digests of `values`, by label.
pub fn pins_of(values: &[Pinned]) -> Pins {
    values
        .iter()
        .map(|p| (p.label.clone(), p.digest()))
        .collect()
}

/// Who answers the trust questions of a run.
pub trait Ask {
    /// Whether someone can be asked at all.
    fn available(&self) -> bool;
    /// Asks a yes/no `question` (several lines); true only for a yes.
    fn confirm(&self, question: &str) -> bool;
}

/// The person at the terminal: asked only when stdin and stderr are both a terminal.
pub struct TerminalAsk;

impl Ask for TerminalAsk {
    fn available(&self) -> bool {
        std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
    }

    fn confirm(&self, question: &str) -> bool {
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "{question} [y/N] ");
        let _ = err.flush();
        drop(err);
        let mut answer = String::new();
        if std::io::stdin().lock().read_line(&mut answer).is_err() {
            return false;
        }
        matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
    }
}

/// No one to ask (the `trust` command itself, and tests).
pub struct NoOne;

impl Ask for NoOne {
    fn available(&self) -> bool {
        false
    }
    fn confirm(&self, _question: &str) -> bool {
        false
    }
}

/// The name a folder is recorded under: its canonical path.
pub fn folder_key(folder: &Path) -> Result<String, ConfigError> {
    std::fs::canonicalize(folder)
        .map(|p| p.display().to_string())
        .map_err(|e| ConfigError::Unreadable {
            file: folder.display().to_string(),
            error: e.to_string(),
        })
}

/// The folders trusted in this process: recorded ones and `--trust-project`'s (the state
/// folder's guard asks them, `runner::state_folder`).
pub use runner::state_folder::Trusted;

/// Records `folder` as trusted with `pins` in the user's file (replacing its earlier
/// record). Returns the user file's path.
pub fn record(folder: &str, pins: &Pins, keys: &[Key]) -> Result<PathBuf, ConfigError> {
    let path = user_file().ok_or_else(|| ConfigError::Unwritable {
        file: "the user's config file".into(),
        error: "neither XDG_CONFIG_HOME nor HOME is set".into(),
    })?;
    let shown = path.display().to_string();
    let unwritable = |error: String| ConfigError::Unwritable {
        file: shown.clone(),
        error,
    };
    let old = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => {
            return Err(ConfigError::Unreadable {
                file: shown,
                error: e.to_string(),
            })
        }
    };
    let text = with_record(&old, folder, pins);
    // The file must still read as a config file (a hand-edited record could clash).
    file::parse(&shown, &text, keys)?;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| unwritable(e.to_string()))?;
    }
    std::fs::write(&path, text).map_err(|e| unwritable(e.to_string()))?;
    Ok(path)
}

/// `text` with the `[trusted_projects."FOLDER"]` table replaced by one holding `pins`.
fn with_record(text: &str, folder: &str, pins: &Pins) -> String {
    let header = format!("[trusted_projects.{}]", quoted(folder));
    let mut lines: Vec<&str> = Vec::new();
    let mut skipping = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed == header {
            skipping = true;
            if lines.last() == Some(&RECORD_COMMENT) {
                lines.pop();
            }
            continue;
        }
        if skipping && trimmed.starts_with('[') {
            skipping = false;
        }
        if !skipping {
            lines.push(line);
        }
    }
    let mut out: String = lines.iter().map(|l| format!("{l}\n")).collect();
    while out.ends_with("\n\n") {
        out.pop();
    }
    if !out.is_empty() {
        out.push('\n');
    }
    let pins: Vec<String> = pins
        .iter()
        .map(|(label, digest)| format!("{} = {}", quoted(label), quoted(digest)))
        .collect();
    let pins = if pins.is_empty() {
        "{}".to_string()
    } else {
        format!("{{ {} }}", pins.join(", "))
    };
    out.push_str(&format!("{RECORD_COMMENT}\n{header}\npins = {pins}\n"));
    out
}

/// The line written above each record.
const RECORD_COMMENT: &str = "# Trusted by `planwright trust` (docs/security.md).";

/// A TOML basic string (JSON's escapes are TOML's).
fn quoted(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}

/// What a project file is, once trust is decided.
pub enum Decision {
    /// No `planwright.toml` here.
    Absent,
    /// Not trusted: the file is ignored; the note says how to trust it.
    Ignored { note: String },
    /// Trusted, every pinned value accepted.
    Read(Box<ConfigFile>),
}

/// Decides whether the project file of the working folder is read: `recorded`, the user
/// file's trusted folders; `this_run`: `--trust-project`; `ask`: who confirms what is new.
pub fn decide(
    recorded: &BTreeMap<String, Pins>,
    this_run: bool,
    ask: &dyn Ask,
    keys: &[Key],
) -> Result<Decision, ConfigError> {
    let path = Path::new(PROJECT_FILE);
    if !path.exists() {
        return Ok(Decision::Absent);
    }
    let folder = folder_key(Path::new("."))?;
    let read = || -> Result<ConfigFile, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Unreadable {
            file: PROJECT_FILE.into(),
            error: e.to_string(),
        })?;
        file::parse(PROJECT_FILE, &text, keys)
    };
    let (file, mut pins, recorded_here) = match recorded.get(&folder) {
        Some(pins) => (read()?, pins.clone(), true),
        None if this_run => (read()?, Pins::new(), false),
        None => {
            let ignored = || Decision::Ignored {
                note: format!(
                    "ignoring {PROJECT_FILE}: this folder ({folder}) is not trusted; \
                     `planwright trust` trusts it (or --trust-project for one run)"
                ),
            };
            if !ask.available() {
                return Ok(ignored());
            }
            let file = read()?;
            let values = pinned(&file, keys);
            let mut question = format!(
                "{folder} has a {PROJECT_FILE} that Planwright has not been told to trust."
            );
            if !values.is_empty() {
                question.push_str("\nIt runs programs or sends secrets with:");
                for value in &values {
                    question.push_str(&format!("\n  {}", value.shown));
                }
            }
            question.push_str("\nTrust this folder (recorded in your config file)?");
            if !ask.confirm(&question) {
                return Ok(ignored());
            }
            let pins = pins_of(&values);
            record(&folder, &pins, keys)?;
            return Ok(Decision::Read(Box::new(file)));
        }
    };
    let mut changed = false;
    for value in pinned(&file, keys) {
        if pins.get(&value.label) == Some(&value.digest()) {
            continue;
        }
        let question = format!(
            "{PROJECT_FILE} sets a value this folder's trust does not cover yet:\n  {}\nUse it?",
            value.shown
        );
        if ask.available() && ask.confirm(&question) {
            pins.insert(value.label.clone(), value.digest());
            changed = true;
            continue;
        }
        return Err(ConfigError::Unpinned {
            file: PROJECT_FILE.into(),
            shown: value.shown,
        });
    }
    if changed && recorded_here {
        record(&folder, &pins, keys)?;
    }
    Ok(Decision::Read(Box::new(file)))
}

/// `planwright trust [PATH]`: records the folder as trusted with its project file's pinned
/// values; returns the text to print.
pub fn trust(folder: &Path, keys: &[Key]) -> Result<String, ConfigError> {
    if !folder.is_dir() {
        return Err(ConfigError::Options(format!(
            "{} is not a folder",
            folder.display()
        )));
    }
    let key = folder_key(folder)?;
    let file_path = folder.join(PROJECT_FILE);
    let values = match std::fs::read_to_string(&file_path) {
        Ok(text) => pinned(
            &file::parse(&file_path.display().to_string(), &text, keys)?,
            keys,
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => {
            return Err(ConfigError::Unreadable {
                file: file_path.display().to_string(),
                error: e.to_string(),
            })
        }
    };
    let user = record(&key, &pins_of(&values), keys)?;
    let mut out = format!("trusted {key} (recorded in {})\n", user.display());
    if values.is_empty() {
        out.push_str("no value of its planwright.toml runs a program or sends a secret\n");
    } else {
        out.push_str("pinned, as they are now (a new or changed one is refused until `planwright trust` is run again):\n");
        for value in &values {
            out.push_str(&format!("  {}\n", value.shown));
        }
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_record_replaces_the_folders_earlier_one_and_keeps_the_rest() {
        let pins: Pins = [("base_url".to_string(), "sha256:ab".to_string())].into();
        let first = with_record("model = \"m\"\n", "/p", &pins);
        let again = with_record(&first, "/p", &Pins::new());
        let other = with_record(&again, "/q \"x\"", &pins);
        assert_eq!(
            other,
            "model = \"m\"\n\n# Trusted by `planwright trust` (docs/security.md).\n\
             [trusted_projects.\"/p\"]\npins = {}\n\n\
             # Trusted by `planwright trust` (docs/security.md).\n\
             [trusted_projects.\"/q \\\"x\\\"\"]\npins = { \"base_url\" = \"sha256:ab\" }\n"
        );
        let keys = super::super::keys::keys(&<crate::cli::Cli as clap::CommandFactory>::command());
        let parsed = file::parse("u.toml", &other, &keys).unwrap();
        assert_eq!(parsed.trusted_projects["/q \"x\""], pins);
        assert!(parsed.trusted_projects["/p"].is_empty());
    }

    #[test]
    fn a_changed_value_changes_its_digest() {
        let a = Pinned {
            label: "base_url".into(),
            shown: "base_url = \"http://a\"".into(),
        };
        let b = Pinned {
            shown: "base_url = \"http://b\"".into(),
            ..a.clone()
        };
        assert_ne!(a.digest(), b.digest());
        assert!(a.digest().starts_with("sha256:"));
        assert_eq!(a.digest().len(), 7 + 64);
    }

    #[test]
    fn the_anthropic_tables_url_and_key_variable_are_pinned() {
        let keys = super::super::keys::keys(&<crate::cli::Cli as clap::CommandFactory>::command());
        let text = "[providers.anthropic]\nbase_url = \"http://evil:1\"\nmax_tokens = 10\n";
        let parsed = file::parse("p.toml", text, &keys).unwrap();
        let pins = pinned(&parsed, &keys);
        assert_eq!(
            pins,
            [Pinned {
                label: "providers.anthropic".into(),
                shown: "[providers.anthropic] base_url = \"http://evil:1\"".into(),
            }]
        );
        let only_tokens = file::parse("p.toml", "[providers.anthropic]\nmax_tokens = 10\n", &keys);
        assert!(pinned(&only_tokens.unwrap(), &keys).is_empty());
    }
}
