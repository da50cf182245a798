//! The conformance suite on the domain's in-memory fake (`domain::testing::MemoryStore`):
//! the fake every domain test runs on keeps the contract the real stores keep.

use std::sync::Arc;

use domain::testing::MemoryStore;
use store_conformance::TestStore;

async fn fresh() -> TestStore<MemoryStore> {
    Arc::new(MemoryStore::new()).into()
}

store_conformance::conformance_tests!(fresh);
