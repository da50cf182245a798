//! `planwright config show`: every setting in effect and where it comes from, as TOML with
//! comments (or one JSON object with `--json`).

use std::collections::BTreeMap;
use std::ffi::OsString;

use clap::parser::ValueSource;
use clap::ArgMatches;
use serde_json::{json, Value};

use super::keys::{Key, Kind};
use super::{ConfigError, Loaded, Source};

/// A setting in effect.
#[derive(Debug, Clone)]
pub struct Setting {
    pub name: String,
    pub kind: Kind,
    /// `None`: no value (an option without a default).
    pub values: Option<Vec<String>>,
    pub source: Source,
}

/// Every setting in effect, in the order of the keys.
pub fn effective(loaded: &Loaded) -> Result<Vec<Setting>, ConfigError> {
    use std::collections::btree_map::Entry;
    let mut parsed: BTreeMap<String, ArgMatches> = BTreeMap::new();
    let mut settings = Vec::new();
    for key in &loaded.keys {
        let matches = match key.commands.first() {
            None => &loaded.matches,
            Some(command) => match parsed.entry(command.clone()) {
                Entry::Occupied(e) => e.into_mut(),
                Entry::Vacant(e) => e.insert(parse_as(loaded, command)?),
            },
        };
        settings.push(setting(loaded, key, matches));
    }
    Ok(settings)
}

/// The options `command` (e.g. `tools list`) would run with here: a parse of
/// `planwright COMMAND` (with a placeholder task or run id) over the same files and
/// environment; returns the subcommand's matches.
fn parse_as(loaded: &Loaded, command: &str) -> Result<ArgMatches, ConfigError> {
    let path: Vec<&str> = command.split(' ').collect();
    let mut args: Vec<OsString> = vec!["planwright".into()];
    args.extend(path.iter().map(OsString::from));
    if matches!(path.as_slice(), ["run"] | ["resume"]) {
        args.push("placeholder".into());
    }
    let root = loaded
        .command()
        .try_get_matches_from(args)
        .map_err(|e| ConfigError::Options(first_line(&e.to_string())))?;
    let found = path
        .iter()
        .try_fold(root, |m, name| m.subcommand_matches(name).cloned());
    found.ok_or_else(|| ConfigError::Options(format!("no command `{command}`")))
}

fn first_line(text: &str) -> String {
    text.lines()
        .next()
        .unwrap_or("")
        .trim_start_matches("error: ")
        .to_string()
}

fn setting(loaded: &Loaded, key: &Key, matches: &ArgMatches) -> Setting {
    let values: Option<Vec<String>> = matches.get_raw(&key.name).map(|raw| {
        raw.map(|v| shown_value(key, &v.to_string_lossy()))
            .collect()
    });
    let source = match matches.value_source(&key.name) {
        Some(ValueSource::CommandLine) => Source::Flag(key.flag()),
        Some(ValueSource::EnvVariable) => Source::Env(key.env().unwrap_or_default()),
        Some(ValueSource::DefaultValue) => loaded
            .layers
            .get(&key.name)
            .map_or(Source::Default, |(_, source)| source),
        _ => Source::Unset,
    };
    Setting {
        name: key.name.clone(),
        kind: key.kind,
        values,
        source,
    }
}

/// A value as shown: a database URL without its password.
fn shown_value(key: &Key, value: &str) -> String {
    if key.name == "db" {
        value
            .parse::<runner::database::Database>()
            .map_or_else(|never| match never {}, |db| db.to_string())
    } else {
        value.to_string()
    }
}

/// The settings as TOML, each with its source as a comment.
pub fn text(loaded: &Loaded, settings: &[Setting]) -> String {
    let mut out = String::new();
    match &loaded.layers.profile {
        Some(p) => out.push_str(&format!("# profile: {} ({})\n", p.name, p.chosen_by)),
        None => out.push_str("# profile: none\n"),
    }
    for file in &loaded.layers.files {
        let found = if file.file.is_some() {
            ""
        } else {
            ", not found"
        };
        out.push_str(&format!(
            "# {} file: {}{found}\n",
            file.level.name(),
            file.path.display()
        ));
    }
    let lines: Vec<(String, String)> = settings
        .iter()
        .map(|s| match &s.values {
            Some(values) => (
                format!("{} = {}", s.name, toml_value(s.kind, values)),
                s.source.to_string(),
            ),
            None => (format!("# {}", s.name), s.source.to_string()),
        })
        .collect();
    let width = lines
        .iter()
        .map(|(l, _)| l.len())
        .max()
        .unwrap_or(0)
        .min(48);
    for (line, source) in lines {
        out.push_str(&format!("{line:<width$}  # {source}\n"));
    }
    let telemetry =
        super::telemetry::effective(&loaded.layers.telemetry(), |v| std::env::var(v).ok());
    out.push_str("\n[telemetry]\n");
    for (name, value, source) in telemetry {
        let line = match value {
            Some(v) if name == "capture_message_content" => format!("{name} = {v}"),
            Some(v) => format!("{name} = {}", Value::String(v)),
            None => format!("# {name}"),
        };
        out.push_str(&format!("{line:<width$}  # {source}\n"));
    }
    for (name, (declared, file)) in loaded.layers.mcp_servers() {
        let table = format!("[mcp_servers.{name}]");
        out.push_str(&format!(
            "# {table:<width$}  # {file}:{}\n",
            declared.line,
            width = width.saturating_sub(2)
        ));
    }
    for (name, file, line) in loaded.layers.provider_table_lines() {
        out.push_str(&format!(
            "# {:<width$}  # {file}:{line}\n",
            format!("[providers.{name}]"),
            width = width.saturating_sub(2)
        ));
    }
    out
}

/// The settings as one JSON object.
pub fn json(loaded: &Loaded, settings: &[Setting]) -> Value {
    let files: Vec<Value> = loaded
        .layers
        .files
        .iter()
        .map(|f| {
            json!({
                "path": f.path.display().to_string(),
                "level": f.level.name(),
                "found": f.file.is_some(),
            })
        })
        .collect();
    let profile = loaded
        .layers
        .profile
        .as_ref()
        .map(|p| json!({"name": p.name, "source": p.chosen_by.to_string()}));
    let mut map = serde_json::Map::new();
    for s in settings {
        let value = s
            .values
            .as_ref()
            .map_or(Value::Null, |v| json_value(s.kind, v));
        map.insert(
            s.name.clone(),
            json!({"value": value, "source": s.source.to_string()}),
        );
    }
    let servers: serde_json::Map<String, Value> = loaded
        .layers
        .mcp_servers()
        .into_iter()
        .map(|(name, (declared, file))| (name, json!({"source": file, "line": declared.line})))
        .collect();
    // Every key of every provider's table, null when no file sets it.
    let tables = loaded.layers.provider_tables();
    let providers: serde_json::Map<String, Value> = super::providers::with_tables()
        .into_iter()
        .map(|info| {
            let set = tables.get(info.name);
            let keys: serde_json::Map<String, Value> = info
                .table
                .iter()
                .map(|k| {
                    let value = set.and_then(|t| t.get(k.name)).map(|v| v.to_json());
                    (k.name.to_string(), value.unwrap_or(Value::Null))
                })
                .collect();
            (info.name.to_string(), Value::Object(keys))
        })
        .collect();
    let telemetry: serde_json::Map<String, Value> =
        super::telemetry::effective(&loaded.layers.telemetry(), |v| std::env::var(v).ok())
            .into_iter()
            .map(|(name, value, source)| (name, json!({"value": value, "source": source})))
            .collect();
    json!({"profile": profile, "files": files, "settings": map, "mcp_servers": servers,
        "providers": providers, "telemetry": telemetry})
}

/// `values` written as a TOML value of `kind`.
pub fn toml_value(kind: Kind, values: &[String]) -> String {
    let quoted = |v: &String| Value::String(v.clone()).to_string();
    match kind {
        Kind::Bool | Kind::Integer => values.join(","),
        Kind::List => format!(
            "[{}]",
            values.iter().map(quoted).collect::<Vec<_>>().join(", ")
        ),
        Kind::Choice | Kind::Text => values.first().map(quoted).unwrap_or_default(),
    }
}

fn json_value(kind: Kind, values: &[String]) -> Value {
    let one = values.first().cloned().unwrap_or_default();
    match kind {
        Kind::Bool => Value::Bool(one == "true"),
        Kind::Integer => one
            .parse::<u64>()
            .map_or(Value::String(one.clone()), Value::from),
        Kind::List => values.iter().cloned().map(Value::String).collect(),
        Kind::Choice | Kind::Text => Value::String(one),
    }
}
