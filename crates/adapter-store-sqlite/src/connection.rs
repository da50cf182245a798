//! Opening a connection: folders, file, pragmas.

use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::{Connection, ErrorCode};

use crate::error::Error;

/// How long a connection waits for another one's lock before giving up.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_millis(5000);

/// Pause between attempts to switch a busy file to WAL.
const WAL_RETRY_PAUSE: Duration = Duration::from_millis(10);

/// How hard each commit is pushed to disk (see the crate docs, "Durability").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// `synchronous=NORMAL`: a crash of the process loses nothing; a power loss may lose the
    /// last commits since a checkpoint.
    #[default]
    Normal,
    /// `synchronous=FULL`: every commit (every event) is fsynced; nothing committed is lost
    /// even on power loss.
    Full,
}

impl Durability {
    fn pragma(self) -> &'static str {
        match self {
            Durability::Normal => "NORMAL",
            Durability::Full => "FULL",
        }
    }
}

/// Creates missing parent folders, opens (or creates) the file and sets the pragmas.
#[cfg(test)]
pub(crate) fn open_connection(path: &Path) -> Result<Connection, Error> {
    open_connection_with(path, Durability::Normal)
}

/// Creates missing parent folders, opens (or creates) the file and sets the pragmas, with
/// the given durability.
pub(crate) fn open_connection_with(
    path: &Path,
    durability: Durability,
) -> Result<Connection, Error> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        if !parent.exists() {
            std::fs::create_dir_all(parent).map_err(|source| Error::CreateDir {
                path: parent.to_path_buf(),
                source,
            })?;
            tracing::debug!(folder = %parent.display(), "created the store's folder");
        }
    }
    let conn = Connection::open(path).map_err(|source| Error::Open {
        path: path.to_path_buf(),
        source,
    })?;
    set_pragmas(&conn, path, durability)?;
    Ok(conn)
}

fn set_pragmas(conn: &Connection, path: &Path, durability: Durability) -> Result<(), Error> {
    let pragma = |pragma: &'static str| {
        move |source| Error::Pragma {
            path: path.to_path_buf(),
            pragma,
            source,
        }
    };
    // First, so that switching to WAL already waits for other connections' locks.
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(pragma("busy_timeout"))?;
    let mode = switch_to_wal(conn).map_err(pragma("journal_mode"))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(Error::NotWal {
            path: path.to_path_buf(),
            actual: mode,
        });
    }
    conn.pragma_update(None, "synchronous", durability.pragma())
        .map_err(pragma("synchronous"))?;
    conn.pragma_update(None, "foreign_keys", "ON")
        .map_err(pragma("foreign_keys"))?;
    Ok(())
}

/// Sets `journal_mode=WAL` and returns the mode SQLite reports.
///
/// Switching a fresh file to WAL needs an exclusive lock, and SQLite answers `SQLITE_BUSY`
/// at once (without calling the busy handler) while another connection holds a lock on
/// it, e.g. when several handles open a new file together. So this retries, within the
/// busy timeout.
fn switch_to_wal(conn: &Connection) -> rusqlite::Result<String> {
    let deadline = Instant::now() + BUSY_TIMEOUT;
    loop {
        match conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0)) {
            Err(e)
                if e.sqlite_error_code() == Some(ErrorCode::DatabaseBusy)
                    && Instant::now() < deadline =>
            {
                tracing::debug!("database busy while switching to WAL; retrying");
                std::thread::sleep(WAL_RETRY_PAUSE);
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_connection_gets_the_agreed_pragmas() {
        let dir = tempfile::tempdir().expect("temp dir");
        let conn = open_connection(&dir.path().join("p.db")).expect("open");
        let text = |name: &str| -> String {
            conn.pragma_query_value(None, name, |r| r.get::<_, rusqlite::types::Value>(0))
                .map(|v| match v {
                    rusqlite::types::Value::Integer(i) => i.to_string(),
                    rusqlite::types::Value::Text(t) => t,
                    other => format!("{other:?}"),
                })
                .expect("pragma")
        };
        assert_eq!(text("journal_mode"), "wal");
        assert_eq!(text("busy_timeout"), "5000");
        assert_eq!(text("foreign_keys"), "1");
        assert_eq!(text("synchronous"), "1", "NORMAL");
    }
}
