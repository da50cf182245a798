//! Where runs live: a SQLite file (`--db PATH`, the default) or a PostgreSQL server
//! (`--db postgres://...`), chosen by the value of `--db` / `PLANWRIGHT_DB`
//! (docs/scaling.md). Opens the store adapter behind the domain's store ports.

use std::convert::Infallible;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

use domain::ports::{RunChanges, RunMailbox, RunStore, WorkQueue};

use crate::RunnerError;

/// The database named by `--db`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Database {
    /// A SQLite file (created with its folders when missing).
    Sqlite(PathBuf),
    /// A PostgreSQL connection URL (`postgres://` or `postgresql://`).
    Postgres(String),
}

impl FromStr for Database {
    type Err = Infallible;

    fn from_str(s: &str) -> Result<Database, Infallible> {
        let lower = s.trim_start().to_ascii_lowercase();
        Ok(
            if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
                Database::Postgres(s.trim().to_string())
            } else {
                Database::Sqlite(PathBuf::from(s))
            },
        )
    }
}

impl std::fmt::Display for Database {
    /// The path, or the URL without its password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Database::Sqlite(path) => write!(f, "{}", path.display()),
            Database::Postgres(url) => f.write_str(&without_password(url)),
        }
    }
}

/// `postgres://user:secret@host/db` → `postgres://user:***@host/db`.
fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (authority, tail) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***@{host}{tail}"),
            None => url.to_string(),
        },
        None => url.to_string(),
    }
}

/// A run store with the work queue and the run mailbox on the same database (`planwright
/// serve` and `planwright worker`; `run` and `resume` use the store).
pub struct QueueStore {
    pub store: Arc<dyn RunStore>,
    pub queue: Arc<dyn WorkQueue>,
    pub mailbox: Arc<dyn RunMailbox>,
    /// Wake-ups when a run's events or mailbox change (PostgreSQL: LISTEN/NOTIFY).
    pub changes: Arc<dyn RunChanges>,
}

impl Database {
    /// The folder of this machine's files that go with the database (the server's token):
    /// the SQLite file's folder, else `./.planwright`.
    pub fn local_folder(&self) -> PathBuf {
        match self {
            Database::Sqlite(path) => path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."))
                .to_path_buf(),
            Database::Postgres(_) => PathBuf::from(".planwright"),
        }
    }

    /// Where the runs of `planwright run` keep what goes with them (input copies,
    /// checkpoints, and the workspace when none is given; docs/checkpoints.md): beside the
    /// database, so a run writes nothing into the folder it was started from unless its
    /// database is there. A SQLite file in a state folder (`./.planwright/planwright.db`)
    /// keeps them in that folder's `runs/`; one elsewhere in `.planwright/runs` beside it
    /// (a state folder Planwright creates and marks); a PostgreSQL database in the user's
    /// state folder ([`crate::state_folder::user_state_dir`]).
    pub fn runs_root(&self) -> PathBuf {
        match self {
            Database::Sqlite(_) => {
                let folder = self.local_folder();
                if folder
                    .file_name()
                    .is_some_and(|n| n == crate::state_folder::STATE_FOLDER)
                {
                    folder.join("runs")
                } else {
                    folder.join(crate::state_folder::STATE_FOLDER).join("runs")
                }
            }
            Database::Postgres(_) => crate::state_folder::user_state_dir()
                .map(|dir| dir.join("runs"))
                .unwrap_or_else(|| PathBuf::from(crate::workspace::DEFAULT_WORKSPACE_ROOT)),
        }
    }

    /// Whether several hosts can share it (a server then executes no runs by default:
    /// `planwright worker` processes do).
    pub fn is_shared(&self) -> bool {
        matches!(self, Database::Postgres(_))
    }

    /// Opens the database (migrating its schema) with the store, queue and mailbox on it.
    pub async fn open(&self) -> Result<QueueStore, RunnerError> {
        match self {
            Database::Sqlite(path) => {
                // Not a copied or committed `.planwright/`, not another user's file.
                crate::state_folder::guard(path)?;
                open_sqlite(path)
            }
            Database::Postgres(url) => open_postgres(url, self).await,
        }
    }
}

#[cfg(feature = "store-sqlite")]
fn open_sqlite(path: &Path) -> Result<QueueStore, RunnerError> {
    let store = adapter_store_sqlite::SqliteStore::open_with(path, durability()?).map_err(|e| {
        RunnerError::Config(format!("cannot open the database {}: {e}", path.display()))
    })?;
    Ok(QueueStore {
        store: Arc::new(store.clone()),
        queue: Arc::new(store.clone()),
        mailbox: Arc::new(store.clone()),
        changes: Arc::new(store),
    })
}

#[cfg(not(feature = "store-sqlite"))]
fn open_sqlite(_path: &Path) -> Result<QueueStore, RunnerError> {
    Err(RunnerError::Config(
        "this planwright was built without the SQLite store (enable the `store-sqlite` \
         feature), so --db must be a postgres:// URL"
            .into(),
    ))
}

#[cfg(feature = "store-sqlite")]
fn durability() -> Result<adapter_store_sqlite::Durability, RunnerError> {
    match std::env::var("PLANWRIGHT_DB_SYNC").ok().as_deref() {
        None | Some("") | Some("normal") => Ok(adapter_store_sqlite::Durability::Normal),
        Some("full") => Ok(adapter_store_sqlite::Durability::Full),
        Some(other) => Err(RunnerError::Config(format!(
            "PLANWRIGHT_DB_SYNC must be `normal` or `full`, not `{other}`"
        ))),
    }
}

#[cfg(feature = "store-postgres")]
async fn open_postgres(url: &str, db: &Database) -> Result<QueueStore, RunnerError> {
    let store = adapter_store_postgres::PostgresStore::open(url)
        .await
        .map_err(|e| RunnerError::Config(format!("cannot open the database {db}: {e}")))?;
    Ok(QueueStore {
        store: Arc::new(store.clone()),
        queue: Arc::new(store.clone()),
        mailbox: Arc::new(store.clone()),
        changes: Arc::new(store),
    })
}

#[cfg(not(feature = "store-postgres"))]
async fn open_postgres(_url: &str, db: &Database) -> Result<QueueStore, RunnerError> {
    Err(RunnerError::Config(format!(
        "this planwright was built without the PostgreSQL store (enable the `store-postgres` \
         feature), so it cannot open {db}"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_is_postgres_and_anything_else_a_file() {
        assert_eq!(
            "postgres://u:p@h:5432/db".parse::<Database>(),
            Ok(Database::Postgres("postgres://u:p@h:5432/db".into()))
        );
        assert!(matches!(
            "PostgreSQL://h/db".parse::<Database>(),
            Ok(Database::Postgres(_))
        ));
        assert_eq!(
            "./.planwright/planwright.db".parse::<Database>(),
            Ok(Database::Sqlite(PathBuf::from(
                "./.planwright/planwright.db"
            )))
        );
    }

    #[test]
    fn a_password_is_never_shown() {
        let db: Database = "postgres://pw:s3cret@db.internal:5432/runs?sslmode=require"
            .parse()
            .expect("parses");
        assert_eq!(
            db.to_string(),
            "postgres://pw:***@db.internal:5432/runs?sslmode=require"
        );
        let db: Database = "postgres://db.internal/runs".parse().expect("parses");
        assert_eq!(db.to_string(), "postgres://db.internal/runs");
    }

    #[test]
    fn the_token_lives_beside_a_sqlite_file() {
        let db: Database = "/data/pw/runs.db".parse().expect("parses");
        assert_eq!(db.local_folder(), PathBuf::from("/data/pw"));
        let db: Database = "runs.db".parse().expect("parses");
        assert_eq!(db.local_folder(), PathBuf::from("."));
    }
}
