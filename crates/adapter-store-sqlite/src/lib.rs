//! # adapter-store-sqlite
//!
//! [`SqliteStore`] implements the domain ports [`domain::ports::RunStore`] and
//! [`domain::ports::WorkQueue`] (leases and the durable queue: `leases.rs`) and
//! [`domain::ports::RunMailbox`] (`mailbox.rs`) over one embedded
//! SQLite file. It keeps:
//!
//! - **runs**: one row per run (task, mode, status, workspace, timestamps, summary, error,
//!   token usage);
//! - **plan versions**: every `(plan id, version)` a run saved, each with the full plan JSON
//!   (re-saving a version replaces that version's row, so each version holds its latest state);
//! - **steps**: the steps of each plan's newest version, one row per step, for querying;
//! - **the event log**: append-only and gap-free; an event is accepted only if its `seq` is
//!   exactly the run's last `seq + 1`.
//!
//! The dependency points one way: this crate depends on `domain`, and `domain` must never
//! depend on this crate (nor on rusqlite). The app wires a [`SqliteStore`] in as an
//! `Arc<dyn RunStore>`.
//!
//! ## Concurrency
//!
//! rusqlite is blocking, so each handle keeps its `Connection` behind a `std::sync::Mutex`
//! in an `Arc` and runs every operation on `tokio::task::spawn_blocking`. Clones of a
//! [`SqliteStore`] share one connection. Separate [`SqliteStore::open`] calls on the same
//! file get separate connections; thanks to WAL, readers never block the writer, and
//! writers wait for each other (`busy_timeout`) instead of failing with "database is locked".
//! Writes use `BEGIN IMMEDIATE`, so two writers never deadlock on a lock upgrade.
//!
//! ## Durability
//!
//! Every connection sets `journal_mode=WAL`, `busy_timeout=5000` (ms), `foreign_keys=ON` and
//! `synchronous=NORMAL`. With WAL, `NORMAL` fsyncs the WAL only at checkpoints, not at every
//! commit. Consequences:
//!
//! - an **application crash** (panic, kill, OOM) loses nothing that was committed: committed
//!   transactions are in the WAL file, which the OS already has;
//! - a **power loss or OS crash** may lose the last transactions committed since the latest
//!   checkpoint (the database stays consistent, it just rolls back to an earlier point);
//! - commits are much cheaper than with `synchronous=FULL`, which matters because every
//!   event is its own transaction.
//!
//! This is the default ([`Durability::Normal`]) because the journal's job is to survive a
//! killed process, which it does at a fraction of the cost; [`Durability::Full`]
//! (`PLANWRIGHT_DB_SYNC=full` in the app) fsyncs every event for machines that may lose
//! power. `cargo xtask bench` measures both; see `docs/durability.md`.
//!
//! ## Schema
//!
//! The schema version lives in `PRAGMA user_version`. Migrations are an ordered list of SQL
//! scripts, each applied in its own transaction that also bumps `user_version`. Opening a
//! file whose version is newer than [`SCHEMA_VERSION`] fails with
//! [`Error::SchemaTooNew`] rather than guessing.

mod connection;
mod error;
mod leases;
mod mailbox;
mod migrations;
mod queries;
mod store;

pub use connection::Durability;
pub use error::Error;
pub use migrations::SCHEMA_VERSION;
pub use store::SqliteStore;

/// Creates `path` at schema `version` only (an earlier one), as an older Planwright left
/// it: for tests of upgrades from every earlier version.
#[doc(hidden)]
pub fn create_at_schema_version(path: &std::path::Path, version: u32) -> Result<u32, Error> {
    let mut conn = rusqlite::Connection::open(path).map_err(|source| Error::Open {
        path: path.to_path_buf(),
        source,
    })?;
    migrations::migrate_to(&mut conn, path, version)
}
