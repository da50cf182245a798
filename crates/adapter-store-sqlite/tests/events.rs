//! The append-only, gap-free event log.

mod common;

use common::{event, plan, running_run, temp_store};
use domain::llm::CallPurpose;
use domain::ports::RunStore;
use domain::{Event, EventKind, PlanSource, RunUsage, StepStatus};

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
            output: "ünïcödé ✓\nline 2".into(),
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

#[tokio::test]
async fn events_are_read_back_equal_and_filtered_by_seq() {
    let (_dir, store) = temp_store();
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
        .append_event(&event(
            "run_2",
            1,
            EventKind::Message {
                step_id: None,
                text: "other run".into(),
            },
        ))
        .await
        .expect("append to another run");

    assert_eq!(store.events("run_1", 0).await.expect("read"), evs);
    assert_eq!(
        store.events("run_1", 4).await.expect("read"),
        evs[4..].to_vec()
    );
    assert!(store.events("run_1", 7).await.expect("read").is_empty());
    assert!(store
        .events("run_1", u64::MAX)
        .await
        .expect("read")
        .is_empty());
    assert_eq!(store.events("run_2", 0).await.expect("read").len(), 1);
    assert!(store.events("run_ghost", 0).await.expect("read").is_empty());
}

#[tokio::test]
async fn gaps_and_duplicates_are_refused_and_write_nothing() {
    let (_dir, store) = temp_store();
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
    assert!(matches!(gap, domain::StoreError::Conflict(_)), "{gap:?}");
    assert!(
        gap.message().contains("gap") && gap.message().contains("next seq is 3"),
        "{gap}"
    );

    let mut dup = evs[2].clone();
    dup.seq = 2;
    let err = store.append_event(&dup).await.expect_err("seq 2 again");
    assert!(err.message().contains("duplicate"), "{err}");

    let zero = store
        .append_event(&event(
            "run_1",
            0,
            EventKind::Message {
                step_id: None,
                text: "x".into(),
            },
        ))
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

#[tokio::test]
async fn the_first_event_of_a_run_must_be_seq_1_and_the_run_must_exist() {
    let (_dir, store) = temp_store();
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
    assert!(
        matches!(ghost, domain::StoreError::NotFound(_)),
        "{ghost:?}"
    );
    assert!(ghost.message().contains("does not exist"), "{ghost}");
}

#[tokio::test]
async fn a_store_error_names_the_operation_and_the_run() {
    let (_dir, store) = temp_store();
    store
        .create_run(&running_run("run_42", 0))
        .await
        .expect("create");
    let err = store
        .append_event(&event(
            "run_42",
            9,
            EventKind::Message {
                step_id: None,
                text: "x".into(),
            },
        ))
        .await
        .expect_err("gap");
    let msg = err.to_string();
    assert!(msg.contains("append_event"), "{msg}");
    assert!(msg.contains("run_42"), "{msg}");
    assert!(msg.contains("runs.db"), "names the file: {msg}");
}

#[test]
fn the_event_log_is_read_through_its_run_seq_index() {
    let (_dir, store) = temp_store();
    let conn = rusqlite::Connection::open(store.path()).expect("second connection");
    let plan: Vec<String> = conn
        .prepare(
            "EXPLAIN QUERY PLAN
             SELECT json FROM events WHERE run_id = ?1 AND seq > ?2 ORDER BY seq",
        )
        .expect("prepare")
        .query_map(["run_1", "0"], |r| r.get::<_, String>(3))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    let plan = plan.join("; ");
    assert!(plan.contains("USING INDEX"), "{plan}");
    assert!(!plan.contains("TEMP B-TREE"), "no sort step: {plan}");
}
