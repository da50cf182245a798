//! The store conformance suite (crates/store-conformance) on a real SQLite file, one per
//! test in its own temporary folder.

use std::sync::Arc;

use adapter_store_sqlite::SqliteStore;
use store_conformance::TestStore;

async fn fresh() -> TestStore<SqliteStore> {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = SqliteStore::open(dir.path().join("runs.db")).expect("store opens");
    TestStore::keeping(Arc::new(store), dir)
}

store_conformance::conformance_tests!(fresh);
