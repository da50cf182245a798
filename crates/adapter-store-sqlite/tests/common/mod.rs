//! Fixtures shared by the integration tests: a store on a real file, and the values of the
//! store conformance suite (crates/store-conformance), so both build runs the same way.
#![allow(dead_code, unused_imports)]

use adapter_store_sqlite::SqliteStore;
use tempfile::TempDir;

pub use store_conformance::fixtures::{claim, event, plan, running_run, time};

/// A fresh store in its own temporary folder (a real file, never `:memory:`).
pub fn temp_store() -> (TempDir, SqliteStore) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = SqliteStore::open(dir.path().join("runs.db")).expect("store opens");
    (dir, store)
}
