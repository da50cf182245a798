//! Configuration files (docs/configuration.md): the project's `./planwright.toml` (or
//! `--config FILE`) and the user's `~/.config/planwright/config.toml`, with named profiles.
//! Every option of `run`, `resume`, `serve`, `worker` and the global `--db` can be set in
//! them ([`keys`] reads the list from the clap definitions); secrets cannot, only the name
//! of the variable holding one (`api_key_env`).
//!
//! Precedence: flags > environment > the chosen profile > the files' top level (project
//! over user) > built-in defaults, applied by clap itself ([`apply`]).

mod apply;
#[cfg(test)]
mod docs;
mod error;
mod file;
mod keys;
pub mod show;
mod sources;
pub mod starter;

use std::ffi::OsString;
use std::path::PathBuf;

use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory, FromArgMatches};

pub use error::ConfigError;
pub use keys::Key;
pub use sources::{Layers, Profile, Source};

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
    // First pass, built-in defaults only: which file and which profile.
    let first = Cli::command()
        .try_get_matches_from(&args)
        .unwrap_or_else(|e| e.exit());
    let keys = keys::keys(&Cli::command());
    let explicit = first.get_one::<PathBuf>("config").cloned();
    let profile = first.get_one::<String>("profile").map(|name| Profile {
        name: name.clone(),
        chosen_by: match first.value_source("profile") {
            Some(ValueSource::EnvVariable) => Source::Env("PLANWRIGHT_PROFILE".into()),
            _ => Source::Flag("--profile".into()),
        },
    });
    let layers = Layers::load(explicit.as_deref(), profile, &keys)?;
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
