//! Run leases and the work queue on a real SQLite file: the compare-and-set rules, races
//! between separate connections (as separate processes would have), and the claim order.

mod common;

use adapter_store_sqlite::SqliteStore;
use common::*;
use domain::ports::{Lease, LeaseClaim, LeaseOutcome, RunStatus, RunStore, WorkQueue};
use serde_json::json;

fn claim(owner: &str, now: i64, until: i64) -> LeaseClaim {
    LeaseClaim {
        owner: owner.into(),
        now: time(now, 0),
        until: time(until, 0),
        stale_owner: None,
    }
}

fn queued(run_id: &str, created_secs: i64) -> domain::ports::RunRecord {
    let mut run = running_run(run_id, created_secs);
    run.status = RunStatus::Queued;
    run.queue_request = Some(json!({"mode": "flow", "model": "m"}));
    run
}

#[tokio::test]
async fn a_lease_is_granted_when_free_expired_ours_or_stale_and_refused_otherwise() {
    let (_dir, store) = temp_store();
    store
        .create_run(&running_run("r", 0))
        .await
        .expect("create");
    assert_eq!(
        store
            .acquire_lease("r", &claim("a", 10, 40))
            .await
            .expect("a"),
        LeaseOutcome::Acquired,
        "nobody held it"
    );
    assert_eq!(
        store
            .acquire_lease("r", &claim("b", 20, 50))
            .await
            .expect("b"),
        LeaseOutcome::Held(Lease {
            owner: "a".into(),
            until: time(40, 0)
        }),
        "a holds it until 40"
    );
    assert_eq!(
        store
            .acquire_lease("r", &claim("a", 20, 60))
            .await
            .expect("a again"),
        LeaseOutcome::Acquired,
        "the owner may take its own lease again"
    );
    let mut stale = claim("b", 30, 70);
    stale.stale_owner = Some("a".into());
    assert_eq!(
        store.acquire_lease("r", &stale).await.expect("stale"),
        LeaseOutcome::Acquired,
        "a proved-gone owner's lease is taken before it expires"
    );
    assert!(
        !store
            .renew_lease("r", "a", time(90, 0))
            .await
            .expect("renew"),
        "a lost it: its renewal says so"
    );
    assert_eq!(
        store
            .acquire_lease("r", &claim("c", 71, 100))
            .await
            .expect("c"),
        LeaseOutcome::Acquired,
        "b's lease expired at 70"
    );
    store
        .release_lease("r", "b")
        .await
        .expect("release by a non-owner");
    assert_eq!(
        store.get_run("r").await.expect("get").and_then(|r| r.lease),
        Some(Lease {
            owner: "c".into(),
            until: time(100, 0)
        }),
        "releasing someone else's lease changes nothing"
    );
    store.release_lease("r", "c").await.expect("release");
    assert_eq!(
        store.get_run("r").await.expect("get").and_then(|r| r.lease),
        None
    );
    assert_eq!(
        store
            .acquire_lease("nope", &claim("a", 0, 1))
            .await
            .expect("unknown"),
        LeaseOutcome::Unknown
    );
}

#[tokio::test]
async fn progress_updates_never_touch_the_lease() {
    let (_dir, store) = temp_store();
    let mut run = running_run("r", 0);
    run.lease = Some(Lease {
        owner: "a".into(),
        until: time(40, 0),
    });
    store.create_run(&run).await.expect("create");
    let mut update = run.clone();
    update.lease = None;
    update.status = RunStatus::Completed;
    store.update_run(&update).await.expect("update");
    let stored = store.get_run("r").await.expect("get").expect("run");
    assert_eq!(stored.status, RunStatus::Completed);
    assert_eq!(stored.lease, run.lease);
}

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

#[tokio::test]
async fn claims_take_interrupted_queue_runs_first_then_the_oldest_queued() {
    let (_dir, store) = temp_store();
    for (id, secs) in [("q2", 2), ("q1", 1), ("q3", 3)] {
        store.enqueue(&queued(id, secs)).await.expect("enqueue");
    }
    // A direct `planwright run` that was interrupted is not queue work.
    let mut direct = running_run("direct", 0);
    direct.lease = Some(Lease {
        owner: "dead".into(),
        until: time(5, 0),
    });
    store.create_run(&direct).await.expect("direct");
    assert_eq!(store.position("q1").await.expect("pos"), Some(1));
    assert_eq!(store.position("q3").await.expect("pos"), Some(3));
    assert_eq!(store.position("direct").await.expect("pos"), None);

    let first = store
        .claim("w", time(10, 0), time(40, 0))
        .await
        .expect("claim")
        .expect("a run");
    assert_eq!(first.run_id, "q1");
    assert_eq!(
        first.lease,
        Some(Lease {
            owner: "w".into(),
            until: time(40, 0)
        })
    );
    assert_eq!(
        first.queue_request,
        Some(json!({"mode": "flow", "model": "m"}))
    );
    assert_eq!(
        store.position("q1").await.expect("pos"),
        None,
        "claimed: starting"
    );
    assert_eq!(store.position("q2").await.expect("pos"), Some(1));

    // q1 starts, then its worker dies: once its lease expires it comes back first.
    let mut started = first.clone();
    started.status = RunStatus::Running;
    store.update_run(&started).await.expect("start");
    let next = store
        .claim("w2", time(20, 0), time(50, 0))
        .await
        .expect("claim")
        .expect("a run");
    assert_eq!(next.run_id, "q2", "q1's lease holds until 40");
    let again = store
        .claim("w2", time(41, 0), time(70, 0))
        .await
        .expect("claim")
        .expect("a run");
    assert_eq!(
        again.run_id, "q1",
        "an interrupted queue run goes before the queue"
    );
    assert_eq!(again.status, RunStatus::Running);
    let last = store
        .claim("w2", time(42, 0), time(70, 0))
        .await
        .expect("claim")
        .expect("a run");
    assert_eq!(last.run_id, "q3");
    assert_eq!(
        store
            .claim("w2", time(43, 0), time(70, 0))
            .await
            .expect("claim"),
        None,
        "nothing left: the direct run stays its user's"
    );
}

#[tokio::test]
async fn a_queued_run_is_cancelled_only_while_nobody_claimed_it() {
    let (_dir, store) = temp_store();
    store.enqueue(&queued("a", 1)).await.expect("enqueue");
    store.enqueue(&queued("b", 2)).await.expect("enqueue");
    assert!(store
        .cancel_queued("a", "cancelled", time(5, 0))
        .await
        .expect("cancel"));
    let a = store.get_run("a").await.expect("get").expect("a");
    assert_eq!(a.status, RunStatus::Failed);
    assert_eq!(a.error.as_deref(), Some("cancelled"));
    assert!(a.finished_at.is_some());
    assert_eq!(store.position("b").await.expect("pos"), Some(1));

    let claimed = store
        .claim("w", time(6, 0), time(40, 0))
        .await
        .expect("claim")
        .expect("b");
    assert_eq!(claimed.run_id, "b");
    assert!(
        !store
            .cancel_queued("b", "cancelled", time(7, 0))
            .await
            .expect("cancel"),
        "claimed: the worker cancels it, not the queue"
    );
    assert!(!store
        .cancel_queued("a", "again", time(8, 0))
        .await
        .expect("cancel twice"));
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
