//! The settings a config file may hold: the options of `run`, `resume`, `serve`, `worker`
//! and `tools list`, and the global `--db`, read from their clap definitions. The file
//! parser, `config show`, `config init` and docs/configuration.md all use this one list.

use std::any::TypeId;

use clap::{Arg, ArgAction, Command};

/// Options that are not settings: the task and its answers, per-invocation choices (the
/// output format and verbosity, a recording, a run's own workspace), a secret, and the options that pick
/// the config itself.
const NOT_SETTINGS: [&str; 16] = [
    "help",
    "version",
    "task",
    "answers",
    "run_id",
    "json",
    "output",
    "quiet",
    "verbose",
    "record",
    "replay",
    "workspace",
    "token",
    "config",
    "profile",
    "trust_project",
];

/// Keys that would put a secret in a file: refused, with a pointer to `api_key_env`.
pub const SECRET_KEYS: [&str; 7] = [
    "api_key",
    "openai_api_key",
    "anthropic_api_key",
    "key",
    "token",
    "password",
    "secret",
];

/// The commands whose options are settings, as paths of subcommand names.
const COMMANDS: [&[&str]; 5] = [
    &["run"],
    &["resume"],
    &["serve"],
    &["worker"],
    &["tools", "list"],
];

/// What a key's value is in TOML.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Bool,
    Integer,
    /// An array of strings.
    List,
    /// A string among the option's possible values.
    Choice,
    /// A string (a name, a path, a URL, an address).
    Text,
}

impl Kind {
    /// The type with its article, for errors ("an integer").
    pub fn with_article(self) -> &'static str {
        match self {
            Kind::Bool => "a boolean",
            Kind::Integer => "an integer",
            Kind::List => "an array of strings",
            Kind::Choice | Kind::Text => "a string",
        }
    }
}

/// One setting: its file key (the clap id), its option, and where it applies.
#[derive(Debug, Clone)]
pub struct Key {
    pub name: String,
    pub arg: Arg,
    pub kind: Kind,
    /// The commands that take it (`run`, `tools list`...); empty for a global option.
    pub commands: Vec<String>,
}

impl Key {
    /// The command-line flag, e.g. `--max-steps`.
    pub fn flag(&self) -> String {
        format!("--{}", self.arg.get_long().unwrap_or(&self.name))
    }

    /// The environment variable read for it, when there is one.
    pub fn env(&self) -> Option<String> {
        self.arg.get_env().map(|e| e.to_string_lossy().into_owned())
    }

    /// The built-in default values (empty when there is none).
    pub fn default(&self) -> Vec<String> {
        self.arg
            .get_default_values()
            .iter()
            .map(|v| v.to_string_lossy().into_owned())
            .collect()
    }

    /// The possible values of a [`Kind::Choice`].
    pub fn choices(&self) -> Vec<String> {
        self.arg
            .get_possible_values()
            .iter()
            .filter(|p| !p.is_hide_set())
            .map(|p| p.get_name().to_string())
            .collect()
    }

    /// The option's help, on one line.
    pub fn help(&self) -> String {
        let help = self
            .arg
            .get_long_help()
            .or(self.arg.get_help())
            .map(ToString::to_string)
            .unwrap_or_default();
        help.split_whitespace().collect::<Vec<_>>().join(" ")
    }
}

/// Every setting of `root` (the `planwright` command), globals first, each once.
pub fn keys(root: &Command) -> Vec<Key> {
    let mut keys: Vec<Key> = Vec::new();
    let mut add = |arg: &Arg, command: Option<String>| {
        let name = arg.get_id().to_string();
        if NOT_SETTINGS.contains(&name.as_str()) || arg.get_long().is_none() {
            return;
        }
        match keys.iter_mut().find(|k| k.name == name) {
            Some(key) => key.commands.extend(command),
            None => keys.push(Key {
                kind: kind(arg),
                name,
                arg: arg.clone(),
                commands: command.into_iter().collect(),
            }),
        }
    };
    for arg in root.get_arguments() {
        add(arg, None);
    }
    for path in COMMANDS {
        let Some(command) = find(root, path) else {
            continue;
        };
        for arg in command.get_arguments().filter(|a| !a.is_global_set()) {
            add(arg, Some(path.join(" ")));
        }
    }
    keys
}

/// The subcommand at `path` under `root`.
fn find<'a>(root: &'a Command, path: &[&str]) -> Option<&'a Command> {
    path.iter()
        .try_fold(root, |cmd, name| cmd.find_subcommand(name))
}

fn kind(arg: &Arg) -> Kind {
    let type_id = arg.get_value_parser().type_id();
    if matches!(arg.get_action(), ArgAction::SetTrue) || type_id == TypeId::of::<bool>() {
        Kind::Bool
    } else if matches!(arg.get_action(), ArgAction::Append) {
        Kind::List
    } else if !arg.get_possible_values().is_empty() {
        Kind::Choice
    } else if [
        TypeId::of::<u32>(),
        TypeId::of::<u64>(),
        TypeId::of::<i64>(),
        TypeId::of::<usize>(),
    ]
    .iter()
    .any(|t| type_id == *t)
    {
        Kind::Integer
    } else {
        Kind::Text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_options_of_every_command_are_settings_once() {
        let keys = keys(&crate::cli::Cli::command());
        let get = |name: &str| keys.iter().find(|k| k.name == name);
        assert_eq!(get("db").unwrap().commands, Vec::<String>::new());
        assert_eq!(get("max_steps").unwrap().kind, Kind::Integer);
        assert_eq!(get("mode").unwrap().kind, Kind::Choice);
        assert_eq!(get("verify").unwrap().kind, Kind::Bool);
        assert_eq!(get("shell_env").unwrap().kind, Kind::List);
        assert_eq!(get("addr").unwrap().kind, Kind::Text);
        assert_eq!(
            get("model").unwrap().commands,
            ["run", "resume", "serve", "worker", "tools list"]
        );
        assert_eq!(
            get("ask_timeout_secs").unwrap().commands,
            ["serve", "worker"]
        );
        for name in ["task", "json", "token", "workspace", "replay", "profile"] {
            assert!(get(name).is_none(), "{name} is not a setting");
        }
        let mut names: Vec<_> = keys.iter().map(|k| &k.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), keys.len());
    }
}
