//! # adapter-store-postgres
//!
//! [`PostgresStore`] implements the domain ports [`domain::ports::RunStore`] and
//! [`domain::ports::WorkQueue`] (and [`domain::ports::RunMailbox`]) over one PostgreSQL
//! database, so that any number of
//! processes on any number of machines share runs, their journals and one work queue
//! (docs/scaling.md). It keeps what the SQLite store keeps, with the same semantics
//! (docs/durability.md), and both pass the one conformance suite
//! (`crates/store-conformance`):
//!
//! - **runs**: one row per run, with its lease (`lease_owner`, `lease_until`) and, for a
//!   queued run, what its client asked for;
//! - **plan versions** and the **steps** of each plan's newest version (`journal.rs`);
//! - **the event log**: append-only (a trigger refuses updates) and gap-free; an event is
//!   accepted only if its `seq` is exactly the run's last `seq + 1`, and the primary key
//!   refuses the second of two writers racing for one `seq`;
//! - **leases and the work queue** (`leases.rs`): every lease decision is one
//!   compare-and-set `UPDATE ... WHERE`; a claim picks its run with
//!   `SELECT ... FOR UPDATE SKIP LOCKED` and leases it in the same transaction.
//!
//! The dependency points one way: this crate depends on `domain`, and `domain` must never
//! depend on this crate (nor on tokio-postgres). It depends on no other adapter.
//!
//! ## Driver and connections
//!
//! tokio-postgres with a deadpool pool ([`DEFAULT_MAX_CONNECTIONS`] by default). Not sqlx
//! 0.8: its optional SQLite driver links a libsqlite3-sys that clashes with rusqlite's (one
//! crate per native library, even an optional one). tokio-postgres also gives
//! LISTEN/NOTIFY (`Client` notifications).
//!
//! ## TLS
//!
//! On rustls, the workspace's one TLS stack (`tls/`: our own small `MakeTlsConnect` on
//! tokio-rustls; the pool and the LISTEN connection share one connector). The URL's
//! `sslmode` decides, as with libpq: `disable` (no TLS), `prefer` (the default: TLS when
//! the server offers it, the certificate unchecked as libpq does), `require` (TLS or no
//! connection; unlike libpq, the certificate must chain to the platform's roots or to the
//! CA named by libpq's `sslrootcert=/path/ca.pem` parameter, and name the host).
//! `verify-ca` and `verify-full` are read as `require`; `sslrootcert` also makes `prefer`
//! check. A refused certificate is [`Error::Untrusted`] at open. SCRAM binds to the channel
//! (`tls-server-end-point`). No client certificates. docs/scaling.md, "TLS".
//!
//! A connection that fails (server restarted, network cut) is dropped by the pool and the
//! operation fails with [`domain::StoreError::Unavailable`]; the next operation opens a
//! new connection.
//!
//! ## Schema
//!
//! The schema version lives in the one row of `planwright_schema`. [`PostgresStore::open`]
//! applies the missing migrations in one transaction under an advisory lock; a database
//! whose version is newer than [`SCHEMA_VERSION`] is refused ([`Error::SchemaTooNew`]), and
//! so is a read-only one ([`Error::ReadOnly`], e.g. a standby).

mod codec;
mod error;
mod journal;
mod leases;
mod listener;
mod mailbox;
mod migrations;
mod runs;
mod store;
mod tls;

pub use error::Error;
pub use migrations::SCHEMA_VERSION;
pub use store::{PostgresStore, DEFAULT_MAX_CONNECTIONS};
