//! The crate's one error type.

use std::path::PathBuf;

use store_sql::RecordError;

/// Everything that can go wrong opening or using a [`SqliteStore`](crate::SqliteStore).
///
/// Through the [`RunStore`](domain::ports::RunStore) port these become
/// [`domain::StoreError`]s whose message also names the operation, the run and the file.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot create folder {path}: {source}")]
    CreateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot open SQLite database {path}: {source}")]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("cannot set PRAGMA {pragma} on {path}: {source}")]
    Pragma {
        path: PathBuf,
        pragma: &'static str,
        source: rusqlite::Error,
    },
    #[error("{path}: journal_mode is '{actual}', expected 'wal' (is this a regular file?)")]
    NotWal { path: PathBuf, actual: String },
    #[error("migration {number} of {path} failed: {source}")]
    Migration {
        path: PathBuf,
        number: u32,
        source: rusqlite::Error,
    },
    #[error(
        "{path} has schema version {found}, newer than version {supported} known to this build; \
         use a newer Planwright or another database file"
    )]
    SchemaTooNew {
        path: PathBuf,
        found: u32,
        supported: u32,
    },
    /// A trigger or view Planwright's migrations did not create (a planted database could
    /// redirect or rewrite runs with one): the file is not used.
    #[error(
        "{path} has a {kind} `{name}` that Planwright did not create; the file is not used \
         (docs/security.md)"
    )]
    Foreign {
        path: PathBuf,
        kind: String,
        name: String,
    },
    #[error("{path} has an invalid schema version {found}")]
    InvalidSchemaVersion { path: PathBuf, found: i64 },
    /// A statement failed; `context` says which.
    #[error("{context}: {source}")]
    Sqlite {
        context: &'static str,
        source: rusqlite::Error,
    },
    /// A record refused or unreadable, whatever the database (shared with the PostgreSQL
    /// store: an unknown or existing run, an event out of order, a bad stored value).
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error("the blocking store task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
}

impl Error {
    /// The port's kind for this failure (see [`domain::StoreError`]).
    pub fn kind(&self) -> fn(String) -> domain::StoreError {
        use domain::StoreError as Kind;
        match self {
            Error::Record(e) => e.kind(),
            Error::NotWal { .. }
            | Error::SchemaTooNew { .. }
            | Error::InvalidSchemaVersion { .. }
            | Error::Foreign { .. } => Kind::Corrupt,
            Error::Sqlite { source, .. } if is_constraint(source) => Kind::Conflict,
            Error::CreateDir { .. }
            | Error::Open { .. }
            | Error::Pragma { .. }
            | Error::Migration { .. }
            | Error::Sqlite { .. }
            | Error::Task(_) => Kind::Unavailable,
        }
    }
}

fn is_constraint(e: &rusqlite::Error) -> bool {
    matches!(
        e,
        rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::ConstraintViolation
    )
}

/// Wraps a rusqlite error with what was being done.
pub(crate) fn sql(context: &'static str) -> impl FnOnce(rusqlite::Error) -> Error {
    move |source| Error::Sqlite { context, source }
}
