//! [`NullStore`]: a run store that keeps nothing (the benchmarks' store).

use async_trait::async_trait;

use crate::error::StoreError;
use crate::model::event::{Event, RunUsage};
use crate::model::plan::Plan;
use crate::ports::{RunRecord, RunStatus, RunStore};

/// A store that keeps nothing, for benchmarks that measure the runtime, not a store. (Not
/// [`crate::testing::MemoryStore`]: keeping every plan version of a 100-step run about
/// doubled the time per step the scheduler benchmark measures.)
pub struct NullStore;

#[async_trait]
impl RunStore for NullStore {
    async fn create_run(&self, _: &RunRecord) -> Result<(), StoreError> {
        Ok(())
    }
    async fn update_run(&self, _: &RunRecord) -> Result<(), StoreError> {
        Ok(())
    }
    async fn delete_run(&self, _: &str) -> Result<bool, StoreError> {
        Ok(false)
    }
    async fn set_run_status(&self, _: &str, _: RunStatus) -> Result<(), StoreError> {
        Ok(())
    }
    async fn save_usage(&self, _: &str, _: &RunUsage) -> Result<(), StoreError> {
        Ok(())
    }
    async fn save_plan(&self, _: &str, _: &Plan) -> Result<(), StoreError> {
        Ok(())
    }
    async fn append_event(&self, _: &Event) -> Result<(), StoreError> {
        Ok(())
    }
    async fn get_run(&self, _: &str) -> Result<Option<RunRecord>, StoreError> {
        Ok(None)
    }
    async fn list_runs(&self) -> Result<Vec<RunRecord>, StoreError> {
        Ok(Vec::new())
    }
    async fn latest_plan(&self, _: &str) -> Result<Option<Plan>, StoreError> {
        Ok(None)
    }
    async fn events(&self, _: &str, _: u64) -> Result<Vec<Event>, StoreError> {
        Ok(Vec::new())
    }
    async fn acquire_lease(
        &self,
        _run_id: &str,
        _claim: &crate::ports::LeaseClaim,
    ) -> Result<crate::ports::LeaseOutcome, StoreError> {
        Ok(crate::ports::LeaseOutcome::Acquired)
    }
    async fn renew_lease(
        &self,
        _run_id: &str,
        _owner: &str,
        _until: chrono::DateTime<chrono::Utc>,
    ) -> Result<bool, StoreError> {
        Ok(true)
    }
    async fn release_lease(&self, _run_id: &str, _owner: &str) -> Result<(), StoreError> {
        Ok(())
    }
}
