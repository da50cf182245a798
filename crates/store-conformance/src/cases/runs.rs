//! Runs and plan versions.

use std::future::Future;

use domain::model::plan::StepSpec;
use domain::ports::RunStatus;
use domain::{RunUsage, StepStatus, StoreError};

use super::Store;
use crate::fixtures::{message, plan, queued, running_run, time};
use crate::TestStore;

pub async fn runs_round_trip_through_create_update_get_and_list<S: Store, Fut>(
    fresh: impl Fn() -> Fut,
) where
    Fut: Future<Output = TestStore<S>>,
{
    let store = fresh().await;
    let old = running_run("run_old", 0);
    let new = running_run("run_new", 60);
    store.create_run(&old).await.expect("create old");
    store.create_run(&new).await.expect("create new");

    assert_eq!(
        store.get_run("run_old").await.expect("get"),
        Some(old.clone())
    );
    assert_eq!(store.get_run("nope").await.expect("get"), None);

    let mut finished = old.clone();
    finished.status = RunStatus::Failed;
    finished.finished_at = Some(time(30, 42));
    finished.summary = Some("did half".into());
    finished.error = Some("step s2 failed".into());
    finished.usage = RunUsage {
        llm_calls: 7,
        prompt_tokens: 12_345,
        completion_tokens: 678,
        cached_prompt_tokens: 9_876,
    };
    store.update_run(&finished).await.expect("update");
    assert_eq!(
        store.get_run("run_old").await.expect("get"),
        Some(finished.clone()),
        "every field survives, including usage and finish time"
    );

    let listed = store.list_runs().await.expect("list");
    assert_eq!(listed, vec![new, finished], "newest first");
}

/// A queue run's request is rewritten by `update_run` when the record carries one (the
/// context of its latest span, docs/observability.md), and never erased by a record
/// without one.
pub async fn update_run_rewrites_a_queue_request_and_never_erases_it<S: Store, Fut>(
    fresh: impl Fn() -> Fut,
) where
    Fut: Future<Output = TestStore<S>>,
{
    let store = fresh().await;
    let mut run = queued("run_q", 0);
    store.create_run(&run).await.expect("create");
    run.status = RunStatus::Running;
    run.queue_request = Some(serde_json::json!({"mode": "flow", "run_traceparent": "00-a-b-01"}));
    store.update_run(&run).await.expect("update");
    assert_eq!(
        store.get_run("run_q").await.expect("get"),
        Some(run.clone())
    );

    let mut without = run.clone();
    without.queue_request = None;
    without.status = RunStatus::Waiting;
    store.update_run(&without).await.expect("update");
    let stored = store.get_run("run_q").await.expect("get").expect("the run");
    assert_eq!(stored.status, RunStatus::Waiting);
    assert_eq!(stored.queue_request, run.queue_request, "kept");
}

pub async fn save_usage_overwrites_only_the_usage_and_needs_the_run<S: Store, Fut>(
    fresh: impl Fn() -> Fut,
) where
    Fut: Future<Output = TestStore<S>>,
{
    let store = fresh().await;
    let run = running_run("run_1", 0);
    store.create_run(&run).await.expect("create");
    let usage = RunUsage {
        llm_calls: 3,
        prompt_tokens: 1_500,
        completion_tokens: 90,
        cached_prompt_tokens: 1_024,
    };
    store.save_usage("run_1", &usage).await.expect("save usage");
    let mut expected = run.clone();
    expected.usage = usage;
    assert_eq!(store.get_run("run_1").await.expect("get"), Some(expected));

    let grown = RunUsage {
        llm_calls: 4,
        ..usage
    };
    store.save_usage("run_1", &grown).await.expect("save again");
    let stored = store.get_run("run_1").await.expect("get").expect("run");
    assert_eq!(stored.usage, grown);
    assert_eq!(
        stored.status,
        RunStatus::Running,
        "the status is left alone"
    );

    let err = store
        .save_usage("run_ghost", &usage)
        .await
        .expect_err("no such run");
    assert!(matches!(err, StoreError::NotFound(_)), "{err:?}");
    assert!(
        err.message().contains("save_usage") && err.message().contains("run_ghost"),
        "{err}"
    );
}

pub async fn set_run_status_changes_only_the_status_and_needs_the_run<S: Store, Fut>(
    fresh: impl Fn() -> Fut,
) where
    Fut: Future<Output = TestStore<S>>,
{
    let store = fresh().await;
    let mut run = running_run("run_1", 0);
    run.summary = Some("so far".into());
    store.create_run(&run).await.expect("create");
    store
        .set_run_status("run_1", RunStatus::Waiting)
        .await
        .expect("waiting");
    let mut expected = run.clone();
    expected.status = RunStatus::Waiting;
    assert_eq!(store.get_run("run_1").await.expect("get"), Some(expected));
    let err = store
        .set_run_status("run_ghost", RunStatus::Running)
        .await
        .expect_err("no such run");
    assert!(matches!(err, StoreError::NotFound(_)), "{err:?}");
}

pub async fn runs_created_at_the_same_instant_are_listed_by_run_id<S: Store, Fut>(
    fresh: impl Fn() -> Fut,
) where
    Fut: Future<Output = TestStore<S>>,
{
    let store = fresh().await;
    for id in ["run_b", "run_a", "run_c", "run_B"] {
        store.create_run(&running_run(id, 5)).await.expect("create");
    }
    let ids: Vec<String> = store
        .list_runs()
        .await
        .expect("list")
        .into_iter()
        .map(|r| r.run_id)
        .collect();
    assert_eq!(ids, ["run_B", "run_a", "run_b", "run_c"], "byte order");
}

pub async fn creating_a_run_twice_or_updating_a_missing_run_is_refused<S: Store, Fut>(
    fresh: impl Fn() -> Fut,
) where
    Fut: Future<Output = TestStore<S>>,
{
    let store = fresh().await;
    let run = running_run("run_1", 0);
    store.create_run(&run).await.expect("create");
    let dup = store.create_run(&run).await.expect_err("duplicate run id");
    assert!(matches!(dup, StoreError::Conflict(_)), "{dup:?}");
    assert!(dup.message().contains("already exists"), "{dup}");
    let missing = store
        .update_run(&running_run("run_ghost", 0))
        .await
        .expect_err("no such run");
    assert!(matches!(missing, StoreError::NotFound(_)), "{missing:?}");
    assert!(missing.message().contains("does not exist"), "{missing}");
}

pub async fn deleting_a_run_removes_its_plans_and_events<S: Store, Fut>(fresh: impl Fn() -> Fut)
where
    Fut: Future<Output = TestStore<S>>,
{
    let store = fresh().await;
    for id in ["run_1", "run_2"] {
        store.create_run(&running_run(id, 0)).await.expect("create");
        store.save_plan(id, &plan(&["a"])).await.expect("plan");
        store
            .append_event(&message(id, 1, "hi"))
            .await
            .expect("event");
    }
    assert!(store.delete_run("run_1").await.expect("delete"));
    assert!(!store.delete_run("run_1").await.expect("delete again"));
    assert_eq!(store.get_run("run_1").await.expect("get"), None);
    assert_eq!(store.latest_plan("run_1").await.expect("plan"), None);
    assert!(store.events("run_1", 0).await.expect("events").is_empty());
    assert_eq!(
        store.events("run_2", 0).await.expect("events").len(),
        1,
        "others stay"
    );
    // The id may be used again, from an empty log.
    store
        .create_run(&running_run("run_1", 9))
        .await
        .expect("create again");
    store
        .append_event(&message("run_1", 1, "again"))
        .await
        .expect("seq 1 again");
}

pub async fn every_plan_version_is_kept_and_the_latest_one_wins<S: Store, Fut>(
    fresh: impl Fn() -> Fut,
) where
    Fut: Future<Output = TestStore<S>>,
{
    let store = fresh().await;
    store
        .create_run(&running_run("run_1", 0))
        .await
        .expect("create");
    assert_eq!(store.latest_plan("run_1").await.expect("read"), None);

    let mut p = plan(&["[SEARCH] find docs", "write code", "test it"]);
    store.save_plan("run_1", &p).await.expect("save v1");

    // Same version, statuses changed: the v1 row is replaced.
    p.transition("s1", StepStatus::InProgress).expect("legal");
    p.transition("s1", StepStatus::Completed).expect("legal");
    p.step_mut("s1").expect("s1").result = Some("found".into());
    store.save_plan("run_1", &p).await.expect("save v1 again");
    assert_eq!(
        store.latest_plan("run_1").await.expect("read"),
        Some(p.clone())
    );
    let v1 = p.clone();

    // Version 2: "write code" is dropped, a new step appears.
    p.replace_steps(&[
        StepSpec::text("[SEARCH] find docs"),
        StepSpec::text("test it"),
        StepSpec::text("ship it"),
    ])
    .expect("valid update");
    assert_eq!(p.version(), 2);
    p.transition("s3", StepStatus::InProgress).expect("legal");
    p.step_mut("s3").expect("s3").notes = "running".into();
    store.save_plan("run_1", &p).await.expect("save v2");
    assert_eq!(
        store.latest_plan("run_1").await.expect("read"),
        Some(p.clone()),
        "v2 with its statuses"
    );

    // A late re-save of v1 does not make it the latest.
    store.save_plan("run_1", &v1).await.expect("late v1 save");
    assert_eq!(store.latest_plan("run_1").await.expect("read"), Some(p));
}

pub async fn latest_plan_follows_the_most_recently_saved_plan<S: Store, Fut>(
    fresh: impl Fn() -> Fut,
) where
    Fut: Future<Output = TestStore<S>>,
{
    let store = fresh().await;
    store
        .create_run(&running_run("run_1", 0))
        .await
        .expect("create");
    let mut first = plan(&["a"]);
    for _ in 0..2 {
        first.replace_steps(&[StepSpec::text("a")]).expect("valid");
    }
    assert_eq!(first.version(), 3);
    store.save_plan("run_1", &first).await.expect("save");
    let mut second = plan(&["b"]);
    second.id = "plan_2".into();
    store.save_plan("run_1", &second).await.expect("save");
    assert_eq!(
        store.latest_plan("run_1").await.expect("read"),
        Some(second)
    );
}

pub async fn saving_a_plan_for_an_unknown_run_is_refused<S: Store, Fut>(fresh: impl Fn() -> Fut)
where
    Fut: Future<Output = TestStore<S>>,
{
    let store = fresh().await;
    let err = store
        .save_plan("run_ghost", &plan(&["a"]))
        .await
        .expect_err("no such run");
    assert!(matches!(err, StoreError::NotFound(_)), "{err:?}");
    assert!(err.message().contains("run_ghost"), "{err}");
}

/// Issue 29: text a tool or a client sends may hold a NUL byte (and the escape character
/// a store may use for it); every store keeps it and gives it back exactly: the task, the
/// summary and error, a step's result and notes, the plan's title and an event's text.
pub async fn text_with_nul_bytes_round_trips_exactly<S: Store, Fut>(fresh: impl Fn() -> Fut)
where
    Fut: Future<Output = TestStore<S>>,
{
    let store = fresh().await;
    let odd = "a\0b \u{FFFF}0 \u{FFFF}\u{FFFF} \0\0 end\u{FFFF}";
    let mut run = running_run("run_nul", 0);
    run.task = format!("task {odd}");
    store
        .create_run(&run)
        .await
        .expect("create with NUL in the task");
    assert_eq!(
        store.get_run("run_nul").await.expect("get"),
        Some(run.clone())
    );

    let mut p = plan(&["first \0 step", "second"]);
    p.title = format!("title {odd}");
    p.transition("s1", StepStatus::InProgress).expect("legal");
    p.transition("s1", StepStatus::Completed).expect("legal");
    let step = p.step_mut("s1").expect("s1");
    step.result = Some(format!("result {odd}"));
    step.notes = format!("notes {odd}");
    store
        .save_plan("run_nul", &p)
        .await
        .expect("save a plan with NUL");
    assert_eq!(
        store.latest_plan("run_nul").await.expect("latest"),
        Some(p.clone())
    );

    let event = crate::fixtures::message("run_nul", 1, odd);
    store.append_event(&event).await.expect("append");
    assert_eq!(
        store.events("run_nul", 0).await.expect("events"),
        vec![event]
    );

    run.status = RunStatus::Completed;
    run.summary = Some(format!("summary {odd}"));
    run.error = Some(format!("error {odd}"));
    store.update_run(&run).await.expect("update with NUL");
    assert_eq!(
        store.get_run("run_nul").await.expect("get"),
        Some(run.clone())
    );
    assert_eq!(store.list_runs().await.expect("list"), vec![run]);
}
