//! What the last checkpoint of a run left in this process's memory: its index (each file's
//! size, time and digest) and its folders' listings with their digests. The next
//! checkpoint of the run starts from it instead of reading `index.json` back, and a folder
//! whose listing did not change is neither encoded nor hashed again (docs/benchmarks.md,
//! "Checkpoints"). Only ever a shortcut: what it holds is what the store on disk holds, it
//! is used only while the checkpoint it came from is still on disk, and without it the
//! same checkpoint is taken from the files on disk.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use domain::ports::CheckpointId;

use super::store::{Index, Listing};

/// Runs whose last checkpoint is kept in memory; an older one is read from disk again.
const RUNS: usize = 8;

/// The last checkpoint of one run.
pub(crate) struct Recent {
    /// Its manifest's id: the memory is used only while that manifest is on disk.
    pub id: CheckpointId,
    pub index: Index,
    /// Folder ("" for the top) → its listing.
    pub listings: BTreeMap<String, Listing>,
}

impl fmt::Debug for Recent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Recent")
            .field("id", &self.id)
            .field("files", &self.index.files.len())
            .field("folders", &self.listings.len())
            .finish()
    }
}

/// The last checkpoints of the few runs checkpointed most recently, shared by the clones of
/// one `LocalCheckpoints`.
#[derive(Clone, Default)]
pub(crate) struct RecentRuns {
    runs: Arc<Mutex<Vec<(String, Recent)>>>,
}

impl RecentRuns {
    /// Run `run_id`'s last checkpoint, taken out (put back with [`RecentRuns::keep`]).
    pub(crate) fn take(&self, run_id: &str) -> Option<Recent> {
        let mut runs = self.runs.lock().unwrap_or_else(PoisonError::into_inner);
        let at = runs.iter().position(|(id, _)| id == run_id)?;
        Some(runs.remove(at).1)
    }

    /// Keeps `recent` as run `run_id`'s last checkpoint, forgetting the least recent run
    /// past [`RUNS`].
    pub(crate) fn keep(&self, run_id: &str, recent: Recent) {
        let mut runs = self.runs.lock().unwrap_or_else(PoisonError::into_inner);
        runs.retain(|(id, _)| id != run_id);
        runs.insert(0, (run_id.to_string(), recent));
        runs.truncate(RUNS);
    }
}

impl fmt::Debug for RecentRuns {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let runs = self.runs.lock().unwrap_or_else(PoisonError::into_inner);
        f.debug_struct("RecentRuns")
            .field("runs", &runs.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoints::store::Entry;

    fn recent(id: &str) -> Recent {
        Recent {
            id: CheckpointId::new(id),
            index: Index::default(),
            listings: BTreeMap::new(),
        }
    }

    #[test]
    fn the_most_recent_runs_are_kept_and_a_taken_one_is_gone() {
        let runs = RecentRuns::default();
        for n in 0..=RUNS {
            runs.keep(&format!("run-{n}"), recent(&format!("{n:x}")));
        }
        assert!(
            runs.take("run-0").is_none(),
            "the least recent is forgotten"
        );
        let last = runs.take(&format!("run-{RUNS}")).map(|r| r.id);
        assert_eq!(last, Some(CheckpointId::new(format!("{RUNS:x}"))));
        assert!(runs.take(&format!("run-{RUNS}")).is_none());
    }

    #[test]
    fn a_listing_is_the_same_only_with_the_same_names_and_entries() {
        let link = |t: &str| Entry::Link { target: t.into() };
        let kept = Listing {
            entries: BTreeMap::from([("a".to_string(), link("x")), ("b".to_string(), link("y"))]),
            digest: "d".into(),
        };
        let (x, y, z) = (link("x"), link("y"), link("z"));
        assert!(kept.same_as(&BTreeMap::from([("a", &x), ("b", &y)])));
        assert!(!kept.same_as(&BTreeMap::from([("a", &x), ("b", &z)])));
        assert!(!kept.same_as(&BTreeMap::from([("a", &x), ("c", &y)])));
        assert!(!kept.same_as(&BTreeMap::from([("a", &x)])));
    }
}
