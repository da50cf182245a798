//! The append-only, gap-free event log.

use std::future::Future;

use domain::llm::CallPurpose;
use domain::{Event, EventKind, PlanSource, RunUsage, StepStatus, StoreError};

use super::Store;
use crate::fixtures::{event, message, plan, running_run};
use crate::TestStore;

fn sample_events(run_id: &str) -> Vec<Event> {
    let kinds = vec![
        EventKind::RunStarted {
            task: "write a haiku".into(),
            mode: "flow".into(),
            workspace: "/tmp/ws".into(),
        },
        EventKind::PlanCreated {
            plan: plan(&["[SEARCH] look", "write"]),
            source: PlanSource::Default,
            reason: Some("planner timed out".into()),
        },
        EventKind::StepStarted {
            step_id: "s1".into(),
            index: 0,
            description: "look".into(),
            executor: "default".into(),
            attempt: 1,
        },
        EventKind::ToolCalled {
            step_id: Some("s1".into()),
            call_id: "call_1".into(),
            tool: "shell".into(),
            ok: true,
            // Non-ASCII, and a NUL byte as a binary tool output may carry.
            output: "ünïcödé ✓\nline 2\u{0}end".into(),
            duration_ms: 12,
            journal_key: Some("exec:s1:1#1/call_1".into()),
        },
        EventKind::LlmCalled {
            purpose: CallPurpose::Execute,
            step_id: None,
            ok: true,
            prompt_tokens: 100,
            completion_tokens: 20,
            cached_prompt_tokens: 64,
            duration_ms: 900,
            key: Some("exec:s1:1#1".into()),
            request_hash: Some("00ff".into()),
            response: Some(domain::llm::ChatResponse {
                content: Some("hi".into()),
                ..Default::default()
            }),
        },
        EventKind::StepFailed {
            step_id: "s1".into(),
            status: StepStatus::Blocked,
            error: "no network".into(),
            will_retry: false,
        },
        // Added with the workspace checkpoints (docs/checkpoints.md).
        EventKind::CheckpointTaken {
            step_id: None,
            attempt: 0,
            checkpoint: domain::ports::CheckpointId::new("0123456789abcdef01234567"),
            files: 3,
            stored_bytes: 0,
            left_out: vec![domain::ports::LeftOut {
                path: "big.bin".into(),
                reason: domain::ports::LeftOutReason::TooLarge,
            }],
            incomplete: true,
        },
        EventKind::RunFailed {
            reason: "blocked".into(),
            summary: "nothing done".into(),
            usage: RunUsage {
                llm_calls: 1,
                prompt_tokens: 100,
                completion_tokens: 20,
                cached_prompt_tokens: 0,
            },
            cancelled: false,
        },
    ];
    kinds
        .into_iter()
        .enumerate()
        .map(|(i, kind)| event(run_id, i as u64 + 1, kind))
        .collect()
}

pub async fn events_are_read_back_equal_and_filtered_by_seq<S: Store, Fut>(fresh: impl Fn() -> Fut)
where
    Fut: Future<Output = TestStore<S>>,
{
    let store = fresh().await;
    store
        .create_run(&running_run("run_1", 0))
        .await
        .expect("create");
    store
        .create_run(&running_run("run_2", 0))
        .await
        .expect("create");
    let evs = sample_events("run_1");
    for ev in &evs {
        store.append_event(ev).await.expect("append");
    }
    store
        .append_event(&message("run_2", 1, "other run"))
        .await
        .expect("append to another run");

    assert_eq!(store.events("run_1", 0).await.expect("read"), evs);
    assert_eq!(
        store.events("run_1", 4).await.expect("read"),
        evs[4..].to_vec()
    );
    assert!(store.events("run_1", 8).await.expect("read").is_empty());
    assert!(store
        .events("run_1", u64::MAX)
        .await
        .expect("read")
        .is_empty());
    assert_eq!(store.events("run_2", 0).await.expect("read").len(), 1);
    assert!(store.events("run_ghost", 0).await.expect("read").is_empty());
}

pub async fn gaps_and_duplicates_are_refused_and_write_nothing<S: Store, Fut>(
    fresh: impl Fn() -> Fut,
) where
    Fut: Future<Output = TestStore<S>>,
{
    let store = fresh().await;
    store
        .create_run(&running_run("run_1", 0))
        .await
        .expect("create");
    let evs = sample_events("run_1");
    store.append_event(&evs[0]).await.expect("append 1");
    store.append_event(&evs[1]).await.expect("append 2");

    let gap = store
        .append_event(&evs[3])
        .await
        .expect_err("seq 4 after 2");
    assert!(matches!(gap, StoreError::Conflict(_)), "{gap:?}");
    assert!(
        gap.message().contains("gap") && gap.message().contains("next seq is 3"),
        "{gap}"
    );

    let mut dup = evs[2].clone();
    dup.seq = 2;
    let err = store.append_event(&dup).await.expect_err("seq 2 again");
    assert!(matches!(err, StoreError::Conflict(_)), "{err:?}");
    assert!(err.message().contains("duplicate"), "{err}");

    let zero = store
        .append_event(&message("run_1", 0, "x"))
        .await
        .expect_err("seq 0");
    assert!(zero.message().contains("next seq is 3"), "{zero}");

    assert_eq!(
        store.events("run_1", 0).await.expect("read"),
        evs[..2].to_vec(),
        "refused events left no trace"
    );
    store
        .append_event(&evs[2])
        .await
        .expect("seq 3 is still accepted");
}

pub async fn the_first_event_of_a_run_must_be_seq_1_and_the_run_must_exist<S: Store, Fut>(
    fresh: impl Fn() -> Fut,
) where
    Fut: Future<Output = TestStore<S>>,
{
    let store = fresh().await;
    store
        .create_run(&running_run("run_1", 0))
        .await
        .expect("create");
    let evs = sample_events("run_1");
    assert!(
        store.append_event(&evs[1]).await.is_err(),
        "log starts at 1"
    );
    let ghost = store
        .append_event(&sample_events("run_ghost")[0])
        .await
        .expect_err("unknown run");
    assert!(matches!(ghost, StoreError::NotFound(_)), "{ghost:?}");
    assert!(ghost.message().contains("does not exist"), "{ghost}");
}

pub async fn a_store_error_names_the_operation_and_the_run<S: Store, Fut>(fresh: impl Fn() -> Fut)
where
    Fut: Future<Output = TestStore<S>>,
{
    let store = fresh().await;
    store
        .create_run(&running_run("run_42", 0))
        .await
        .expect("create");
    let err = store
        .append_event(&message("run_42", 9, "x"))
        .await
        .expect_err("gap");
    let msg = err.to_string();
    assert!(msg.contains("append_event"), "{msg}");
    assert!(msg.contains("run_42"), "{msg}");
}

/// Eight writers append the same next `seq` of one run at once (as two processes that both
/// believe they own the run would): exactly one is stored, the others get `Conflict`, and
/// the log stays gap-free.
pub async fn of_writers_racing_for_one_seq_exactly_one_is_stored<S: Store, Fut>(
    fresh: impl Fn() -> Fut,
) where
    Fut: Future<Output = TestStore<S>>,
{
    let store = fresh().await;
    store
        .create_run(&running_run("run_1", 0))
        .await
        .expect("create");
    for seq in 1..=10u64 {
        let writers = (0..8).map(|w| {
            let store = store.handle();
            tokio::spawn(async move {
                store
                    .append_event(&message("run_1", seq, &format!("writer {w}")))
                    .await
            })
        });
        let outcomes: Vec<_> = futures_util::future::join_all(writers)
            .await
            .into_iter()
            .map(|joined| joined.expect("writer task"))
            .collect();
        let stored = outcomes.iter().filter(|o| o.is_ok()).count();
        assert_eq!(stored, 1, "seq {seq}: {outcomes:?}");
        for refused in outcomes.iter().filter_map(|o| o.as_ref().err()) {
            assert!(matches!(refused, StoreError::Conflict(_)), "{refused:?}");
        }
    }
    let seqs: Vec<u64> = store
        .events("run_1", 0)
        .await
        .expect("read")
        .iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(seqs, (1..=10).collect::<Vec<_>>());
}
