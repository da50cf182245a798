//! Where settings come from: the config files found (the project's `./planwright.toml` or
//! `--config FILE`, then the user's), the profile chosen, and each value's source.
//! Precedence, highest first: flag, environment, the chosen profile in the project file,
//! in the user file, the project file's top level, the user file's, the built-in default.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::error::ConfigError;
use super::file::{self, ConfigFile, Entry};
use super::keys::Key;
use super::paths::user_file;
use super::tighten;
use super::trust::{self, Ask, Decision, ProjectFile, Trusted};

/// Which config file a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// `./planwright.toml`.
    Project,
    /// `--config FILE` (in place of the project's file).
    Explicit,
    /// `$XDG_CONFIG_HOME/planwright/config.toml`, else `~/.config/planwright/config.toml`.
    User,
}

impl Level {
    pub fn name(self) -> &'static str {
        match self {
            Level::Project => "project",
            Level::Explicit => "--config",
            Level::User => "user",
        }
    }
}

/// A config file looked for, and its settings when it exists.
#[derive(Debug, Clone)]
pub struct Located {
    pub path: PathBuf,
    pub level: Level,
    pub file: Option<ConfigFile>,
}

/// Where a value comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The command line (`--model`).
    Flag(String),
    /// An environment variable.
    Env(String),
    /// A config file, in a profile or at its top level.
    File {
        file: String,
        profile: Option<String>,
    },
    /// The built-in default.
    Default,
    /// No value.
    Unset,
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Flag(flag) => write!(f, "flag {flag}"),
            Source::Env(var) => write!(f, "env {var}"),
            Source::File {
                file,
                profile: None,
            } => f.write_str(file),
            Source::File {
                file,
                profile: Some(p),
            } => write!(f, "{file}, profile {p}"),
            Source::Default => f.write_str("default"),
            Source::Unset => f.write_str("not set"),
        }
    }
}

/// The profile in use and what chose it.
#[derive(Debug, Clone)]
pub struct Profile {
    pub name: String,
    pub chosen_by: Source,
}

/// The config files, highest first, and the profile in use.
#[derive(Debug, Clone)]
pub struct Layers {
    pub files: Vec<Located>,
    pub profile: Option<Profile>,
    /// Warnings to show once logging is set up: an ignored project file, dropped values.
    pub notes: Vec<String>,
    /// The folders trusted in this process.
    pub trusted: Trusted,
}

/// How the project file of the working folder is treated (docs/security.md).
pub struct ProjectTrust<'a> {
    /// Read it at all (not for `planwright trust`, which reads it itself).
    pub read: bool,
    /// `--trust-project`: trust the folder for this run.
    pub this_run: bool,
    /// The explicit file was named by `PLANWRIGHT_CONFIG`, not `--config`: one inside the
    /// working folder is a project file (trusted and pinned), not the user's own choice.
    pub named_by_env: bool,
    /// Who confirms a folder or a pinned value that is new.
    pub ask: &'a dyn Ask,
}

impl Layers {
    /// Reads the config files. `explicit`: `--config FILE`; `profile`: `--profile` /
    /// `PLANWRIGHT_PROFILE` and its source; `trust`: how the project file is treated.
    pub fn load(
        explicit: Option<&Path>,
        profile: Option<Profile>,
        keys: &[Key],
        trust: &ProjectTrust<'_>,
    ) -> Result<Layers, ConfigError> {
        let user = user_file()
            .map(|path| read(&path, Level::User, keys, false))
            .transpose()?;
        let recorded = user
            .as_ref()
            .and_then(|u| u.file.as_ref())
            .map(|f| f.trusted_projects.clone())
            .unwrap_or_default();
        let mut trusted = Trusted {
            recorded: recorded.keys().cloned().collect(),
            this_run: None,
        };
        if trust.this_run {
            trusted.this_run = trust::folder_key(Path::new(".")).ok();
        }
        let mut notes = Vec::new();
        let mut files = Vec::new();
        // A file `PLANWRIGHT_CONFIG` names inside the working folder (a repository's
        // `.envrc` may set it) takes the project file's place and is trusted like it.
        let project = match explicit {
            Some(path) if trust.named_by_env => ProjectFile::inside(Path::new("."), path),
            Some(_) => None,
            None => Some(ProjectFile::default_file()),
        };
        match (explicit, project) {
            (_, Some(_)) if !trust.read => {}
            (Some(path), None) => files.push(read(path, Level::Explicit, keys, true)?),
            (None, None) => {}
            (_, Some(project)) => {
                let decision = trust::decide(&project, &recorded, trust.this_run, trust.ask, keys)?;
                let file = match decision {
                    Decision::Absent => None,
                    Decision::Ignored { note } => {
                        notes.push(note);
                        None
                    }
                    Decision::Read(file) => {
                        // Trusted: recorded, accepted in a terminal, or for this run.
                        if let Ok(key) = trust::folder_key(Path::new(".")) {
                            trusted.recorded.insert(key);
                        }
                        Some(*file)
                    }
                };
                files.push(Located {
                    path: project.path,
                    level: Level::Project,
                    file,
                });
            }
        }
        files.extend(user);
        notes.extend(
            files
                .iter()
                .filter_map(|l| l.file.as_ref())
                .flat_map(|f| f.notes.iter().cloned()),
        );
        let profile = profile.or_else(|| {
            files.iter().find_map(|l| {
                let file = l.file.as_ref()?;
                Some(Profile {
                    name: file.profile.clone()?,
                    chosen_by: Source::File {
                        file: file.shown.clone(),
                        profile: None,
                    },
                })
            })
        });
        // A project file only tightens the user's sandbox, approval policy and rules.
        let user_settings = files
            .iter()
            .find(|l| l.level == Level::User)
            .and_then(|l| l.file.clone());
        for located in files.iter_mut().filter(|l| l.level == Level::Project) {
            if let Some(file) = located.file.as_mut() {
                let profile = profile.as_ref().map(|p| p.name.as_str());
                notes.extend(tighten::tighten(
                    file,
                    user_settings.as_ref(),
                    profile,
                    keys,
                ));
            }
        }
        let layers = Layers {
            files,
            profile,
            notes,
            trusted,
        };
        if let Some(p) = &layers.profile {
            if !layers.parsed().any(|f| f.profiles.contains_key(&p.name)) {
                let searched: Vec<String> = layers
                    .files
                    .iter()
                    .map(|l| l.path.display().to_string())
                    .collect();
                return Err(ConfigError::NoProfile {
                    name: p.name.clone(),
                    chosen_by: p.chosen_by.to_string(),
                    searched: searched.join(" or "),
                });
            }
        }
        Ok(layers)
    }

    fn parsed(&self) -> impl Iterator<Item = &ConfigFile> {
        self.files.iter().filter_map(|l| l.file.as_ref())
    }

    /// The files' value of `key` and its source, by precedence.
    pub fn get(&self, key: &str) -> Option<(&Entry, Source)> {
        let profile = self.profile.as_ref().map(|p| &p.name);
        let in_profiles = self.parsed().find_map(|f| {
            let name = profile?;
            let entry = f.profiles.get(name)?.get(key)?;
            Some((
                entry,
                Source::File {
                    file: f.shown.clone(),
                    profile: Some(name.clone()),
                },
            ))
        });
        in_profiles.or_else(|| {
            self.parsed().find_map(|f| {
                let entry = f.top.get(key)?;
                Some((
                    entry,
                    Source::File {
                        file: f.shown.clone(),
                        profile: None,
                    },
                ))
            })
        })
    }

    /// The `[mcp_servers.NAME]` declarations in effect, by name, with the file declaring
    /// each: the project's (or `--config`'s) entry replaces the user's of the same name.
    pub fn mcp_servers(&self) -> BTreeMap<String, (super::mcp_servers::Declared, String)> {
        let mut servers = BTreeMap::new();
        for file in self.parsed() {
            for (name, declared) in &file.mcp_servers {
                servers
                    .entry(name.clone())
                    .or_insert_with(|| (declared.clone(), file.shown.clone()));
            }
        }
        servers
    }

    /// The `[providers.NAME]` tables in effect, by provider: each key from the project's
    /// (or `--config`'s) table when it sets it, else from the user's.
    pub fn provider_tables(&self) -> BTreeMap<String, domain::ports::ProviderTable> {
        let mut merged: BTreeMap<String, domain::ports::ProviderTable> = BTreeMap::new();
        for file in self.parsed() {
            for (name, table) in &file.providers {
                let into = merged.entry(name.clone()).or_default();
                for (key, value) in &table.values {
                    into.entry(key.clone()).or_insert_with(|| value.clone());
                }
            }
        }
        merged
    }

    /// The files with a `[providers.NAME]` table: the table's name, the file and its line,
    /// by precedence.
    pub fn provider_table_lines(&self) -> Vec<(String, String, usize)> {
        self.parsed()
            .flat_map(|f| {
                f.providers
                    .iter()
                    .map(|(name, t)| (name.clone(), f.shown.clone(), t.line))
            })
            .collect()
    }

    /// The `[telemetry]` values in effect, by key, with the file setting each: the
    /// project's (or `--config`'s) beats the user's.
    pub fn telemetry(&self) -> BTreeMap<String, (super::telemetry::Value, String)> {
        let mut values = BTreeMap::new();
        for file in self.parsed() {
            for (name, value) in &file.telemetry {
                values
                    .entry(name.clone())
                    .or_insert_with(|| (value.clone(), file.shown.clone()));
            }
        }
        values
    }

    /// Every key the files set, with its values.
    pub fn values(&self, keys: &[Key]) -> BTreeMap<String, Vec<String>> {
        keys.iter()
            .filter_map(|k| Some((k.name.clone(), self.get(&k.name)?.0.values.clone())))
            .collect()
    }
}

/// Reads and parses one file; a missing file is no error unless `required`.
fn read(path: &Path, level: Level, keys: &[Key], required: bool) -> Result<Located, ConfigError> {
    let shown = path.display().to_string();
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => {
            return Ok(Located {
                path: path.to_path_buf(),
                level,
                file: None,
            })
        }
        Err(e) => {
            return Err(ConfigError::Unreadable {
                file: shown,
                error: e.to_string(),
            })
        }
    };
    Ok(Located {
        path: path.to_path_buf(),
        level,
        file: Some(file::parse(&shown, &text, keys)?),
    })
}
