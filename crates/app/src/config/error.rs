//! Why the configuration cannot be used. Every message is one line; `main` reports it as a
//! usage error (exit code 2) before anything starts.

/// A configuration error.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A file's content: `file:line: problem`.
    #[error("{file}:{line}: {problem}")]
    Invalid {
        file: String,
        line: usize,
        problem: String,
    },
    /// A file that cannot be read.
    #[error("cannot read {file}: {error}")]
    Unreadable { file: String, error: String },
    /// `--profile NAME` (or `profile = "NAME"`) names no `[profiles.NAME]` table.
    #[error("no profile \"{name}\" (chosen by {chosen_by}) in {searched}")]
    NoProfile {
        name: String,
        chosen_by: String,
        searched: String,
    },
    /// `config init` without `--force` on an existing file.
    #[error("{file} exists; `planwright config init --force` overwrites it")]
    Exists { file: String },
    /// `config init` could not write its file.
    #[error("cannot write {file}: {error}")]
    Unwritable { file: String, error: String },
    /// A trusted folder's project file sets a pinned value (where data goes, what runs,
    /// what protects the files) that `planwright trust` has not recorded (docs/security.md).
    #[error(
        "{file} sets {shown}, which this folder's trust does not cover (new or changed since \
         it was trusted); `planwright trust` shows and accepts it"
    )]
    Unpinned { file: String, shown: String },
    /// A trusted folder's project file that was not there when the folder was trusted
    /// (docs/security.md).
    #[error(
        "{file} was not there when this folder was trusted (a run may have written it), so \
         it is not used; it sets: {shown}; `planwright trust` shows and accepts it"
    )]
    NewProjectFile { file: String, shown: String },
    /// The options in effect are not valid (e.g. an environment variable's value).
    #[error("{0}")]
    Options(String),
}

impl From<ConfigError> for crate::error::AppError {
    fn from(e: ConfigError) -> crate::error::AppError {
        crate::error::AppError::Config(e.to_string())
    }
}
