//! The schema, as an ordered list of migrations versioned by the one row of
//! `planwright_schema`.
//!
//! Migration `n` (1-based) is `MIGRATIONS[n - 1]`. Every missing migration is applied in one
//! transaction together with the version bump, under a transaction-level advisory lock: a
//! failed migration leaves the database as it was (PostgreSQL's DDL is transactional), and
//! several workers opening a fresh database at once apply it once. A database that is up to
//! date is only read, so a read-only server at the current version opens (and is then
//! refused by the writability check in `store.rs`). Never edit a released migration: append
//! one.

use deadpool_postgres::Object;

use crate::error::Error;

/// Migration 1: the schema of the SQLite store at its version 4 (docs/durability.md): runs
/// with their leases and queue request, plan versions, steps, the append-only event log.
/// Text that is compared or ordered (ids, times) is `COLLATE "C"`: byte order, as SQLite.
const MIGRATION_1: &str = r#"
CREATE TABLE runs (
    run_id               TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    task                 TEXT NOT NULL,
    mode                 TEXT NOT NULL,
    status               TEXT NOT NULL,
    workspace            TEXT NOT NULL,
    created_at           TEXT COLLATE "C" NOT NULL,   -- RFC 3339, UTC, 9 fractional digits
    finished_at          TEXT COLLATE "C",
    summary              TEXT,
    error                TEXT,
    llm_calls            BIGINT NOT NULL DEFAULT 0,
    prompt_tokens        BIGINT NOT NULL DEFAULT 0,
    completion_tokens    BIGINT NOT NULL DEFAULT 0,
    cached_prompt_tokens BIGINT NOT NULL DEFAULT 0,
    lease_owner          TEXT COLLATE "C",
    lease_until          TEXT COLLATE "C",
    queue_request        TEXT                          -- JSON
);
-- list_runs: newest first.
CREATE INDEX runs_by_created_at ON runs (created_at DESC, run_id);
-- claim and position: the queue by status and age.
CREATE INDEX runs_by_status ON runs (status, created_at, run_id);

-- Every version of every plan of a run; the row of a version holds its latest state.
CREATE TABLE plans (
    run_id   TEXT COLLATE "C" NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    plan_id  TEXT COLLATE "C" NOT NULL,
    version  BIGINT NOT NULL,
    title    TEXT NOT NULL,
    json     TEXT NOT NULL,             -- the whole domain Plan
    saved_at TEXT COLLATE "C" NOT NULL,
    save_seq BIGINT NOT NULL,           -- per-run save counter: orders saves exactly
    PRIMARY KEY (run_id, plan_id, version)
);
CREATE INDEX plans_by_run_save_seq ON plans (run_id, save_seq);

-- The steps of the newest version of each plan.
CREATE TABLE steps (
    run_id      TEXT COLLATE "C" NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    plan_id     TEXT COLLATE "C" NOT NULL,
    step_id     TEXT COLLATE "C" NOT NULL,
    position    BIGINT NOT NULL,
    description TEXT NOT NULL,
    kind        TEXT,
    status      TEXT NOT NULL,
    result      TEXT,
    error       TEXT,
    notes       TEXT NOT NULL,
    attempts    BIGINT NOT NULL,
    depends_on  TEXT NOT NULL,          -- JSON array of step ids
    attachments TEXT NOT NULL,          -- JSON array of workspace-relative paths
    PRIMARY KEY (run_id, plan_id, step_id)
);

-- The append-only, gap-free event log. The primary key (run_id, seq) reads a run's events
-- in order, finds its last seq, and refuses a seq two writers race for.
CREATE TABLE events (
    run_id TEXT COLLATE "C" NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    seq    BIGINT NOT NULL CHECK (seq >= 1),
    at     TEXT COLLATE "C" NOT NULL,
    type   TEXT NOT NULL,
    json   TEXT NOT NULL,               -- the whole domain Event
    PRIMARY KEY (run_id, seq)
);
CREATE FUNCTION planwright_events_are_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'events are append-only';
END
$$;
CREATE TRIGGER events_are_append_only BEFORE UPDATE ON events
    FOR EACH ROW EXECUTE FUNCTION planwright_events_are_append_only();
"#;

/// Migration 2: the run mailbox (the SQLite store's migration 5; docs/durability.md,
/// "Workers").
const MIGRATION_2: &str = r#"
CREATE TABLE run_messages (
    id        BIGSERIAL PRIMARY KEY,
    run_id    TEXT COLLATE "C" NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    owner     TEXT COLLATE "C",         -- the run's lease owner when posted (the addressee)
    posted_at TEXT COLLATE "C" NOT NULL,
    json      TEXT NOT NULL             -- the whole domain RunMessage
);
CREATE INDEX run_messages_by_run ON run_messages (run_id, owner, id);
"#;

/// Migration 3: the change feed (docs/scaling.md, "Event streams"): a committed event or
/// mailbox message notifies its run id, so followers read the store at once.
const MIGRATION_3: &str = r#"
CREATE FUNCTION planwright_notify_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('planwright_events', NEW.run_id);
    RETURN NULL;
END
$$;
CREATE TRIGGER events_notify AFTER INSERT ON events
    FOR EACH ROW EXECUTE FUNCTION planwright_notify_event();
CREATE FUNCTION planwright_notify_message() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('planwright_messages', NEW.run_id);
    RETURN NULL;
END
$$;
CREATE TRIGGER run_messages_notify AFTER INSERT ON run_messages
    FOR EACH ROW EXECUTE FUNCTION planwright_notify_message();
"#;

/// Migration 4: the queue's wake-up (docs/scaling.md, "The change feed"): a run that becomes
/// claimable (inserted queued, or its lease given up while it is queued or an interrupted
/// queue run) notifies `planwright_queue`, so idle workers claim it at once instead of on
/// their next poll. Expired leases notify nobody: the poll finds them.
const MIGRATION_4: &str = r#"
CREATE FUNCTION planwright_notify_queue() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.lease_owner IS NULL AND (NEW.status = 'queued'
        OR (NEW.queue_request IS NOT NULL AND NEW.status IN ('running', 'waiting'))) THEN
        PERFORM pg_notify('planwright_queue', '');
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER runs_notify_queue AFTER INSERT OR UPDATE OF lease_owner, status ON runs
    FOR EACH ROW EXECUTE FUNCTION planwright_notify_queue();
"#;

/// Migration 5: the named API client that submitted a run (the SQLite store's migration 6;
/// docs/security.md, "Clients"); existing runs have none.
const MIGRATION_5: &str = r#"
ALTER TABLE runs ADD COLUMN client TEXT COLLATE "C";
"#;

/// All migrations, in order.
const MIGRATIONS: &[&str] = &[
    MIGRATION_1,
    MIGRATION_2,
    MIGRATION_3,
    MIGRATION_4,
    MIGRATION_5,
];

/// The schema version this build creates and understands.
pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

/// The key of the advisory lock migrations hold (any constant; this one spells "plwr").
const MIGRATION_LOCK: i64 = 0x706c_7772;

/// The database's schema version; 0 when it has no Planwright schema yet.
pub(crate) async fn schema_version(client: &Object) -> Result<i64, Error> {
    let exists: bool = client
        .query_one("SELECT to_regclass('planwright_schema') IS NOT NULL", &[])
        .await
        .map_err(crate::error::sql("look for the schema version table"))?
        .try_get(0)
        .map_err(crate::error::sql("look for the schema version table"))?;
    if !exists {
        return Ok(0);
    }
    let row = client
        .query_opt("SELECT version FROM planwright_schema", &[])
        .await
        .map_err(crate::error::sql("read the schema version"))?;
    version_of(row.as_ref()).map_err(crate::error::sql("read the schema version"))
}

/// The version in the schema table's row; 0 without a row.
fn version_of(row: Option<&tokio_postgres::Row>) -> Result<i64, tokio_postgres::Error> {
    row.map(|r| r.try_get::<_, i32>(0).map(i64::from))
        .transpose()
        .map(|v| v.unwrap_or(0))
}

fn refuse_newer(found: i64, database: &str) -> Result<(), Error> {
    if found > i64::from(SCHEMA_VERSION) {
        return Err(Error::SchemaTooNew {
            database: database.to_string(),
            found,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(())
}

/// Brings the database up to [`SCHEMA_VERSION`]; returns the version it ends at.
pub(crate) async fn migrate(client: &mut Object, database: &str) -> Result<u32, Error> {
    let current = schema_version(client).await?;
    refuse_newer(current, database)?;
    if current == i64::from(SCHEMA_VERSION) {
        tracing::debug!(database, version = current, "schema is up to date");
        return Ok(SCHEMA_VERSION);
    }
    let failed = |number: u32| {
        let database = database.to_string();
        move |source| Error::Migration {
            database,
            number,
            source,
        }
    };
    let first = u32::try_from(current).unwrap_or(0) + 1;
    let tx = client.transaction().await.map_err(failed(first))?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(failed(first))?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS planwright_schema (
             version INTEGER NOT NULL,
             one     BOOLEAN NOT NULL DEFAULT TRUE PRIMARY KEY CHECK (one)
         )",
    )
    .await
    .map_err(failed(first))?;
    // Read again under the lock: another process may have migrated meanwhile.
    let row = tx
        .query_opt("SELECT version FROM planwright_schema", &[])
        .await
        .map_err(failed(first))?;
    let version = version_of(row.as_ref()).map_err(failed(first))?;
    refuse_newer(version, database)?;
    let done = usize::try_from(version).unwrap_or(0);
    for (index, script) in MIGRATIONS.iter().enumerate().skip(done) {
        let number = u32::try_from(index + 1).unwrap_or(u32::MAX);
        tx.batch_execute(script).await.map_err(failed(number))?;
        tracing::info!(database, migration = number, "applying schema migration");
    }
    let target = i32::try_from(SCHEMA_VERSION).unwrap_or(i32::MAX);
    tx.execute(
        "INSERT INTO planwright_schema (version) VALUES ($1)
         ON CONFLICT (one) DO UPDATE SET version = excluded.version",
        &[&target],
    )
    .await
    .map_err(failed(SCHEMA_VERSION))?;
    tx.commit().await.map_err(failed(SCHEMA_VERSION))?;
    Ok(SCHEMA_VERSION)
}
