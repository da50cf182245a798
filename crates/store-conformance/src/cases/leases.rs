//! Run leases: the compare-and-set rules, and racing owners.

use std::future::Future;

use domain::ports::{Lease, LeaseOutcome, RunStatus};

use super::Store;
use crate::fixtures::{claim, running_run, time};
use crate::TestStore;

pub async fn a_lease_is_granted_when_free_expired_ours_or_stale_and_refused_otherwise<
    S: Store,
    Fut,
>(
    fresh: impl Fn() -> Fut,
) where
    Fut: Future<Output = TestStore<S>>,
{
    let store = fresh().await;
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
    assert!(
        store
            .renew_lease("r", "b", time(70, 5))
            .await
            .expect("renew"),
        "b owns it"
    );
    assert_eq!(
        store
            .acquire_lease("r", &claim("c", 70, 100))
            .await
            .expect("c"),
        LeaseOutcome::Held(Lease {
            owner: "b".into(),
            until: time(70, 5)
        }),
        "renewed past 70"
    );
    assert_eq!(
        store
            .acquire_lease("r", &claim("c", 71, 100))
            .await
            .expect("c"),
        LeaseOutcome::Acquired,
        "b's lease expired at 70.000000005"
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
    assert!(!store
        .renew_lease("nope", "a", time(1, 0))
        .await
        .expect("renew"));
}

pub async fn progress_updates_never_touch_the_lease<S: Store, Fut>(fresh: impl Fn() -> Fut)
where
    Fut: Future<Output = TestStore<S>>,
{
    let store = fresh().await;
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
    store
        .set_run_status("r", RunStatus::Failed)
        .await
        .expect("status");
    store
        .save_usage("r", &domain::RunUsage::default())
        .await
        .expect("usage");
    let stored = store.get_run("r").await.expect("get").expect("run");
    assert_eq!(stored.status, RunStatus::Failed);
    assert_eq!(stored.lease, run.lease);
}

/// Eight owners race for one expired lease, twenty times over: exactly one wins each time,
/// and the others are told who holds it.
pub async fn of_racing_owners_exactly_one_gets_the_lease<S: Store, Fut>(fresh: impl Fn() -> Fut)
where
    Fut: Future<Output = TestStore<S>>,
{
    let store = fresh().await;
    for round in 0..20 {
        let run_id = format!("r{round}");
        let mut run = running_run(&run_id, 0);
        run.lease = Some(Lease {
            owner: "dead".into(),
            until: time(5, 0),
        });
        store.create_run(&run).await.expect("create");
        let racers = (0..8).map(|i| {
            let (store, run_id) = (store.handle(), run_id.clone());
            tokio::spawn(async move {
                let owner = format!("owner{i}");
                let outcome = store
                    .acquire_lease(&run_id, &claim(&owner, 10, 40))
                    .await
                    .expect("acquire");
                (owner, outcome)
            })
        });
        let outcomes: Vec<_> = futures_util::future::join_all(racers)
            .await
            .into_iter()
            .map(|joined| joined.expect("racer task"))
            .collect();
        let winners: Vec<&String> = outcomes
            .iter()
            .filter(|(_, o)| *o == LeaseOutcome::Acquired)
            .map(|(owner, _)| owner)
            .collect();
        assert_eq!(winners.len(), 1, "round {round}: {outcomes:?}");
        let winner = winners[0].clone();
        for (owner, outcome) in &outcomes {
            if *owner != winner {
                assert_eq!(
                    *outcome,
                    LeaseOutcome::Held(Lease {
                        owner: winner.clone(),
                        until: time(40, 0)
                    }),
                    "round {round}"
                );
            }
        }
        assert_eq!(
            store
                .get_run(&run_id)
                .await
                .expect("get")
                .and_then(|r| r.lease),
            Some(Lease {
                owner: winner,
                until: time(40, 0)
            })
        );
    }
}
