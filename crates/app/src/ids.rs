//! Run and plan ids: sortable by time, unique by a random suffix.

use chrono::Utc;
use domain::ports::IdGen;

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
