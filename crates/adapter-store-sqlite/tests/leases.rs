//! Run leases on a real SQLite file: races between separate connections (as separate
//! processes would have), and a malformed row. The store-agnostic lease and queue cases are
//! in `tests/conformance.rs` (crates/store-conformance).

mod common;

use adapter_store_sqlite::SqliteStore;
use common::*;
use domain::ports::{Lease, LeaseOutcome, RunStore};

/// Three connections (as three `resume` processes would hold) race for one expired lease:
/// exactly one wins, whatever the interleaving.
#[tokio::test(flavor = "multi_thread", worker_threads = 3)]
async fn of_three_racing_owners_exactly_one_gets_the_lease() {
    for round in 0..20 {
        let (dir, store) = temp_store();
        let mut run = running_run("r", 0);
        run.lease = Some(Lease {
            owner: "dead".into(),
            until: time(5, 0),
        });
        store.create_run(&run).await.expect("create");
        let path = dir.path().join("runs.db");
        let racers = (0..3).map(|i| {
            let store = SqliteStore::open(&path).expect("second connection");
            tokio::spawn(async move {
                store
                    .acquire_lease("r", &claim(&format!("owner{i}"), 10, 40))
                    .await
                    .expect("acquire")
            })
        });
        let outcomes = futures_util::future::join_all(racers).await;
        let won = outcomes
            .iter()
            .filter(|o| matches!(o, Ok(LeaseOutcome::Acquired)))
            .count();
        assert_eq!(won, 1, "round {round}: {outcomes:?}");
    }
}

/// One malformed row (written by hand: an unknown status) does not hide the other runs.
#[tokio::test]
async fn an_unreadable_row_is_left_out_of_the_list() {
    let (dir, store) = temp_store();
    store
        .create_run(&running_run("good", 1))
        .await
        .expect("create");
    {
        let conn = rusqlite::Connection::open(dir.path().join("runs.db")).expect("open");
        conn.execute(
            "INSERT INTO runs (run_id, task, mode, status, workspace, created_at, llm_calls,
                               prompt_tokens, completion_tokens)
             VALUES ('bad', 't', 'flow', 'exploded', '/tmp/ws', '2026-01-01T00:00:00Z', 0, 0, 0)",
            [],
        )
        .expect("insert a malformed row");
    }
    let runs = store.list_runs().await.expect("the list still works");
    let ids: Vec<&str> = runs.iter().map(|r| r.run_id.as_str()).collect();
    assert_eq!(ids, ["good"]);
    assert!(
        store.get_run("bad").await.is_err(),
        "reading that run alone still says what is wrong"
    );
}
