//! Trust in a project folder (docs/security.md, "Project configuration and trust"). A
//! folder's `planwright.toml` (and its `.planwright/` state, see `runner::state_folder`) is
//! read only once the user trusts the folder: `planwright trust [PATH]`, `--trust-project`
//! for one run, or a question on first use when stdin and stderr are a terminal. Trusted
//! folders are recorded in the user's config file as `[trusted_projects."PATH"]` tables.
//!
//! On top of that, every value of a project file that decides where data goes, what runs
//! or what protects the user's files is pinned: every setting but the [`FREE_KEYS`] (which
//! only tune a run, or which [`super::tighten`] keeps from weakening the user's own), the
//! chosen `profile`, each MCP server's [`PINNED_SERVER_KEYS`], the keys of a
//! `[providers.NAME]` table its provider marks pinned (where requests go, which variable
//! holds the key), and the `[telemetry]` endpoints and content switch. Their
//! digests are recorded with the folder, and a new or changed one is refused (asked in a
//! terminal) until `planwright trust` has shown and recorded it. The record also says
//! whether the folder had a `planwright.toml` when it was trusted: a file that appears
//! later (planted by a run) is refused (asked in a terminal) as a whole. A file inside the
//! folder named by `PLANWRIGHT_CONFIG` is a project file too ([`ProjectFile`]).

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

/// The settings a trusted project file may set without its value being pinned: they only
/// tune how a run goes (its style, model name, limits and budgets, how it acts and whether
/// answers are checked, the server's capacity), or [`super::tighten`] drops a value weaker
/// than the user's own (`sandbox`, `approval`, `sandbox_network`, `sandbox_vcs_writes`,
/// `browser_allow_local`, `allow`; `deny`, `disabled_tools` and `protect` add up).
/// Every other setting is pinned: where the key and the data go (`provider`, `base_url`,
/// `api_key_env`, `db`, `search`, `searxng_url`, `workspace_root`, `addr`, `metrics_addr`,
/// `metrics_public`), what runs (`chromium`, `model_path`, `shell_env`, `ca_certs`) and what
/// protects the user's files (`checkpoints`, `checkpoint_ignore`, `checkpoint_max_file_mib`,
/// `allow_input_edits`), and any setting added later until it is listed here.
pub const FREE_KEYS: [&str; 37] = [
    "mode",
    "model",
    "max_steps",
    "max_step_secs",
    "max_calls_per_reply",
    "schedule",
    "parallel",
    "retries",
    "retry_delay_ms",
    "max_revisions",
    "revise",
    "max_todos",
    "verify",
    "approval",
    "allow",
    "deny",
    "sandbox",
    "sandbox_network",
    "sandbox_vcs_writes",
    "disabled_tools",
    "protect",
    "actions",
    "verify_answers",
    "browser_allow_local",
    "search_timeout_secs",
    "max_tokens",
    "max_plan_steps",
    "summary",
    "lease_secs",
    "stream",
    "llm_max_reply_mib",
    "tool_protocol",
    "max_connections",
    "header_timeout_secs",
    "ask_timeout_secs",
    "workers",
    "concurrency",
];

/// Whether a trusted project file's value of setting `name` is pinned.
pub fn is_pinned(name: &str) -> bool {
    !FREE_KEYS.contains(&name)
}

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
    // Which profile applies decides which of the user's own values do.
    if let Some(profile) = &file.profile {
        out.push(Pinned {
            label: "profile".into(),
            shown: format!("profile = {}", quoted(profile)),
        });
    }
    let mut settings = |prefix: &str, settings: &file::Settings| {
        for (name, entry) in settings.iter().filter(|(name, _)| is_pinned(name)) {
            let Some(key) = keys.iter().find(|k| &k.name == name) else {
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
    for (name, table) in &file.providers {
        let pinned = table.pinned();
        if !pinned.is_empty() {
            out.push(Pinned {
                label: format!("providers.{name}"),
                shown: format!("[providers.{name}] {pinned}"),
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

/// A project file of a folder: its `planwright.toml`, or a file inside it named by
/// `PLANWRIGHT_CONFIG` (which a repository's `.envrc` may set): trusted and pinned alike.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectFile {
    /// Where it is read (as given: relative to the working folder, or absolute).
    pub path: PathBuf,
    /// Its path inside the folder. The labels of its pins start with `NAME:` unless it is
    /// `planwright.toml`; the pin saying it was there when the folder was trusted is `NAME`.
    pub name: String,
}

impl ProjectFile {
    /// The working folder's `planwright.toml`.
    pub fn default_file() -> ProjectFile {
        ProjectFile {
            path: PathBuf::from(PROJECT_FILE),
            name: PROJECT_FILE.into(),
        }
    }

    /// `path` as a project file of `folder`, when it lies inside it (itself, or the folder
    /// holding it if it is a link); `None` when it lies elsewhere or does not exist.
    pub fn inside(folder: &Path, path: &Path) -> Option<ProjectFile> {
        let folder = std::fs::canonicalize(folder).ok()?;
        let within = |p: &Path| p.strip_prefix(&folder).ok().map(Path::to_path_buf);
        let canonical = std::fs::canonicalize(path).ok()?;
        let name = within(&canonical).or_else(|| {
            let parent = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            let parent = std::fs::canonicalize(parent).ok()?;
            within(&parent.join(path.file_name()?))
        })?;
        Some(ProjectFile {
            path: path.to_path_buf(),
            name: name.display().to_string(),
        })
    }

    fn is_default(&self) -> bool {
        self.name == PROJECT_FILE
    }

    /// The file as messages name it.
    pub fn shown(&self) -> String {
        self.path.display().to_string()
    }

    /// The file as the warnings and questions name it.
    fn described(&self) -> String {
        if self.is_default() {
            self.shown()
        } else {
            format!("{} (named by PLANWRIGHT_CONFIG)", self.shown())
        }
    }

    /// The pinned values `file`, read from this file, sets, labelled for it.
    fn pinned(&self, file: &ConfigFile, keys: &[Key]) -> Vec<Pinned> {
        let mut values = pinned(file, keys);
        if !self.is_default() {
            for value in &mut values {
                value.label = format!("{}:{}", self.name, value.label);
            }
        }
        values
    }

    /// The pin recorded when a trusted folder has this file.
    fn presence(&self) -> Pinned {
        Pinned {
            label: self.name.clone(),
            shown: format!("{} was there when the folder was trusted", self.name),
        }
    }

    /// The pins to record for this file when it sets `values`.
    fn pins(&self, values: &[Pinned]) -> Pins {
        let mut pins = pins_of(values);
        let presence = self.presence();
        pins.insert(presence.label.clone(), presence.digest());
        pins
    }

    fn read(&self, keys: &[Key]) -> Result<ConfigFile, ConfigError> {
        let shown = self.shown();
        let text = std::fs::read_to_string(&self.path).map_err(|e| ConfigError::Unreadable {
            file: shown.clone(),
            error: e.to_string(),
        })?;
        file::parse(&shown, &text, keys)
    }
}

/// What a project file is, once trust is decided.
pub enum Decision {
    /// No such file here.
    Absent,
    /// Not trusted: the file is ignored; the note says how to trust it.
    Ignored { note: String },
    /// Trusted, every pinned value accepted.
    Read(Box<ConfigFile>),
}

/// Decides whether `project`, a project file of the working folder, is read: `recorded`,
/// the user file's trusted folders; `this_run`: `--trust-project`; `ask`: who confirms what
/// is new.
pub fn decide(
    project: &ProjectFile,
    recorded: &BTreeMap<String, Pins>,
    this_run: bool,
    ask: &dyn Ask,
    keys: &[Key],
) -> Result<Decision, ConfigError> {
    if !project.path.exists() {
        return Ok(Decision::Absent);
    }
    let folder = folder_key(Path::new("."))?;
    let described = project.described();
    let (file, mut pins, recorded_here) = match recorded.get(&folder) {
        Some(pins) => (project.read(keys)?, pins.clone(), true),
        None if this_run => (project.read(keys)?, Pins::new(), false),
        None => {
            let ignored = || Decision::Ignored {
                note: format!(
                    "ignoring {described}: this folder ({folder}) is not trusted; \
                     `planwright trust` trusts it (or --trust-project for one run)"
                ),
            };
            if !ask.available() {
                return Ok(ignored());
            }
            let file = project.read(keys)?;
            let values = project.pinned(&file, keys);
            let mut question =
                format!("{folder} has {described}, which Planwright has not been told to trust.");
            question.push_str(&shown_values(&values));
            question.push_str("\nTrust this folder (recorded in your config file)?");
            if !ask.confirm(&question) {
                return Ok(ignored());
            }
            record(&folder, &project.pins(&values), keys)?;
            return Ok(Decision::Read(Box::new(file)));
        }
    };
    // A file the folder did not have when it was trusted (planted by a run, or trusted by
    // a version that did not record it) is asked about as a whole; `--trust-project` is
    // the user's say-so for this command.
    let presence = project.presence();
    if recorded_here
        && !this_run
        && !file.sets_nothing()
        && pins.get(&presence.label) != Some(&presence.digest())
    {
        let values = project.pinned(&file, keys);
        let question = format!(
            "{folder} had no {described} when you trusted it; one is there now.{}\nUse it \
             (recorded in your config file)?",
            shown_values(&values)
        );
        if !(ask.available() && ask.confirm(&question)) {
            return Err(ConfigError::NewProjectFile {
                file: project.shown(),
                shown: one_line(&values),
            });
        }
        pins.extend(project.pins(&values));
        record(&folder, &pins, keys)?;
        return Ok(Decision::Read(Box::new(file)));
    }
    let mut changed = false;
    for value in project.pinned(&file, keys) {
        if pins.get(&value.label) == Some(&value.digest()) {
            continue;
        }
        let question = format!(
            "{described} sets a value this folder's trust does not cover yet:\n  {}\nUse it?",
            value.shown
        );
        if ask.available() && ask.confirm(&question) {
            pins.insert(value.label.clone(), value.digest());
            changed = true;
            continue;
        }
        return Err(ConfigError::Unpinned {
            file: project.shown(),
            shown: value.shown,
        });
    }
    if changed && recorded_here {
        record(&folder, &pins, keys)?;
    }
    Ok(Decision::Read(Box::new(file)))
}

/// The lines of a question showing the pinned `values` (none: nothing).
fn shown_values(values: &[Pinned]) -> String {
    if values.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nIt sets where data goes, what runs or what protects your files:");
    for value in values {
        out.push_str(&format!("\n  {}", value.shown));
    }
    out
}

/// `values` on one line, for an error.
fn one_line(values: &[Pinned]) -> String {
    if values.is_empty() {
        return "nothing pinned".into();
    }
    values
        .iter()
        .map(|v| v.shown.as_str())
        .collect::<Vec<_>>()
        .join("; ")
}

/// `planwright trust [PATH]`: records the folder as trusted with the pinned values of its
/// `planwright.toml` and of `named`, the file `PLANWRIGHT_CONFIG` names when it lies inside
/// the folder; returns the text to print.
pub fn trust(folder: &Path, named: Option<&Path>, keys: &[Key]) -> Result<String, ConfigError> {
    if !folder.is_dir() {
        return Err(ConfigError::Options(format!(
            "{} is not a folder",
            folder.display()
        )));
    }
    let key = folder_key(folder)?;
    let mut files = vec![ProjectFile {
        path: folder.join(PROJECT_FILE),
        name: PROJECT_FILE.into(),
    }];
    files.extend(
        named
            .and_then(|path| ProjectFile::inside(folder, path))
            .filter(|f| !f.is_default()),
    );
    let mut pins = Pins::new();
    let mut values = Vec::new();
    let mut read = Vec::new();
    for project in &files {
        let file = match project.read(keys) {
            Ok(file) => file,
            // No file: one that appears later is not covered.
            Err(ConfigError::Unreadable { .. }) if !project.path.exists() => continue,
            Err(e) => return Err(e),
        };
        let these = project.pinned(&file, keys);
        pins.extend(project.pins(&these));
        values.extend(these);
        read.push(project.name.clone());
    }
    let user = record(&key, &pins, keys)?;
    let mut out = format!("trusted {key} (recorded in {})\n", user.display());
    if read.is_empty() {
        out.push_str(
            "it has no planwright.toml: one that appears later is refused until `planwright \
             trust` is run again\n",
        );
    } else if values.is_empty() {
        out.push_str(&format!(
            "no value of {} says where data goes, what runs or what protects your files\n",
            read.join(" or ")
        ));
    } else {
        out.push_str("pinned, as they are now (a new or changed one is refused until `planwright trust` is run again):\n");
        for value in &values {
            out.push_str(&format!("  {}\n", value.shown));
        }
    }
    Ok(out)
}

#[cfg(test)]
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

    /// Issue 41, High 6: every setting is pinned unless it is one of the free keys, which
    /// all exist; where the key and the data go and what protects the files are pinned.
    #[test]
    fn every_setting_but_the_free_ones_is_pinned() {
        let keys = super::super::keys::keys(&<crate::cli::Cli as clap::CommandFactory>::command());
        for name in FREE_KEYS {
            assert!(keys.iter().any(|k| k.name == name), "{name} is no setting");
        }
        for name in [
            "provider",
            "base_url",
            "api_key_env",
            "db",
            "addr",
            "metrics_public",
            "metrics_addr",
            "checkpoints",
            "checkpoint_ignore",
            "allow_input_edits",
            "workspace_root",
            "search",
            "searxng_url",
            "model_path",
            "chromium",
            "shell_env",
            "ca_certs",
        ] {
            assert!(keys.iter().any(|k| k.name == name), "{name} is no setting");
            assert!(is_pinned(name), "{name} must be pinned");
        }
        let text = "profile = \"p\"\nmode = \"dag\"\nprovider = \"ollama\"\n\
                    [profiles.p]\ncheckpoints = false\nmax_steps = 3\n";
        let parsed = file::parse("p.toml", text, &keys).unwrap();
        let shown: Vec<String> = pinned(&parsed, &keys)
            .into_iter()
            .map(|p| p.shown)
            .collect();
        assert_eq!(
            shown,
            [
                "profile = \"p\"",
                "provider = \"ollama\"",
                "profiles.p.checkpoints = false"
            ]
        );
    }

    #[cfg(feature = "anthropic")]
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
