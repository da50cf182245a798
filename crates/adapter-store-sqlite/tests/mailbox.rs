//! The run mailbox on a real SQLite file, beyond the conformance suite: separate
//! connections (as separate processes would have) racing to take a run's messages.

mod common;

use adapter_store_sqlite::SqliteStore;
use common::*;
use domain::ports::{LeaseOutcome, RunMailbox, RunMessage, RunStore};

#[tokio::test]
async fn racing_takers_on_separate_connections_get_each_message_once() {
    let (dir, store) = temp_store();
    store
        .create_run(&running_run("r", 0))
        .await
        .expect("create");
    assert_eq!(
        store
            .acquire_lease("r", &claim("a", 10, 1000))
            .await
            .expect("lease"),
        LeaseOutcome::Acquired
    );
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
            _ => u32::MAX,
        })
        .collect();
    texts.sort_unstable();
    assert_eq!(
        texts,
        (0..50).collect::<Vec<_>>(),
        "each message exactly once"
    );
}
