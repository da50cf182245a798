//! docs/configuration.md, generated from the keys the parser uses; a test fails when the
//! committed file differs (`UPDATE_DOCS=1 cargo test -p planwright --bin planwright
//! config::docs` rewrites it).

use super::keys::{Key, Kind};
use super::show::toml_value;

const INTRO: &str = r#"# Configuration

<!-- Generated from the options of crates/app/src/cli by crates/app/src/config/docs.rs;
     `UPDATE_DOCS=1 cargo test -p planwright --bin planwright config::docs` rewrites it. -->

Every option of `planwright run`, `resume`, `serve`, `worker` and `tools list`, and the
global `--db`, can be kept in a TOML file, but for those that belong to one invocation
(`--json`, `--record`, `--replay`, `--workspace`, `--answer`) and the server's `--token`:

- the project's `./planwright.toml` (in the working folder), or the file named by
  `--config FILE` / `PLANWRIGHT_CONFIG` in its place;
- the user's `$XDG_CONFIG_HOME/planwright/config.toml` (else
  `~/.config/planwright/config.toml`).

Precedence, highest first: a flag, the option's environment variable, the chosen profile
(project file, then user file), the files' top level (project file, then user file), the
built-in default. `planwright config show` prints every value in effect and where it comes
from (`--json` for a script); `planwright config init` writes a commented starter
`./planwright.toml` (`--force` replaces an existing one).

**Trust.** A project's `./planwright.toml` (and its `.planwright/` folder) is ignored, with
one warning, until you trust the folder: `planwright trust [PATH]`, `--trust-project` for
one command, or a question the first time when stdin and stderr are a terminal. Trusted
folders are recorded in the user's file as `[trusted_projects."PATH"]` tables. Every value
that decides where the key or the data go, what runs or what protects your files is
pinned: every key of the table below except FREE_KEYS, which only tune a
run or are kept from weakening your own settings; the chosen `profile`; each MCP server's
`command`, `args`, `env`, `cwd`, `url` and `bearer_token_env`; the keys of a provider's
table marked pinned below ("Provider tables"); `[telemetry]`'s `endpoint`, `traces_endpoint` and
`capture_message_content`. `planwright trust` shows the pinned values and records a digest
of each, and a new or changed one stops the command (exit 2, naming `planwright trust`), or
is asked in a terminal. A `planwright.toml` that appears in a folder trusted without one is
refused (or asked) the same way as a whole. A project file only tightens the user's
`sandbox`, `approval`, `sandbox_network`, `sandbox_vcs_writes` and `browser_allow_local` (a weaker value is
ignored, with a warning), adds to the user's `deny` and `disabled_tools`, and cannot add
`allow` rules (security.md, "Project configuration and trust"). `--config FILE` is your own
choice and is read as it is; a file named by `PLANWRIGHT_CONFIG` that lies inside the
working folder (a repository's `.envrc` may set it) is a project file, trusted and pinned
like `planwright.toml`, and one elsewhere is read as it is.

**Migration (issue 41).** Until this version only `base_url`, `api_key_env`, `shell_env`,
`chromium`, `ca_certs` and the MCP servers' commands were pinned, and a trusted folder did
not record whether it had a `planwright.toml`. A trusted project file that sets a newly
pinned key (`provider`, `db`, `checkpoints`, `allow_input_edits`, `addr`,
`metrics_public`...) or that was trusted by an earlier version is refused once, naming
`planwright trust`: run it in the folder to look at the values and accept them. A
`PLANWRIGHT_CONFIG` file inside the working folder is ignored until the folder is trusted
with the variable set (`planwright trust` then pins it too).

```toml
provider = "ollama"
model = "qwen2.5-coder:7b"
mode = "dag"
max_steps = 30

[profiles.fast]
model = "qwen2.5-coder:1.5b"
max_steps = 8
```

**Profiles.** A `[profiles.NAME]` table holds the same keys; chosen with `--profile NAME`,
`PLANWRIGHT_PROFILE` or `profile = "NAME"` at a file's top level, its values override the
files' top level. A profile that no file defines is an error.

**Secrets** are never read from a file (`api_key`, `token`... are refused): name the
environment variable that holds the key with `api_key_env = "MY_KEY"`. The server's token
stays in `PLANWRIGHT_TOKEN` or its `server-token` file.

**Errors.** An unknown key (with the nearest known one), a value of the wrong type, a value
out of its option's range, a file that is not TOML or a missing profile stop the command
before anything starts, with one line naming the file and the line, and exit code 2:
`planwright.toml:3: unknown key "modle" (did you mean "model"?)`.

A boolean set to `true` in a file is turned off for one command by `--flag=false` (e.g.
`--verify=false`); `--flag` alone means `true`.

## Keys

Grouped as `planwright run --help` groups their flags; the options of every command and the
servers' own come first.
"#;

/// The header of each group's table.
const TABLE_HEAD: &str = "| Key | Type | Default | Flag | Environment | Commands | Description |
|---|---|---|---|---|---|---|
";

/// The `[mcp_servers.NAME]` tables: not options, so written here (docs/mcp.md has more).
const MCP_SERVERS: &str = r#"
## MCP servers

`[mcp_servers.NAME]` tables declare the [MCP](mcp.md) servers whose tools every run is
offered, as `mcp__NAME__TOOL` (NAME: letters, digits, `_` and `-`). They belong at a file's
top level, not in a profile; both files may declare servers, and the project file's
(or `--config`'s) entry replaces the user file's entry of the same NAME. A project file's
servers are started only in a trusted folder, as `planwright trust` last showed them (see
"Trust" above). `planwright config show` lists the servers in effect and the file declaring
each.

| Key | Type | Default | Description |
|---|---|---|---|
| `command` | string | — | Program to start; the server speaks MCP over its stdin/stdout. Set `command` or `url`. |
| `args` | array of strings | `[]` | Its arguments. |
| `env` | table of strings | `{}` | Variables set for it, beside the few it inherits (`PATH`, `HOME`, locale, user); no other variable of Planwright's reaches it. |
| `cwd` | string | — | Its working folder. |
| `url` | string | — | A streamable HTTP endpoint, in place of `command`. |
| `bearer_token_env` | string | — | The environment variable holding the bearer token sent to `url` (never the token itself). |
| `enabled_tools` | array of strings | all | Only these tools (the server's names) are offered. |
| `disabled_tools` | array of strings | `[]` | These tools are never offered. |
| `startup_timeout_secs` | integer | `10` | Seconds the server has to start and list its tools. |
| `tool_timeout_secs` | integer | `60` | Seconds a call may take. |

```toml
[mcp_servers.fs]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "/srv/shared"]

[mcp_servers.tracker]
url = "https://mcp.example.com/mcp"
bearer_token_env = "TRACKER_TOKEN"
```

A table with an unknown key, a value of the wrong type, or neither (or both) of `command`
and `url` is an error like any other: one line naming the file and the line, exit code 2.
"#;

/// The `[providers.NAME]` tables: not options, so written here from each provider's
/// description (its adapter's `ProviderInfo::table`).
fn providers() -> String {
    let tables = super::providers::with_tables();
    let mut out = String::from(
        r#"
## Provider tables

A `[providers.NAME]` table holds the settings of `--provider NAME` that are not options; which
providers have one, and its keys, come from the provider's adapter. It belongs at a file's
top level, not in a profile; each key of the project file's (or `--config`'s) table replaces
the user file's. Keys marked pinned are pinned in a project file like the top-level ones (see
"Trust" above). The other providers (the OpenAI-compatible presets, the embedded model) are
configured with the keys above. A table of a provider this build lacks (a file shared with a
build that has it) is skipped with a warning naming its line.
"#,
    );
    for info in &tables {
        out.push_str(&format!(
            "\n### `[providers.{}]`\n\n`--provider {0}`: {}.\n\n| Key | Type | Default | Pinned | Description |\n|---|---|---|---|---|\n",
            info.name, info.help
        ));
        for key in info.table {
            let kind = match key.kind {
                domain::ports::KeyKind::Text => "string".to_string(),
                domain::ports::KeyKind::Flag => "boolean".to_string(),
                domain::ports::KeyKind::Count { min, max } => format!("integer, {min} to {max}"),
            };
            out.push_str(&format!(
                "| `{}` | {kind} | {} | {} | {} |\n",
                key.name,
                key.default,
                if key.pinned { "yes" } else { "no" },
                key.help
            ));
        }
    }
    if let Some(info) = tables.first() {
        // Its pinned keys, each set to its default.
        let pinned: Vec<(&str, &str)> = info
            .table
            .iter()
            .filter(|k| k.pinned)
            .map(|k| (k.name, k.default.trim_matches('`')))
            .collect();
        out.push_str(&format!(
            "\n```toml\nprovider = \"{name}\"\n\n[providers.{name}]\n{}```\n",
            pinned
                .iter()
                .map(|(k, v)| format!("{k} = \"{v}\"\n"))
                .collect::<String>(),
            name = info.name
        ));
    }
    out
}

/// The `[telemetry]` table: not options, so written here from its keys
/// (docs/observability.md has more).
fn telemetry() -> String {
    let mut out = String::from(
        r#"
## Telemetry

The `[telemetry]` table says where the spans of runs are exported over OTLP/HTTP
([observability.md](observability.md)); nothing is exported without an endpoint. It belongs
at a file's top level, not in a profile; the project file's key beats the user file's, and
each standard OpenTelemetry variable beats its key. OTLP headers are never a key (they often
hold a secret): set `OTEL_EXPORTER_OTLP_HEADERS`. `planwright config show` lists the values in
effect and where each comes from.

| Key | Type | Environment | Description |
|---|---|---|---|
"#,
    );
    for (key, env, help) in super::telemetry::TELEMETRY_KEYS {
        let kind = if key == "capture_message_content" {
            "boolean"
        } else {
            "string"
        };
        out.push_str(&format!("| `{key}` | {kind} | `{env}` | {help} |\n"));
    }
    out.push_str(
        r#"
```toml
[telemetry]
endpoint = "http://127.0.0.1:6006"
service_name = "planwright-ci"
```

A malformed endpoint, an unknown protocol or sampler is an error like any other (one line
naming the file and the line, exit code 2); the same mistake in a variable is one warning
line and the process goes on without exporting.
"#,
    );
    out
}

/// The whole reference page.
pub fn markdown(keys: &[Key]) -> String {
    let free: Vec<String> = super::trust::FREE_KEYS
        .iter()
        .map(|k| format!("`{k}`"))
        .collect();
    let mut out = INTRO.replace("FREE_KEYS", &free.join(", "));
    let heading_of = |key: &Key| {
        key.arg
            .get_help_heading()
            .unwrap_or(crate::cli::heading::GENERAL)
            .to_string()
    };
    let order = std::iter::once(crate::cli::heading::GENERAL).chain(crate::cli::heading::ALL);
    for heading in order {
        let group: Vec<&Key> = keys.iter().filter(|k| heading_of(k) == heading).collect();
        if group.is_empty() {
            continue;
        }
        out.push_str(&format!("\n### {heading}\n\n{TABLE_HEAD}"));
        for key in group {
            out.push_str(&row(key));
        }
    }
    out.push_str(MCP_SERVERS);
    out.push_str(&providers());
    out.push_str(&telemetry());
    out
}

/// One key's row of its group's table.
fn row(key: &Key) -> String {
    let default = key.default();
    let default = if default.is_empty() {
        "—".to_string()
    } else {
        format!("`{}`", toml_value(key.kind, &default))
    };
    let kind = match key.kind {
        Kind::Choice => format!(
            "string: {}",
            key.choices()
                .iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other
            .with_article()
            .split_once(' ')
            .map_or("", |(_, t)| t)
            .to_string(),
    };
    let env = key.env().map_or("—".to_string(), |e| format!("`{e}`"));
    let commands = if key.commands.is_empty() {
        "all".to_string()
    } else {
        key.commands.join(", ")
    };
    format!(
        "| `{}` | {kind} | {default} | `{}` | {env} | {commands} | {} |\n",
        key.name,
        key.flag(),
        key.help().replace('|', "\\|")
    )
}

/// The page lists every provider of the default build (`--provider`'s values, the provider
/// tables): only that build checks it (the module is declared for it alone).
#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn docs_configuration_md_is_up_to_date() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/configuration.md");
        let keys = super::super::keys::keys(&crate::cli::Cli::command());
        let generated = markdown(&keys);
        if std::env::var_os("UPDATE_DOCS").is_some() {
            std::fs::write(path, &generated).unwrap();
            return;
        }
        let committed = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            committed == generated,
            "docs/configuration.md is out of date with the options: run \
             `UPDATE_DOCS=1 cargo test -p planwright --bin planwright config::docs` and commit it"
        );
    }
}
