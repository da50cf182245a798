//! The schema, as an ordered list of migrations versioned by `PRAGMA user_version`.
//!
//! Migration `n` (1-based) is `MIGRATIONS[n - 1]`; after it, `user_version` is `n`. Each runs
//! in its own `BEGIN IMMEDIATE` transaction together with its `user_version` bump, so a
//! failed migration leaves the file at the previous version, and two processes opening a
//! fresh file at once cannot both apply it. Never edit a released migration: append one.

use std::path::Path;

use rusqlite::{Connection, TransactionBehavior};

use crate::error::Error;

/// Migration 1: runs, plan versions, steps, events.
const MIGRATION_1: &str = r#"
CREATE TABLE runs (
    run_id            TEXT NOT NULL PRIMARY KEY,
    task              TEXT NOT NULL,
    mode              TEXT NOT NULL,
    status            TEXT NOT NULL,
    workspace         TEXT NOT NULL,
    created_at        TEXT NOT NULL,   -- RFC 3339, UTC, 9 fractional digits
    finished_at       TEXT,
    summary           TEXT,
    error             TEXT,
    llm_calls         INTEGER NOT NULL DEFAULT 0,
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0
);
-- list_runs: newest first.
CREATE INDEX runs_by_created_at ON runs (created_at DESC, run_id);

-- Every version of every plan of a run; the row of a version holds its latest state.
CREATE TABLE plans (
    run_id   TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    plan_id  TEXT NOT NULL,
    version  INTEGER NOT NULL,
    title    TEXT NOT NULL,
    json     TEXT NOT NULL,             -- the whole domain Plan
    saved_at TEXT NOT NULL,
    save_seq INTEGER NOT NULL,          -- per-run save counter: orders saves exactly
    PRIMARY KEY (run_id, plan_id, version)
);
-- latest_plan: the most recently saved plan of a run.
CREATE INDEX plans_by_run_save_seq ON plans (run_id, save_seq);

-- The steps of the newest version of each plan.
CREATE TABLE steps (
    run_id      TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    plan_id     TEXT NOT NULL,
    step_id     TEXT NOT NULL,
    position    INTEGER NOT NULL,
    description TEXT NOT NULL,
    kind        TEXT,
    status      TEXT NOT NULL,
    result      TEXT,
    error       TEXT,
    notes       TEXT NOT NULL,
    attempts    INTEGER NOT NULL,
    depends_on  TEXT NOT NULL,          -- JSON array of step ids
    attachments TEXT NOT NULL,          -- JSON array of workspace-relative paths
    PRIMARY KEY (run_id, plan_id, step_id)
);

-- The append-only, gap-free event log. The primary key (run_id, seq) is the index used to
-- read a run's events in order and to find its last seq.
CREATE TABLE events (
    run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    seq    INTEGER NOT NULL CHECK (seq >= 1),
    at     TEXT NOT NULL,
    type   TEXT NOT NULL,
    json   TEXT NOT NULL,               -- the whole domain Event
    PRIMARY KEY (run_id, seq)
);
CREATE TRIGGER events_are_append_only BEFORE UPDATE ON events
BEGIN
    SELECT RAISE(ABORT, 'events are append-only');
END;
"#;

/// Migration 2: the process that runs a run, so a `running` run whose process is gone can be
/// shown as interrupted (and resumed).
const MIGRATION_2: &str = r#"
ALTER TABLE runs ADD COLUMN owner_pid INTEGER;
"#;

/// Migration 3: the part of a run's prompt tokens served from a cache (existing runs: 0).
const MIGRATION_3: &str = r#"
ALTER TABLE runs ADD COLUMN cached_prompt_tokens INTEGER NOT NULL DEFAULT 0;
"#;

/// Migration 4: leases instead of process ids (docs/durability.md, "Leases"), and the work
/// queue: a queued run keeps what its client asked for, and workers find the next one by
/// status and age. `owner_pid` stays, unused, for files written by older builds.
const MIGRATION_4: &str = r#"
ALTER TABLE runs ADD COLUMN lease_owner TEXT;
ALTER TABLE runs ADD COLUMN lease_until TEXT;
ALTER TABLE runs ADD COLUMN queue_request TEXT;
CREATE INDEX runs_by_status ON runs (status, created_at);
"#;

/// Migration 5: the run mailbox (cancellation and answers for a run executed by another
/// process; docs/durability.md, "Workers").
const MIGRATION_5: &str = r#"
CREATE TABLE run_messages (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id    TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    owner     TEXT,                     -- the run's lease owner when posted (the addressee)
    posted_at TEXT NOT NULL,
    json      TEXT NOT NULL             -- the whole domain RunMessage
);
CREATE INDEX run_messages_by_run ON run_messages (run_id, owner, id);
"#;

/// Migration 6: the named API client that submitted a run (docs/security.md, "Clients");
/// existing runs have none.
const MIGRATION_6: &str = r#"
ALTER TABLE runs ADD COLUMN client TEXT;
"#;

/// All migrations, in order.
const MIGRATIONS: &[&str] = &[
    MIGRATION_1,
    MIGRATION_2,
    MIGRATION_3,
    MIGRATION_4,
    MIGRATION_5,
    MIGRATION_6,
];

/// The migrations up to `version`, for tests that build a file of an earlier version.
#[doc(hidden)]
pub fn migrate_to(conn: &mut Connection, path: &Path, version: u32) -> Result<u32, Error> {
    let n = (version as usize).min(MIGRATIONS.len());
    apply(conn, path, &MIGRATIONS[..n])
}

/// The schema version this build creates and understands.
pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

/// Refuses a file holding a trigger or view that no migration creates, word for word.
pub(crate) fn refuse_foreign(conn: &Connection, path: &Path) -> Result<(), Error> {
    let mut statement = conn
        .prepare("SELECT type, name, sql FROM sqlite_master WHERE type IN ('trigger', 'view')")
        .map_err(crate::error::sql("read the schema"))?;
    let rows = statement
        .query_map([], |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, Option<String>>(2)?,
            ))
        })
        .map_err(crate::error::sql("read the schema"))?;
    for row in rows {
        let (kind, name, sql) = row.map_err(crate::error::sql("read the schema"))?;
        let ours = kind == "trigger"
            && sql.is_some_and(|sql| {
                MIGRATIONS
                    .iter()
                    .any(|m| m.contains(&format!("{sql};")) && sql.contains(&name))
            });
        if !ours {
            return Err(Error::Foreign {
                path: path.to_path_buf(),
                kind,
                name,
            });
        }
    }
    Ok(())
}

/// The file's `user_version`.
pub(crate) fn user_version(conn: &Connection, path: &Path) -> Result<u32, Error> {
    let raw: i64 = conn
        .pragma_query_value(None, "user_version", |row| row.get(0))
        .map_err(crate::error::sql("read PRAGMA user_version"))?;
    u32::try_from(raw).map_err(|_| Error::InvalidSchemaVersion {
        path: path.to_path_buf(),
        found: raw,
    })
}

fn refuse_newer(version: u32, known: u32, path: &Path) -> Result<(), Error> {
    if version > known {
        return Err(Error::SchemaTooNew {
            path: path.to_path_buf(),
            found: version,
            supported: known,
        });
    }
    Ok(())
}

/// Brings the file up to [`SCHEMA_VERSION`]; returns the version it ends at.
pub(crate) fn migrate(conn: &mut Connection, path: &Path) -> Result<u32, Error> {
    apply(conn, path, MIGRATIONS)
}

/// Applies the `migrations` the file does not have yet.
fn apply(conn: &mut Connection, path: &Path, migrations: &[&str]) -> Result<u32, Error> {
    let known = u32::try_from(migrations.len()).unwrap_or(u32::MAX);
    let current = user_version(conn, path)?;
    refuse_newer(current, known, path)?;
    if current == known {
        tracing::debug!(path = %path.display(), version = current, "schema is up to date");
        return Ok(current);
    }
    loop {
        let failed = |number: u32| {
            move |source| Error::Migration {
                path: path.to_path_buf(),
                number,
                source,
            }
        };
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(failed(current + 1))?;
        // Read again under the write lock: another connection may have migrated meanwhile.
        let version = user_version(&tx, path)?;
        refuse_newer(version, known, path)?;
        let Some(script) = migrations.get(version as usize) else {
            return Ok(version);
        };
        let number = version + 1;
        tx.execute_batch(script).map_err(failed(number))?;
        tx.pragma_update(None, "user_version", number)
            .map_err(failed(number))?;
        tx.commit().map_err(failed(number))?;
        tracing::info!(path = %path.display(), migration = number, "applied schema migration");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tables(conn: &Connection) -> Vec<String> {
        let mut stmt = conn
            .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
            .expect("prepare");
        stmt.query_map([], |r| r.get(0))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows")
    }

    #[test]
    fn a_failing_migration_rolls_back_and_leaves_the_previous_version() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("m.db");
        let mut conn = Connection::open(&path).expect("open");
        let scripts = [
            "CREATE TABLE a (x INTEGER);",
            "CREATE TABLE b (x INTEGER); CREATE TABLE broken (;",
        ];
        let err = apply(&mut conn, &path, &scripts).expect_err("migration 2 is broken");
        assert!(matches!(err, Error::Migration { number: 2, .. }), "{err:?}");
        assert!(err.to_string().contains("migration 2"), "{err}");
        assert_eq!(user_version(&conn, &path).expect("version"), 1);
        assert_eq!(tables(&conn), ["a"], "migration 2 left nothing behind");

        let fixed = ["CREATE TABLE a (x INTEGER);", "CREATE TABLE b (x INTEGER);"];
        assert_eq!(apply(&mut conn, &path, &fixed).expect("applies"), 2);
        assert_eq!(tables(&conn), ["a", "b"]);
        assert_eq!(apply(&mut conn, &path, &fixed).expect("no-op"), 2);
    }

    #[test]
    fn the_schema_version_is_the_number_of_migrations() {
        assert_eq!(SCHEMA_VERSION as usize, MIGRATIONS.len());
    }
}
