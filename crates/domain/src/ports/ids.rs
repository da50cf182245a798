//! The id port: how runs and plans get their ids.

use std::sync::atomic::{AtomicU64, Ordering};

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
