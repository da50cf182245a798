//! # store-sql-core
//!
//! What the SQL run stores (`adapter-store-sqlite`, `adapter-store-postgres`) share, with
//! no driver in sight: both keep the same tables with the same meaning (docs/durability.md),
//! so the values they write and the checks they make are written once here.
//!
//! - [`codec`]: domain values as stored (times as RFC 3339 text that sorts as time, counts
//!   as signed 64-bit integers, JSON as text) and back, each failure a [`RecordError`];
//! - [`RecordError`]: the failures that come from the records, not the driver (an unknown
//!   or existing run, an event out of order, a value that cannot be stored or read back),
//!   each with its [`domain::StoreError`] kind; each store's own `Error` wraps it;
//! - [`runs`]: the columns of `runs`, a row read back as a [`domain::ports::RunRecord`],
//!   the usage columns;
//! - [`queue`]: the queue's and leases' conditions (a free lease, which runs a claim takes
//!   first, a run's place in the queue) and a run as the queue stores it;
//! - [`steps`]: the `steps` projection of a plan's newest version;
//! - [`events`]: the rule that a run's event log is gap-free.
//!
//! A library, not an adapter: it depends on `domain` (for its types) and on no adapter and
//! no database driver; the statements themselves, transactions and connections stay in each
//! store. `domain` never depends on it.

pub mod codec;
mod error;
pub mod events;
pub mod queue;
pub mod runs;
pub mod steps;

pub use error::RecordError;
