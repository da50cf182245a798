//! The id port: how runs and plans get their ids.

use std::sync::atomic::{AtomicU64, Ordering};

use chrono::Utc;

/// Mints ids for runs and plans.
#[cfg_attr(test, mockall::automock)]
pub trait IdGen: Send + Sync {
    /// A new unique id starting with `prefix` (e.g. `run`, `plan`).
    fn new_id(&self, prefix: &str) -> String;
}

/// Deterministic ids `prefix_1`, `prefix_2`, ... (tests, replays).
#[derive(Debug, Default)]
pub struct SequentialIds(AtomicU64);

impl IdGen for SequentialIds {
    fn new_id(&self, prefix: &str) -> String {
        let n = self.0.fetch_add(1, Ordering::Relaxed) + 1;
        format!("{prefix}_{n}")
    }
}

/// Ids sortable by time and unique by a random suffix: `run_20261126_054800_1a2b3c4d`
/// (the default of [`Runtime::builder`](crate::Runtime::builder) and the app's).
#[derive(Debug, Default)]
pub struct TimeRandomIds;

impl IdGen for TimeRandomIds {
    fn new_id(&self, prefix: &str) -> String {
        let uuid = uuid::Uuid::new_v4().simple().to_string();
        format!(
            "{prefix}_{}_{}",
            Utc::now().format("%Y%m%d_%H%M%S"),
            &uuid[..8]
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_random_ids_differ_and_carry_their_prefix() {
        let (a, b) = (TimeRandomIds.new_id("run"), TimeRandomIds.new_id("run"));
        assert_ne!(a, b);
        assert!(a.starts_with("run_"), "{a}");
        assert_eq!(a.len(), "run_20261126_054800_1a2b3c4d".len(), "{a}");
    }
}
