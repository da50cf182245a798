//! The in-memory store keeps the store contract the tests rely on (the one the SQLite store
//! keeps, docs/durability.md): writes to unknown runs fail, events come in order, a lease
//! is one compare-and-set, the queue hands out interrupted queue runs first.

use chrono::{DateTime, Duration, Utc};
use serde_json::json;

use crate::ports::{LeaseClaim, LeaseOutcome, RunStatus, RunStore, WorkQueue};
use crate::testing::runs::run_record;
use crate::testing::{MemoryStore, StoreOp};
use crate::{Event, EventKind, StoreError};

fn at(secs: i64) -> DateTime<Utc> {
    DateTime::<Utc>::UNIX_EPOCH + Duration::seconds(1_767_225_600 + secs)
}

fn claim(owner: &str, now: i64, stale_owner: Option<&str>) -> LeaseClaim {
    LeaseClaim {
        owner: owner.into(),
        now: at(now),
        until: at(now + 30),
        stale_owner: stale_owner.map(str::to_string),
    }
}

fn message(run_id: &str, seq: u64) -> Event {
    Event {
        run_id: run_id.into(),
        seq,
        at: at(0),
        kind: EventKind::Message {
            step_id: None,
            text: format!("event {seq}"),
        },
    }
}

#[tokio::test]
async fn writes_to_an_unknown_run_and_events_out_of_order_are_refused() {
    let store = MemoryStore::new();
    assert!(matches!(
        store.append_event(&message("ghost", 1)).await,
        Err(StoreError::NotFound(_))
    ));
    store.create_run(&run_record("r")).await.expect("create");
    assert!(matches!(
        store.create_run(&run_record("r")).await,
        Err(StoreError::Conflict(_))
    ));
    store.append_event(&message("r", 1)).await.expect("seq 1");
    assert!(matches!(
        store.append_event(&message("r", 3)).await,
        Err(StoreError::Conflict(_))
    ));
    let after_first = store.events("r", 1).await.expect("events");
    assert!(after_first.is_empty(), "{after_first:?}");
}

#[tokio::test]
async fn a_lease_goes_to_one_owner_until_it_expires_or_its_owner_is_proved_gone() {
    let store = MemoryStore::new();
    store.create_run(&run_record("r")).await.expect("create");
    let first = store.acquire_lease("r", &claim("a", 0, None)).await;
    assert_eq!(first, Ok(LeaseOutcome::Acquired));
    let held = store.acquire_lease("r", &claim("b", 10, None)).await;
    assert!(matches!(held, Ok(LeaseOutcome::Held(l)) if l.owner == "a"));
    assert_eq!(store.renew_lease("r", "b", at(100)).await, Ok(false));
    let stale = store.acquire_lease("r", &claim("b", 10, Some("a"))).await;
    assert_eq!(stale, Ok(LeaseOutcome::Acquired));
    assert_eq!(store.renew_lease("r", "a", at(100)).await, Ok(false));
    store.release_lease("r", "a").await.expect("release");
    assert_eq!(
        store.run("r").and_then(|r| r.lease).map(|l| l.owner),
        Some("b".into())
    );
    let expired = store.acquire_lease("r", &claim("c", 41, None)).await;
    assert_eq!(expired, Ok(LeaseOutcome::Acquired));
    let unknown = store.acquire_lease("ghost", &claim("c", 0, None)).await;
    assert_eq!(unknown, Ok(LeaseOutcome::Unknown));
}

#[tokio::test]
async fn the_queue_hands_out_interrupted_runs_first_then_the_oldest_queued() {
    let store = MemoryStore::new();
    for (id, created) in [("q2", 2), ("q1", 1)] {
        let mut run = run_record(id);
        run.created_at = at(created);
        store.enqueue(&run).await.expect("enqueue");
    }
    let mut interrupted = run_record("i");
    interrupted.created_at = at(5);
    interrupted.queue_request = Some(json!({"mode": "flow"}));
    store.create_run(&interrupted).await.expect("create");
    assert_eq!(store.position("q1").await, Ok(Some(1)));
    assert_eq!(store.position("q2").await, Ok(Some(2)));

    let order: Vec<String> = [
        store.claim("w", at(10), at(40)).await,
        store.claim("w", at(10), at(40)).await,
        store.claim("w", at(10), at(40)).await,
        store.claim("w", at(10), at(40)).await,
    ]
    .into_iter()
    .map(|c| c.expect("claim").map(|r| r.run_id).unwrap_or_default())
    .collect();
    assert_eq!(order, ["i", "q1", "q2", ""]);
    assert_eq!(
        store.position("q1").await,
        Ok(None),
        "claimed runs wait no more"
    );
    assert_eq!(store.cancel_queued("q1", "no", at(11)).await, Ok(false));
}

#[tokio::test]
async fn an_unclaimed_queued_run_can_be_cancelled_and_chosen_writes_can_fail() {
    let store = MemoryStore::new();
    store.enqueue(&run_record("q")).await.expect("enqueue");
    assert_eq!(store.cancel_queued("q", "stopped", at(1)).await, Ok(true));
    let run = store.run("q").expect("run");
    assert_eq!(run.status, RunStatus::Failed);
    assert_eq!(run.error.as_deref(), Some("stopped"));

    store.fail(StoreOp::SaveUsage, StoreError::Unavailable("locked".into()));
    let failed = store.save_usage("q", &Default::default()).await;
    assert_eq!(failed, Err(StoreError::Unavailable("locked".into())));
}
