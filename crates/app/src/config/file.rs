//! One config file: TOML read with its spans, so that every error names the file's line;
//! each value checked against its key's type and its option's own validation (the range of
//! `--max-steps`, the names of `--mode`...).

use std::collections::BTreeMap;

use clap::Command;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

use super::error::ConfigError;
use super::keys::{Key, Kind, SECRET_KEYS};
use super::mcp_servers;
use super::providers;
use super::telemetry;
use super::toml_table::{entries, Entries};

/// A value of a file, as the option's command-line value(s), and its line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub values: Vec<String>,
    pub line: usize,
}

/// The settings of a file.
pub type Settings = BTreeMap<String, Entry>;

/// A parsed config file.
#[derive(Debug, Clone, Default)]
pub struct ConfigFile {
    /// The file as messages name it.
    pub shown: String,
    /// The top-level settings.
    pub top: Settings,
    /// `[profiles.NAME]` tables.
    pub profiles: BTreeMap<String, Settings>,
    /// `profile = "NAME"` at the top level.
    pub profile: Option<String>,
    /// `[mcp_servers.NAME]` tables (top level only).
    pub mcp_servers: mcp_servers::Servers,
    /// `[providers.NAME]` tables (top level only).
    pub providers: providers::ProviderTables,
    /// The `[telemetry]` table (top level only).
    pub telemetry: telemetry::Table,
    /// `[trusted_projects."PATH"]` tables: the folders the user trusts and their pinned
    /// values (read from the user's file only; see [`super::trust`]).
    pub trusted_projects: BTreeMap<String, Pins>,
    /// What was skipped while reading it, said once logging is set up (a table of a
    /// provider this build lacks).
    pub notes: Vec<String>,
}

impl ConfigFile {
    /// Whether the file sets nothing at all (empty, or only comments: `config init`'s
    /// starter).
    pub fn sets_nothing(&self) -> bool {
        self.top.is_empty()
            && self.profiles.is_empty()
            && self.profile.is_none()
            && self.mcp_servers.is_empty()
            && self.providers.is_empty()
            && self.telemetry.is_empty()
            && self.trusted_projects.is_empty()
    }
}

/// A trusted folder's pinned values: label (`base_url`, `mcp_servers.fs`...) → digest.
pub type Pins = BTreeMap<String, String>;

/// A file's text, to turn spans into lines.
struct Source<'a> {
    shown: &'a str,
    text: &'a str,
}

impl Source<'_> {
    /// The 1-based line of byte `offset`.
    fn line(&self, offset: usize) -> usize {
        let text = self.text;
        text.get(..offset).unwrap_or(text).matches('\n').count() + 1
    }

    fn error(&self, span: std::ops::Range<usize>, problem: String) -> ConfigError {
        ConfigError::Invalid {
            file: self.shown.to_string(),
            line: self.line(span.start),
            problem,
        }
    }
}

/// Parses `text`, the content of the file `shown`.
pub fn parse(shown: &str, text: &str, keys: &[Key]) -> Result<ConfigFile, ConfigError> {
    let src = Source { shown, text };
    let table = DeTable::parse(text).map_err(|e| {
        let first = e.message().lines().next().unwrap_or("").to_string();
        src.error(e.span().unwrap_or(0..0), format!("not valid TOML: {first}"))
    })?;
    let mut file = ConfigFile {
        shown: shown.to_string(),
        ..ConfigFile::default()
    };
    let mut top = Vec::new();
    for (key, value) in entries(table.get_ref()) {
        match key.get_ref().as_ref() {
            "profile" => match value.get_ref() {
                DeValue::String(name) => file.profile = Some(name.to_string()),
                other => {
                    return Err(src.error(
                        value.span(),
                        format!("profile must be a string, not {}", found(other)),
                    ))
                }
            },
            "profiles" => {
                let DeValue::Table(profiles) = value.get_ref() else {
                    return Err(src.error(
                        value.span(),
                        "profiles must hold [profiles.NAME] tables".into(),
                    ));
                };
                for (name, profile) in entries(profiles) {
                    let DeValue::Table(table) = profile.get_ref() else {
                        return Err(src.error(
                            profile.span(),
                            format!("profiles.{} must be a table", name.get_ref()),
                        ));
                    };
                    let settings = settings(&src, entries(table), keys)?;
                    file.profiles.insert(name.get_ref().to_string(), settings);
                }
            }
            "trusted_projects" => {
                file.trusted_projects = trusted_projects(&src, value)?;
            }
            "mcp_servers" => {
                file.mcp_servers = mcp_servers::parse(value, |offset| src.line(offset))
                    .map_err(|p| src.error(p.span, p.text))?;
            }
            "providers" => {
                let parsed = providers::parse(value, |offset| src.line(offset))
                    .map_err(|p| src.error(p.span, p.text))?;
                file.providers = parsed.tables;
                file.notes.extend(
                    parsed
                        .skipped
                        .iter()
                        .map(|(name, line)| providers::skipped_note(shown, name, *line)),
                );
            }
            "telemetry" => {
                file.telemetry = telemetry::parse(value, |offset| src.line(offset))
                    .map_err(|p| src.error(p.span, p.text))?;
            }
            _ => top.push((key, value)),
        }
    }
    file.top = settings(&src, top, keys)?;
    Ok(file)
}

/// `[trusted_projects."PATH"]` tables, each with `pins = { LABEL = "sha256:..." }`.
fn trusted_projects(
    src: &Source<'_>,
    value: &Spanned<DeValue<'_>>,
) -> Result<BTreeMap<String, Pins>, ConfigError> {
    let shape = "trusted_projects must hold [trusted_projects.\"PATH\"] tables with \
                 pins = { LABEL = \"DIGEST\" } (`planwright trust` writes them)";
    let DeValue::Table(folders) = value.get_ref() else {
        return Err(src.error(value.span(), shape.into()));
    };
    let mut trusted = BTreeMap::new();
    for (path, record) in entries(folders) {
        let DeValue::Table(record) = record.get_ref() else {
            return Err(src.error(record.span(), shape.into()));
        };
        let mut pins = Pins::new();
        for (key, value) in entries(record) {
            match (key.get_ref().as_ref(), value.get_ref()) {
                ("pins", DeValue::Table(table)) => {
                    for (label, digest) in entries(table) {
                        let DeValue::String(digest) = digest.get_ref() else {
                            return Err(src.error(digest.span(), shape.into()));
                        };
                        pins.insert(label.get_ref().to_string(), digest.to_string());
                    }
                }
                _ => return Err(src.error(key.span(), shape.into())),
            }
        }
        trusted.insert(path.get_ref().to_string(), pins);
    }
    Ok(trusted)
}

/// The settings of a file's top level or of a profile.
fn settings(
    src: &Source<'_>,
    entries: Entries<'_, '_>,
    keys: &[Key],
) -> Result<Settings, ConfigError> {
    let mut settings = Settings::new();
    for (name, value) in entries {
        let name_str = name.get_ref().as_ref();
        if matches!(
            name_str,
            "profile" | "profiles" | "mcp_servers" | "providers" | "trusted_projects" | "telemetry"
        ) {
            return Err(src.error(
                name.span(),
                format!("{name_str} belongs at the top level of the file, not in a profile"),
            ));
        }
        let Some(key) = keys.iter().find(|k| k.name == name_str) else {
            return Err(src.error(name.span(), unknown(name_str, keys)));
        };
        let values = values(key, value.get_ref())
            .and_then(|values| check(key, &values).map(|()| values))
            .map_err(|problem| src.error(value.span(), problem))?;
        let line = src.line(name.span().start);
        settings.insert(key.name.clone(), Entry { values, line });
    }
    Ok(settings)
}

/// Why `name` is refused: a secret, or an unknown key with the nearest known one.
fn unknown(name: &str, keys: &[Key]) -> String {
    if SECRET_KEYS.contains(&name) {
        return format!(
            "\"{name}\" would put a secret in the file: name the environment variable that \
             holds the key instead (api_key_env = \"MY_KEY\")"
        );
    }
    let candidates = keys.iter().map(|k| k.name.as_str()).chain([
        "profile",
        "profiles",
        "mcp_servers",
        "providers",
        "trusted_projects",
        "telemetry",
    ]);
    // Ties (`modle`: `mode` and `model` score alike) go to the key of the same length (a
    // swap of two letters), then to the first in alphabetical order: never to the order the
    // keys are declared in.
    let length_gap = |c: &str| name.len().abs_diff(c.len());
    let nearest = candidates
        .map(|c| (strsim::jaro_winkler(name, c), c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| {
            a.0.total_cmp(&b.0)
                .then_with(|| length_gap(b.1).cmp(&length_gap(a.1)))
                .then_with(|| b.1.cmp(a.1))
        });
    match nearest {
        Some((_, near)) => format!("unknown key \"{name}\" (did you mean \"{near}\"?)"),
        None => format!("unknown key \"{name}\" (`planwright config init` lists every key)"),
    }
}

/// The TOML type of a value, for errors.
fn found(value: &DeValue<'_>) -> &'static str {
    match value {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a date",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

/// The option's command-line value(s) for a file value of the right type.
fn values(key: &Key, value: &DeValue<'_>) -> Result<Vec<String>, String> {
    let wrong = || {
        format!(
            "{} must be {}, not {}",
            key.name,
            key.kind.with_article(),
            found(value)
        )
    };
    match (key.kind, value) {
        (Kind::Bool, DeValue::Boolean(b)) => Ok(vec![b.to_string()]),
        (Kind::Integer, DeValue::Integer(i)) => i128::from_str_radix(i.as_str(), i.radix())
            .map(|n| vec![n.to_string()])
            .map_err(|e| format!("{}: {e}", key.name)),
        (Kind::Choice | Kind::Text, DeValue::String(s)) => Ok(vec![s.to_string()]),
        (Kind::List, DeValue::Array(items)) => items
            .iter()
            .map(|item| match item.get_ref() {
                DeValue::String(s) => Ok(s.to_string()),
                _ => Err(wrong()),
            })
            .collect(),
        _ => Err(wrong()),
    }
}

/// Runs the option's own validation (clap's value parser) on the values.
fn check(key: &Key, values: &[String]) -> Result<(), String> {
    if key.kind == Kind::Bool {
        return Ok(());
    }
    let shown = super::show::toml_value(key.kind, values);
    if key.kind == Kind::Integer && values.iter().any(|v| v.starts_with('-')) {
        return Err(format!("{} = {shown}: must not be negative", key.name));
    }
    let arg = key
        .arg
        .clone()
        .env(None)
        .required(false)
        .global(false)
        .value_delimiter(None);
    let long = key.flag();
    let argv = values.iter().map(|v| format!("{long}={v}"));
    Command::new("planwright")
        .no_binary_name(true)
        .arg(arg)
        .try_get_matches_from(argv)
        .map(|_| ())
        .map_err(|e| {
            use std::error::Error as _;
            let why = match e.source() {
                Some(source) => source.to_string(),
                None if key.kind == Kind::Choice => {
                    format!("expected one of {}", key.choices().join(", "))
                }
                None => e
                    .to_string()
                    .lines()
                    .next()
                    .unwrap_or("")
                    .trim_start_matches("error: ")
                    .to_string(),
            };
            format!("{} = {shown}: {why}", key.name)
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn keys() -> Vec<Key> {
        super::super::keys::keys(&crate::cli::Cli::command())
    }

    fn error(text: &str) -> String {
        parse("p.toml", text, &keys()).unwrap_err().to_string()
    }

    #[test]
    fn values_become_command_line_values_with_their_lines() {
        let text =
            "# settings\nmax_steps = 0x10\nverify = true\nca_certs = [\"a.pem\", \"b.pem\"]\n\
                    profile = \"fast\"\nprofiles.fast.model = \"m\"\n";
        let file = parse("p.toml", text, &keys()).unwrap();
        assert_eq!(
            file.top["max_steps"],
            Entry {
                values: vec!["16".into()],
                line: 2
            }
        );
        assert_eq!(file.top["verify"].values, ["true"]);
        assert_eq!(file.top["ca_certs"].values, ["a.pem", "b.pem"]);
        assert_eq!(file.profile.as_deref(), Some("fast"));
        assert_eq!(file.profiles["fast"]["model"].values, ["m"]);
        assert_eq!(file.profiles["fast"]["model"].line, 6);
    }

    #[test]
    fn each_mistake_is_one_line_naming_the_line() {
        assert_eq!(
            error("\n[profiles.fast]\nprofile = \"slow\"\n"),
            "p.toml:3: profile belongs at the top level of the file, not in a profile"
        );
        assert_eq!(
            error("shell_env = \"LANG\"\n"),
            "p.toml:1: shell_env must be an array of strings, not a string"
        );
        assert_eq!(
            error("max_step = 3\n"),
            "p.toml:1: unknown key \"max_step\" (did you mean \"max_steps\"?)"
        );
        assert_eq!(
            error("zzz = 3\n"),
            "p.toml:1: unknown key \"zzz\" (`planwright config init` lists every key)"
        );
        assert_eq!(
            error("profiles = 3\n"),
            "p.toml:1: profiles must hold [profiles.NAME] tables"
        );
        assert!(error("max_tokens = 0\n").starts_with("p.toml:1: max_tokens = 0: "));
        for e in [error("a = \n"), error("[x\n")] {
            assert!(e.starts_with("p.toml:1: not valid TOML: "), "{e}");
            assert_eq!(e.lines().count(), 1);
        }
    }

    // The `[mcp_servers.NAME]` tables (`super::mcp_servers`), read as part of a file.
    fn parse_file(text: &str) -> Result<ConfigFile, String> {
        parse("p.toml", text, &keys()).map_err(|e| e.to_string())
    }

    #[test]
    fn servers_are_read_with_their_lines() {
        let file = parse_file(
            "model = \"m\"\n\n[mcp_servers.fs]\ncommand = \"npx\"\nargs = [\"-y\", \"fs\"]\n\
             tool_timeout_secs = 5\n\n[mcp_servers.remote]\nurl = \"https://h/mcp\"\n\
             bearer_token_env = \"TOKEN\"\n",
        )
        .unwrap();
        let names: Vec<&String> = file.mcp_servers.keys().collect();
        assert_eq!(names, ["fs", "remote"]);
        assert_eq!(file.mcp_servers["fs"].line, 3);
        assert_eq!(file.mcp_servers["remote"].line, 8);
        assert!(file.top.contains_key("model"));
        #[cfg(feature = "mcp")]
        {
            let fs = &file.mcp_servers["fs"].config;
            assert_eq!(fs.command.as_deref(), Some("npx"));
            assert_eq!(fs.args, ["-y", "fs"]);
            assert_eq!(fs.tool_timeout_secs, 5);
            assert_eq!(fs.startup_timeout_secs, 10);
            let remote = &file.mcp_servers["remote"].config;
            assert_eq!(remote.bearer_token_env.as_deref(), Some("TOKEN"));
        }
    }

    #[test]
    fn the_telemetry_table_is_read_and_each_mistake_names_its_line() {
        let file = parse(
            "p.toml",
            "model = \"m\"\n[telemetry]\nendpoint = \"http://127.0.0.1:4318\"\n\
             capture_message_content = true\n",
            &keys(),
        )
        .unwrap();
        assert_eq!(file.telemetry["endpoint"].text, "http://127.0.0.1:4318");
        assert_eq!(file.telemetry["endpoint"].line, 3);
        assert_eq!(file.telemetry["capture_message_content"].text, "true");
        assert_eq!(
            error("[telemetry]\nprotocol = \"grpc\"\n"),
            "p.toml:2: telemetry.protocol: unsupported OTLP protocol \"grpc\" (only \"http/protobuf\")"
        );
        assert_eq!(
            error("[telemetry]\nendpoint = \"nope\"\n"),
            "p.toml:2: telemetry.endpoint: malformed OTLP endpoint nope/v1/traces: relative URL without a base"
        );
        assert_eq!(
            error("[telemetry]\nendpont = \"http://h\"\n"),
            "p.toml:2: unknown key \"endpont\" in telemetry (did you mean \"endpoint\"?)"
        );
        assert_eq!(
            error("[telemetry]\nheaders = \"a=b\"\n"),
            "p.toml:2: telemetry.headers would put a secret in the file: set \
             OTEL_EXPORTER_OTLP_HEADERS instead"
        );
        assert_eq!(
            error("[profiles.p.telemetry]\nendpoint = \"http://h\"\n"),
            "p.toml:1: telemetry belongs at the top level of the file, not in a profile"
        );
    }

    #[test]
    fn each_mcp_server_mistake_is_one_line_naming_the_line() {
        let error = |text: &str| parse_file(text).unwrap_err();
        assert_eq!(
            error("[mcp_servers.x]\ncommand = \"a\"\ncomand = \"a\"\n"),
            "p.toml:3: unknown key \"comand\" in mcp_servers.x (did you mean \"command\"?)"
        );
        assert_eq!(
            error("mcp_servers = 1\n"),
            "p.toml:1: mcp_servers must hold [mcp_servers.NAME] tables"
        );
        assert_eq!(
            error("[profiles.p.mcp_servers.x]\ncommand = \"a\"\n"),
            "p.toml:1: mcp_servers belongs at the top level of the file, not in a profile"
        );
        assert_eq!(
            error("mcp_server = 1\n"),
            "p.toml:1: unknown key \"mcp_server\" (did you mean \"mcp_servers\"?)"
        );
        #[cfg(feature = "mcp")]
        {
            assert_eq!(
                error("\n[mcp_servers.x]\nargs = [\"a\"]\n"),
                "p.toml:2: MCP server `x`: set `command` (stdio) or `url` (streamable HTTP)"
            );
            assert_eq!(
                error("[mcp_servers.x]\ncommand = \"a\"\nstartup_timeout_secs = \"ten\"\n"),
                "p.toml:3: mcp_servers.x: invalid type: string \"ten\", expected u64"
            );
            assert_eq!(
                error("[mcp_servers.x]\ncommand = \"a\"\nurl = \"http://h\"\n"),
                "p.toml:1: MCP server `x`: set `command` or `url`, not both"
            );
        }
    }
}
