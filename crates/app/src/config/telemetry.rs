//! The `[telemetry]` table of a config file (docs/observability.md): where traces are
//! exported, under the standard OpenTelemetry variables (a variable beats the file). Only at
//! a file's top level; the project file's key beats the user file's. Each value is checked
//! here, so that a mistake stops the command with one line naming the file's line. OTLP
//! headers are not a key: they often hold a secret (`OTEL_EXPORTER_OTLP_HEADERS` only).

use std::collections::BTreeMap;

use runner::telemetry::TelemetrySettings;
use toml::de::DeValue;
use toml::Spanned;

use super::toml_table::entries;
pub use super::toml_table::Problem;

/// The keys of `[telemetry]`, each with the variable that beats it and its help.
pub const TELEMETRY_KEYS: [(&str, &str, &str); 8] = [
    ("endpoint", "OTEL_EXPORTER_OTLP_ENDPOINT", "The OTLP/HTTP base URL; traces are sent to `<endpoint>/v1/traces`. No endpoint: no export."),
    ("traces_endpoint", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "The full URL traces are sent to, used as is (beats `endpoint`)."),
    ("protocol", "OTEL_EXPORTER_OTLP_PROTOCOL", "`http/protobuf`, the only one spoken."),
    ("service_name", "OTEL_SERVICE_NAME", "The resource's `service.name` (default `planwright`)."),
    ("resource_attributes", "OTEL_RESOURCE_ATTRIBUTES", "More resource attributes, `key=value,key2=value2`."),
    ("sampler", "OTEL_TRACES_SAMPLER", "`parentbased_always_on` (default), `always_on`, `always_off`, `traceidratio`, `parentbased_always_off`, `parentbased_traceidratio`."),
    ("sampler_arg", "OTEL_TRACES_SAMPLER_ARG", "The ratio (0 to 1) of the `*traceidratio` samplers."),
    ("capture_message_content", "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "Record prompts, replies, tool arguments and outputs on spans (boolean; never by default)."),
];

/// The keys that say where spans go and whether they carry content: pinned by
/// `planwright trust` (docs/security.md, "Project configuration and trust").
pub const PINNED_TELEMETRY_KEYS: [&str; 3] =
    ["endpoint", "traces_endpoint", "capture_message_content"];

/// One value of the table: its text (`true`/`false` for the boolean) and its line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Value {
    pub text: String,
    pub line: usize,
}

/// The table's values by key.
pub type Table = BTreeMap<String, Value>;

/// Reads the value of `telemetry` (a table). `line`: a byte offset's line in the file.
pub fn parse(
    value: &Spanned<DeValue<'_>>,
    line: impl Fn(usize) -> usize,
) -> Result<Table, Problem> {
    let DeValue::Table(keys) = value.get_ref() else {
        return Err(Problem {
            span: value.span(),
            text: "telemetry must be a [telemetry] table".into(),
        });
    };
    let mut table = Table::new();
    for (key, value) in entries(keys) {
        let name = key.get_ref().as_ref();
        if name == "headers" {
            return Err(Problem {
                span: key.span(),
                text: "telemetry.headers would put a secret in the file: set \
                       OTEL_EXPORTER_OTLP_HEADERS instead"
                    .into(),
            });
        }
        if !TELEMETRY_KEYS.iter().any(|(k, _, _)| *k == name) {
            return Err(Problem {
                span: key.span(),
                text: unknown(name),
            });
        }
        let text = match (name, value.get_ref()) {
            ("capture_message_content", DeValue::Boolean(b)) => b.to_string(),
            ("capture_message_content", _) => {
                return Err(Problem {
                    span: value.span(),
                    text: "telemetry.capture_message_content must be a boolean".into(),
                })
            }
            (_, DeValue::String(s)) => s.to_string(),
            _ => {
                return Err(Problem {
                    span: value.span(),
                    text: format!("telemetry.{name} must be a string"),
                })
            }
        };
        check(name, &text).map_err(|text| Problem {
            span: value.span(),
            text,
        })?;
        table.insert(
            name.to_string(),
            Value {
                text,
                line: line(key.span().start),
            },
        );
    }
    Ok(table)
}

/// The value checked the way the exporter will read it.
fn check(name: &str, text: &str) -> Result<(), String> {
    let mut settings = TelemetrySettings {
        endpoint: Some("http://localhost".into()),
        ..TelemetrySettings::default()
    };
    apply(&mut settings, name, text);
    settings
        .plan()
        .map(|_| ())
        .map_err(|e| format!("telemetry.{name}: {e}"))
}

/// Sets the field of `settings` that key `name` names.
fn apply(settings: &mut TelemetrySettings, name: &str, text: &str) {
    let value = Some(text.to_string());
    match name {
        "endpoint" => settings.endpoint = value,
        "traces_endpoint" => settings.traces_endpoint = value,
        "protocol" => settings.protocol = value,
        "service_name" => settings.service_name = value,
        "resource_attributes" => settings.resource_attributes = value,
        "sampler" => settings.sampler = value,
        "sampler_arg" => settings.sampler_arg = value,
        "capture_message_content" => settings.capture_message_content = text == "true",
        _ => {}
    }
}

/// The settings the files give (before the environment is laid over them).
pub fn settings(table: &BTreeMap<String, (Value, String)>) -> TelemetrySettings {
    let mut settings = TelemetrySettings::default();
    for (name, (value, _)) in table {
        apply(&mut settings, name, &value.text);
    }
    settings
}

/// Each key in effect: its value (`None`: unset) and where it comes from, the variable
/// beating the file. `var` reads the environment.
pub fn effective(
    table: &BTreeMap<String, (Value, String)>,
    var: impl Fn(&str) -> Option<String>,
) -> Vec<(String, Option<String>, String)> {
    let mut out: Vec<(String, Option<String>, String)> = TELEMETRY_KEYS
        .iter()
        .map(
            |(name, env, _)| match (var(env).filter(|v| !v.trim().is_empty()), table.get(*name)) {
                (Some(v), _) => (name.to_string(), Some(v), format!("env {env}")),
                (None, Some((value, file))) => (
                    name.to_string(),
                    Some(value.text.clone()),
                    format!("{file}:{}", value.line),
                ),
                (None, None) => (name.to_string(), None, "not set".to_string()),
            },
        )
        .collect();
    if var("OTEL_EXPORTER_OTLP_HEADERS").is_some() {
        out.push((
            "headers".into(),
            Some("(hidden)".into()),
            "env OTEL_EXPORTER_OTLP_HEADERS".into(),
        ));
    }
    out
}

fn unknown(key: &str) -> String {
    let nearest = TELEMETRY_KEYS
        .iter()
        .map(|(c, _, _)| (strsim::jaro_winkler(key, c), *c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match nearest {
        Some((_, near)) => format!("unknown key \"{key}\" in telemetry (did you mean \"{near}\"?)"),
        None => format!(
            "unknown key \"{key}\" in telemetry (known: {})",
            TELEMETRY_KEYS.map(|(k, _, _)| k).join(", ")
        ),
    }
}
