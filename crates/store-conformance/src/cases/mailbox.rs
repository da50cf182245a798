//! The run mailbox: messages reach the owner they were addressed to, in order, once.

use std::future::Future;

use domain::ports::{LeaseOutcome, RunMessage};
use domain::StoreError;

use super::Store;
use crate::fixtures::{claim, running_run};
use crate::TestStore;

/// Gives run `r` to `owner` (taking it from `a`, its first owner, if needed).
async fn own<S: Store>(store: &S, owner: &str) {
    store.release_lease("r", "a").await.expect("release");
    assert_eq!(
        store
            .acquire_lease("r", &claim(owner, 10, 1000))
            .await
            .expect("lease"),
        LeaseOutcome::Acquired
    );
}

pub async fn messages_are_taken_by_their_owner_in_order_and_once<S: Store, Fut>(
    fresh: impl Fn() -> Fut,
) where
    Fut: Future<Output = TestStore<S>>,
{
    let store = fresh().await;
    store
        .create_run(&running_run("r", 0))
        .await
        .expect("create");
    own(&*store, "a").await;
    assert!(store.take("r", "a").await.expect("take").is_empty());
    let answer = RunMessage::Answer {
        text: "blue".into(),
    };
    store.post("r", &answer).await.expect("post answer");
    store
        .post("r", &RunMessage::Cancel)
        .await
        .expect("post cancel");
    let approval = RunMessage::Approval {
        call_id: "call_1".into(),
        decision: domain::model::approval::ApprovalDecision::Always,
    };
    store.post("r", &approval).await.expect("post approval");
    assert!(
        store.take("r", "b").await.expect("not b's").is_empty(),
        "addressed to a"
    );
    assert_eq!(
        store.take("r", "a").await.expect("take"),
        vec![answer, RunMessage::Cancel, approval]
    );
    assert!(store.take("r", "a").await.expect("take again").is_empty());
}

pub async fn a_message_never_reaches_a_later_owner<S: Store, Fut>(fresh: impl Fn() -> Fut)
where
    Fut: Future<Output = TestStore<S>>,
{
    let store = fresh().await;
    store
        .create_run(&running_run("r", 0))
        .await
        .expect("create");
    own(&*store, "a").await;
    store.post("r", &RunMessage::Cancel).await.expect("post");
    // a stopped without reading it; b resumes the run later.
    own(&*store, "b").await;
    assert!(store.take("r", "b").await.expect("take").is_empty());
}

pub async fn a_message_for_an_unknown_run_is_refused<S: Store, Fut>(fresh: impl Fn() -> Fut)
where
    Fut: Future<Output = TestStore<S>>,
{
    let store = fresh().await;
    assert!(matches!(
        store.post("nope", &RunMessage::Cancel).await,
        Err(StoreError::NotFound(_))
    ));
}

pub async fn racing_takers_get_each_message_once<S: Store, Fut>(fresh: impl Fn() -> Fut)
where
    Fut: Future<Output = TestStore<S>>,
{
    let store = fresh().await;
    store
        .create_run(&running_run("r", 0))
        .await
        .expect("create");
    own(&*store, "a").await;
    for i in 0..40 {
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
    let takers: Vec<_> = (0..4)
        .map(|_| {
            let handle = store.handle();
            tokio::spawn(async move {
                let mut got = Vec::new();
                for _ in 0..5 {
                    got.extend(handle.take("r", "a").await.expect("take"));
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
    let mut numbers: Vec<u32> = all
        .iter()
        .map(|m| match m {
            RunMessage::Answer { text } => text.parse().expect("number"),
            _ => u32::MAX,
        })
        .collect();
    numbers.sort_unstable();
    assert_eq!(
        numbers,
        (0..40).collect::<Vec<_>>(),
        "each message exactly once"
    );
}
