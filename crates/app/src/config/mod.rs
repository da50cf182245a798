//! Configuration files (docs/configuration.md): the project's `./planwright.toml` (or
//! `--config FILE`) and the user's `~/.config/planwright/config.toml`, with named profiles.
//! Every option of `run`, `resume`, `serve`, `worker` and the global `--db` can be set in
//! them ([`keys`] reads the list from the clap definitions); secrets cannot, only the name
//! of the variable holding one (`api_key_env`).
//!
//! Precedence: flags > environment > the chosen profile > the files' top level (project
//! over user) > built-in defaults, applied by clap itself ([`apply`]).

mod apply;
/// Only the default build, which has every provider, generates and checks the page.
#[cfg(all(test, feature = "openai", feature = "anthropic", feature = "llama"))]
mod docs;
mod error;
mod file;
mod keys;
pub mod mcp_servers;
mod paths;
pub mod providers;
pub mod show;
mod sources;
pub mod starter;
pub mod telemetry;
mod tighten;
mod toml_table;
pub mod trust;

use std::ffi::OsString;
use std::path::PathBuf;

use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory, FromArgMatches};

pub use error::ConfigError;
pub use keys::Key;
pub use sources::{Layers, Profile, ProjectTrust, Source};

use crate::cli::{Cli, ConfigCommand};

/// The files and the options' sources behind the parsed command line.
pub struct Loaded {
    pub matches: ArgMatches,
    pub layers: Layers,
    pub keys: Vec<Key>,
}

impl Loaded {
    /// The `planwright` command with the files' values as defaults.
    pub fn command(&self) -> clap::Command {
        apply::with_defaults(Cli::command(), &self.layers.values(&self.keys))
    }
}

/// Parses the process's command line over the config files. A bad command line exits here
/// as clap does (code 2); a bad file is a [`ConfigError`].
pub fn parse() -> Result<(Cli, Loaded), ConfigError> {
    let args: Vec<OsString> = std::env::args_os().collect();
    let keys = keys::keys(&Cli::command());
    // First pass, built-in defaults only: which file and which profile, and whether the
    // project file is to be read (not by `planwright trust`) and trusted for this run.
    let mut read_project = true;
    let mut this_run = false;
    let named_by_env;
    let (explicit, profile, help) = match Cli::command().try_get_matches_from(&args) {
        Ok(first) => (
            {
                read_project = first.subcommand_name() != Some("trust");
                this_run = first.get_flag("trust_project");
                named_by_env = first.value_source("config") == Some(ValueSource::EnvVariable);
                first.get_one::<PathBuf>("config").cloned()
            },
            first.get_one::<String>("profile").map(|name| Profile {
                name: name.clone(),
                chosen_by: match first.value_source("profile") {
                    Some(ValueSource::EnvVariable) => Source::Env(PROFILE_VAR.into()),
                    _ => Source::Flag("--profile".into()),
                },
            }),
            None,
        ),
        // `--help` is shown by the second pass, with the files' values as defaults.
        Err(e) if is_help(&e) => {
            let (explicit, profile, by_env) = chosen_for_help(&args);
            named_by_env = by_env;
            (explicit, profile, Some(e))
        }
        Err(e) => e.exit(),
    };
    // No question while showing the help.
    let ask: &dyn trust::Ask = match help {
        Some(_) => &trust::NoOne,
        None => &trust::TerminalAsk,
    };
    let trust = ProjectTrust {
        read: read_project,
        this_run,
        named_by_env,
        ask,
    };
    let mut layers = match Layers::load(explicit.as_deref(), profile, &keys, &trust) {
        Ok(layers) => layers,
        // A broken file does not hide the help: the built-in defaults are shown.
        Err(e) => match help {
            Some(help) => help.exit(),
            None => return Err(e),
        },
    };
    // A trusted folder's copied or committed `.planwright/` is adopted now (marked), so
    // every later use of it passes the guard; what cannot be is said once logging is up.
    for problem in runner::state_folder::adopt_trusted(&layers.trusted) {
        layers.notes.push(format!(
            "a trusted folder's state folder is not adopted: {problem}"
        ));
    }
    // Second pass: the files' values as the options' defaults.
    let mut command = apply::with_defaults(Cli::command(), &layers.values(&keys));
    let matches = command
        .try_get_matches_from_mut(&args)
        .unwrap_or_else(|e| e.exit());
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.format(&mut command).exit());
    Ok((
        cli,
        Loaded {
            matches,
            layers,
            keys,
        },
    ))
}

const CONFIG_VAR: &str = "PLANWRIGHT_CONFIG";
const PROFILE_VAR: &str = "PLANWRIGHT_PROFILE";

fn is_help(e: &clap::Error) -> bool {
    use clap::error::ErrorKind;
    matches!(
        e.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    )
}

/// `--config` and `--profile` (or their variables) read by hand from a command line that
/// asks for help, so that the help shows the chosen files' values as defaults; and whether
/// the file was named by `PLANWRIGHT_CONFIG`.
fn chosen_for_help(args: &[OsString]) -> (Option<PathBuf>, Option<Profile>, bool) {
    let flag = |name: &str| {
        let mut found = None;
        for (i, arg) in args.iter().enumerate() {
            let arg = arg.to_string_lossy();
            if let Some(value) = arg.strip_prefix(&format!("{name}=")) {
                found = Some(value.to_string());
            } else if arg == name {
                found = args.get(i + 1).map(|v| v.to_string_lossy().into_owned());
            }
        }
        found
    };
    let env = |var: &str| std::env::var(var).ok().filter(|v| !v.is_empty());
    let flagged = flag("--config");
    let by_env = flagged.is_none() && env(CONFIG_VAR).is_some();
    let explicit = flagged.or_else(|| env(CONFIG_VAR)).map(PathBuf::from);
    let profile = match flag("--profile") {
        Some(name) => Some(Profile {
            name,
            chosen_by: Source::Flag("--profile".into()),
        }),
        None => env(PROFILE_VAR).map(|name| Profile {
            name,
            chosen_by: Source::Env(PROFILE_VAR.into()),
        }),
    };
    (explicit, profile, by_env)
}

/// `planwright trust [PATH]`: the text to print on stdout.
pub fn trust_folder(loaded: &Loaded, folder: &std::path::Path) -> Result<String, ConfigError> {
    // The file `PLANWRIGHT_CONFIG` names is pinned too when it lies inside the folder.
    let named = match loaded.matches.value_source("config") {
        Some(ValueSource::EnvVariable) => loaded.matches.get_one::<PathBuf>("config"),
        _ => None,
    };
    trust::trust(folder, named.map(PathBuf::as_path), &loaded.keys)
}

/// `planwright config show` / `config init`: the text to print on stdout.
pub fn run(loaded: &Loaded, command: ConfigCommand) -> Result<String, ConfigError> {
    Ok(match command {
        ConfigCommand::Show { json } => {
            let settings = show::effective(loaded)?;
            if json {
                format!("{}\n", show::json(loaded, &settings))
            } else {
                show::text(loaded, &settings)
            }
        }
        ConfigCommand::Init { force } => {
            let path = starter::write(&loaded.keys, force)?;
            format!("wrote {path}: every setting, commented out (docs/configuration.md)\n")
        }
    })
}
