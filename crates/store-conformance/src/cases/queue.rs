//! The durable work queue: claim order, cancellation, concurrent claimers.

use std::collections::HashMap;
use std::future::Future;

use domain::ports::{Lease, QueueWaiting, RunStatus};
use serde_json::json;

use super::Store;
use crate::fixtures::{queued, running_run, time};
use crate::TestStore;

pub async fn claims_take_interrupted_queue_runs_first_then_the_oldest_queued<S: Store, Fut>(
    fresh: impl Fn() -> Fut,
) where
    Fut: Future<Output = TestStore<S>>,
{
    let store = fresh().await;
    assert_eq!(
        store.waiting().await.expect("waiting"),
        QueueWaiting::default()
    );
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
    assert_eq!(store.position("ghost").await.expect("pos"), None);
    assert_eq!(
        store.waiting().await.expect("waiting"),
        QueueWaiting {
            count: 3,
            oldest: Some(queued("q1", 1).created_at)
        }
    );

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
    assert_eq!(
        store.waiting().await.expect("waiting"),
        QueueWaiting {
            count: 2,
            oldest: Some(queued("q2", 2).created_at)
        },
        "a started run waits no more"
    );
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

pub async fn a_queued_run_is_cancelled_only_while_nobody_claimed_it<S: Store, Fut>(
    fresh: impl Fn() -> Fut,
) where
    Fut: Future<Output = TestStore<S>>,
{
    let store = fresh().await;
    store.enqueue(&queued("a", 1)).await.expect("enqueue");
    store.enqueue(&queued("b", 2)).await.expect("enqueue");
    assert!(store
        .cancel_queued("a", "cancelled", time(5, 0))
        .await
        .expect("cancel"));
    let a = store.get_run("a").await.expect("get").expect("a");
    assert_eq!(a.status, RunStatus::Failed);
    assert_eq!(a.error.as_deref(), Some("cancelled"));
    assert_eq!(a.finished_at, Some(time(5, 0)));
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
    assert!(!store
        .cancel_queued("ghost", "x", time(8, 0))
        .await
        .expect("no such run"));
}

/// Six workers claim from one queue of 40 runs until it is empty: every run is claimed,
/// and by one worker only.
pub async fn concurrent_claimers_get_every_run_exactly_once<S: Store, Fut>(fresh: impl Fn() -> Fut)
where
    Fut: Future<Output = TestStore<S>>,
{
    let store = fresh().await;
    let runs: Vec<String> = (0..40).map(|i| format!("q{i:02}")).collect();
    for (i, id) in runs.iter().enumerate() {
        store.enqueue(&queued(id, i as i64)).await.expect("enqueue");
    }
    let workers = (0..6).map(|w| {
        let store = store.handle();
        tokio::spawn(async move {
            let owner = format!("worker{w}");
            let mut mine = Vec::new();
            while let Some(run) = store
                .claim(&owner, time(100, 0), time(200, 0))
                .await
                .expect("claim")
            {
                assert_eq!(
                    run.lease.as_ref().map(|l| l.owner.as_str()),
                    Some(owner.as_str())
                );
                mine.push(run.run_id);
            }
            (owner, mine)
        })
    });
    let mut claimed_by: HashMap<String, Vec<String>> = HashMap::new();
    for joined in futures_util::future::join_all(workers).await {
        let (owner, mine) = joined.expect("worker task");
        for run_id in mine {
            claimed_by.entry(run_id).or_default().push(owner.clone());
        }
    }
    for id in &runs {
        assert_eq!(
            claimed_by.get(id).map(Vec::len),
            Some(1),
            "{id} claimed by {:?}",
            claimed_by.get(id)
        );
        let stored = store.get_run(id).await.expect("get").expect("run");
        let owners = &claimed_by[id];
        assert_eq!(stored.lease.map(|l| l.owner), Some(owners[0].clone()));
    }
    assert_eq!(claimed_by.len(), runs.len(), "nothing else was claimed");
}

/// A worker claims while a client cancels, for twenty queued runs: each run ends either
/// claimed or cancelled, never both.
pub async fn a_claim_and_a_cancel_racing_for_a_queued_run_never_both_win<S: Store, Fut>(
    fresh: impl Fn() -> Fut,
) where
    Fut: Future<Output = TestStore<S>>,
{
    let store = fresh().await;
    for round in 0..20 {
        let id = format!("q{round}");
        store.enqueue(&queued(&id, round)).await.expect("enqueue");
        let claimer = {
            let store = store.handle();
            tokio::spawn(async move { store.claim("w", time(100, 0), time(200, 0)).await })
        };
        let canceller = {
            let (store, id) = (store.handle(), id.clone());
            tokio::spawn(async move { store.cancel_queued(&id, "cancelled", time(100, 0)).await })
        };
        let claimed = claimer.await.expect("claimer").expect("claim");
        let cancelled = canceller.await.expect("canceller").expect("cancel");
        assert!(
            claimed.is_some() != cancelled,
            "round {round}: claimed {claimed:?}, cancelled {cancelled}"
        );
        let stored = store.get_run(&id).await.expect("get").expect("run");
        if cancelled {
            assert_eq!(stored.status, RunStatus::Failed);
            assert_eq!(stored.lease, None);
        } else {
            assert_eq!(stored.status, RunStatus::Queued);
            assert_eq!(stored.lease.map(|l| l.owner), Some("w".to_string()));
        }
    }
}

/// docs/security.md, "Clients": the client that queued a run is stored with it, handed to
/// the worker that claims it, and never changed by the progress updates of a runtime
/// (whose record may not carry it).
pub async fn a_runs_client_is_stored_once_and_never_changed<S: Store, Fut>(fresh: impl Fn() -> Fut)
where
    Fut: Future<Output = TestStore<S>>,
{
    let store = fresh().await;
    let mut mine = queued("q_alice", 1);
    mine.client = Some("alice".into());
    store.enqueue(&mine).await.expect("enqueue");
    let mut direct = running_run("direct", 2);
    direct.client = None;
    store.create_run(&direct).await.expect("create");
    let mut owned_direct = running_run("direct_bob", 3);
    owned_direct.client = Some("bob".into());
    store.create_run(&owned_direct).await.expect("create");

    let read = store.get_run("q_alice").await.expect("get").expect("run");
    assert_eq!(read.client.as_deref(), Some("alice"));
    let listed = store.list_runs().await.expect("list");
    let client_of = |id: &str| {
        listed
            .iter()
            .find(|r| r.run_id == id)
            .map(|r| r.client.clone())
    };
    assert_eq!(client_of("q_alice"), Some(Some("alice".into())));
    assert_eq!(client_of("direct"), Some(None));
    assert_eq!(client_of("direct_bob"), Some(Some("bob".into())));

    let claimed = store
        .claim("w", time(10, 0), time(40, 0))
        .await
        .expect("claim")
        .expect("a run");
    assert_eq!(claimed.run_id, "q_alice");
    assert_eq!(
        claimed.client.as_deref(),
        Some("alice"),
        "the worker knows it"
    );

    // A runtime's record without the client (or with another) changes progress only.
    let mut progress = claimed.clone();
    progress.status = RunStatus::Completed;
    progress.summary = Some("done".into());
    progress.client = None;
    store.update_run(&progress).await.expect("update");
    progress.client = Some("mallory".into());
    store.update_run(&progress).await.expect("update");
    let after = store.get_run("q_alice").await.expect("get").expect("run");
    assert_eq!(after.status, RunStatus::Completed);
    assert_eq!(after.client.as_deref(), Some("alice"));
    store
        .set_run_status("q_alice", RunStatus::Failed)
        .await
        .expect("status");
    let after = store.get_run("q_alice").await.expect("get").expect("run");
    assert_eq!(after.client.as_deref(), Some("alice"));
}
