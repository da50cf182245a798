//! The store conformance suite (crates/store-conformance) on a real PostgreSQL: one private
//! cluster for this binary, a fresh database per test.

use std::sync::Arc;

use adapter_store_postgres::PostgresStore;
use store_conformance::{pg_cluster, TestStore};

async fn fresh() -> TestStore<PostgresStore> {
    let url = pg_cluster::fresh_database().await;
    Arc::new(PostgresStore::open(&url).await.expect("store opens")).into()
}

store_conformance::conformance_tests!(fresh, when = pg_cluster::available());
