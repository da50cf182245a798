//! The run mailbox on a real SQLite file: messages reach the owner they were addressed to,
//! in order, once, also when separate connections (as separate processes would have) race
//! to take them.

mod common;

use adapter_store_sqlite::SqliteStore;
use common::*;
use domain::ports::{LeaseClaim, LeaseOutcome, RunMailbox, RunMessage, RunStore};
use domain::StoreError;

/// Gives run `r` to `owner`.
async fn own(store: &SqliteStore, owner: &str) {
    let claim = LeaseClaim {
        owner: owner.into(),
        now: time(10, 0),
        until: time(1000, 0),
        stale_owner: None,
    };
    store.release_lease("r", "a").await.expect("release");
    assert_eq!(
        store.acquire_lease("r", &claim).await.expect("lease"),
        LeaseOutcome::Acquired
    );
}

#[tokio::test]
async fn messages_are_taken_by_their_owner_in_order_and_once() {
    let (_dir, store) = temp_store();
    store
        .create_run(&running_run("r", 0))
        .await
        .expect("create");
    own(&store, "a").await;
    assert!(store.take("r", "a").await.expect("take").is_empty());
    let answer = RunMessage::Answer {
        text: "blue".into(),
    };
    store.post("r", &answer).await.expect("post answer");
    store
        .post("r", &RunMessage::Cancel)
        .await
        .expect("post cancel");
    assert!(
        store.take("r", "b").await.expect("not b's").is_empty(),
        "addressed to a"
    );
    assert_eq!(
        store.take("r", "a").await.expect("take"),
        vec![answer, RunMessage::Cancel]
    );
    assert!(store.take("r", "a").await.expect("take again").is_empty());
}

#[tokio::test]
async fn a_message_never_reaches_a_later_owner() {
    let (_dir, store) = temp_store();
    store
        .create_run(&running_run("r", 0))
        .await
        .expect("create");
    own(&store, "a").await;
    store.post("r", &RunMessage::Cancel).await.expect("post");
    // a stopped without reading it; b resumes the run later.
    own(&store, "b").await;
    assert!(store.take("r", "b").await.expect("take").is_empty());
}

#[tokio::test]
async fn a_message_for_an_unknown_run_is_refused() {
    let (_dir, store) = temp_store();
    assert!(matches!(
        store.post("nope", &RunMessage::Cancel).await,
        Err(StoreError::NotFound(_))
    ));
}

#[tokio::test]
async fn racing_takers_on_separate_connections_get_each_message_once() {
    let (dir, store) = temp_store();
    store
        .create_run(&running_run("r", 0))
        .await
        .expect("create");
    own(&store, "a").await;
    for i in 0..50 {
        store
            .post(
                "r",
                &RunMessage::Answer {
                    text: i.to_string(),
                },
            )
            .await
            .expect("post");
    }
    let path = dir.path().join("runs.db");
    let takers: Vec<_> = (0..4)
        .map(|_| {
            let other = SqliteStore::open(&path).expect("open");
            tokio::spawn(async move {
                let mut got = Vec::new();
                for _ in 0..5 {
                    got.extend(other.take("r", "a").await.expect("take"));
                }
                got
            })
        })
        .collect();
    let mut all = Vec::new();
    for t in takers {
        all.extend(t.await.expect("taker"));
    }
    all.extend(store.take("r", "a").await.expect("rest"));
    let mut texts: Vec<u32> = all
        .iter()
        .map(|m| match m {
            RunMessage::Answer { text } => text.parse().expect("number"),
            RunMessage::Cancel => u32::MAX,
        })
        .collect();
    texts.sort_unstable();
    assert_eq!(
        texts,
        (0..50).collect::<Vec<_>>(),
        "each message exactly once"
    );
}
