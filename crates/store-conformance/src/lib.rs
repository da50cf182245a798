//! # store-conformance
//!
//! The conformance suite of the store ports: store-agnostic tests that every adapter of
//! [`RunStore`](domain::ports::RunStore) and [`WorkQueue`](domain::ports::WorkQueue) must
//! pass, with exactly the semantics documented on the ports and in docs/durability.md.
//! Each case is a `pub async fn` in [`cases`] taking a store factory (an `async fn` that
//! makes a fresh, empty store); [`conformance_tests!`] expands into one `#[tokio::test]`
//! per case, so each adapter's test binary names every case:
//!
//! ```ignore
//! async fn fresh() -> store_conformance::TestStore<MyStore> { Arc::new(MyStore::new()).into() }
//! store_conformance::conformance_tests!(fresh);
//! ```
//!
//! [`pg_cluster`] starts one private PostgreSQL cluster per test binary (with TLS) for the
//! tests that need a real server.
//!
//! A dev-only crate (`publish = false`): it depends on `domain` and on no adapter.

pub mod cases;
pub mod fixtures;
pub mod pg_cluster;
mod pg_tls;

use std::any::Any;
use std::ops::Deref;
use std::sync::Arc;

/// A store under test, with whatever must live as long as it (a temporary folder).
pub struct TestStore<S> {
    store: Arc<S>,
    _keep: Box<dyn Any + Send + Sync>,
}

impl<S> TestStore<S> {
    /// A store that needs nothing kept alive beside it.
    pub fn new(store: Arc<S>) -> TestStore<S> {
        TestStore::keeping(store, ())
    }

    /// A store that lives in `keep` (dropped after the test).
    pub fn keeping(store: Arc<S>, keep: impl Any + Send + Sync) -> TestStore<S> {
        TestStore {
            store,
            _keep: Box::new(keep),
        }
    }

    /// Another handle on the same store, e.g. for a spawned task.
    pub fn handle(&self) -> Arc<S> {
        Arc::clone(&self.store)
    }
}

impl<S> From<Arc<S>> for TestStore<S> {
    fn from(store: Arc<S>) -> TestStore<S> {
        TestStore::new(store)
    }
}

impl<S> Deref for TestStore<S> {
    type Target = S;
    fn deref(&self) -> &S {
        &self.store
    }
}

/// Expands into one `#[tokio::test]` per conformance case, each calling the case with the
/// factory `$fresh` (a path to an `async fn() -> TestStore<S>`). With `when = <bool
/// expression>`, each test first evaluates it and returns at once when false (e.g.
/// [`pg_cluster::available`], which skips without PostgreSQL but fails under `CI=true`).
/// The caller's crate needs `tokio` with `macros` and `rt-multi-thread`.
#[macro_export]
macro_rules! conformance_tests {
    ($fresh:path) => {
        $crate::conformance_tests!($fresh, when = true);
    };
    ($fresh:path, when = $ready:expr) => {
        $crate::__each_case! { $fresh, $ready;
            runs_round_trip_through_create_update_get_and_list,
            text_with_nul_bytes_round_trips_exactly,
            save_usage_overwrites_only_the_usage_and_needs_the_run,
            update_run_rewrites_a_queue_request_and_never_erases_it,
            set_run_status_changes_only_the_status_and_needs_the_run,
            runs_created_at_the_same_instant_are_listed_by_run_id,
            creating_a_run_twice_or_updating_a_missing_run_is_refused,
            deleting_a_run_removes_its_plans_and_events,
            every_plan_version_is_kept_and_the_latest_one_wins,
            latest_plan_follows_the_most_recently_saved_plan,
            saving_a_plan_for_an_unknown_run_is_refused,
            events_are_read_back_equal_and_filtered_by_seq,
            gaps_and_duplicates_are_refused_and_write_nothing,
            the_first_event_of_a_run_must_be_seq_1_and_the_run_must_exist,
            a_store_error_names_the_operation_and_the_run,
            of_writers_racing_for_one_seq_exactly_one_is_stored,
            a_lease_is_granted_when_free_expired_ours_or_stale_and_refused_otherwise,
            progress_updates_never_touch_the_lease,
            of_racing_owners_exactly_one_gets_the_lease,
            claims_take_interrupted_queue_runs_first_then_the_oldest_queued,
            a_queued_run_is_cancelled_only_while_nobody_claimed_it,
            concurrent_claimers_get_every_run_exactly_once,
            a_runs_client_is_stored_once_and_never_changed,
            a_claim_and_a_cancel_racing_for_a_queued_run_never_both_win,
            messages_are_taken_by_their_owner_in_order_and_once,
            a_message_never_reaches_a_later_owner,
            a_message_for_an_unknown_run_is_refused,
            racing_takers_get_each_message_once,
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __each_case {
    ($fresh:path, $ready:expr; $($case:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $case() {
                if !$ready {
                    return;
                }
                $crate::cases::$case($fresh).await;
            }
        )*
    };
}
