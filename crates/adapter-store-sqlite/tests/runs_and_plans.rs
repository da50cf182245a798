//! Runs and plan versions.

mod common;

use adapter_store_sqlite::SqliteStore;
use common::{plan, running_run, temp_store, time};
use domain::model::plan::StepSpec;
use domain::ports::{RunStatus, RunStore};
use domain::StoreError;
use domain::{RunUsage, StepStatus};

#[tokio::test]
async fn runs_round_trip_through_create_update_get_and_list() {
    let (_dir, store) = temp_store();
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

#[tokio::test]
async fn save_usage_overwrites_only_the_usage_and_needs_the_run() {
    let (_dir, store) = temp_store();
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

#[tokio::test]
async fn runs_created_at_the_same_instant_are_listed_by_run_id() {
    let (_dir, store) = temp_store();
    for id in ["run_b", "run_a", "run_c"] {
        store.create_run(&running_run(id, 5)).await.expect("create");
    }
    let ids: Vec<String> = store
        .list_runs()
        .await
        .expect("list")
        .into_iter()
        .map(|r| r.run_id)
        .collect();
    assert_eq!(ids, ["run_a", "run_b", "run_c"]);
}

#[tokio::test]
async fn creating_a_run_twice_or_updating_a_missing_run_is_refused() {
    let (_dir, store) = temp_store();
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

/// The steps table as (step_id, position, status, attempts, notes).
fn stored_steps(store: &SqliteStore) -> Vec<(String, i64, String, i64, String)> {
    let conn = rusqlite::Connection::open(store.path()).expect("second connection");
    let mut stmt = conn
        .prepare(
            "SELECT step_id, position, status, attempts, notes FROM steps
             WHERE run_id = 'run_1' AND plan_id = 'plan_1' ORDER BY position",
        )
        .expect("prepare");
    stmt.query_map([], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
    })
    .expect("query")
    .collect::<Result<_, _>>()
    .expect("rows")
}

fn stored_versions(store: &SqliteStore) -> Vec<(i64, String)> {
    let conn = rusqlite::Connection::open(store.path()).expect("second connection");
    let mut stmt = conn
        .prepare("SELECT version, json FROM plans WHERE run_id = 'run_1' ORDER BY version")
        .expect("prepare");
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows")
}

#[tokio::test]
async fn every_plan_version_is_kept_and_the_latest_one_wins() {
    let (_dir, store) = temp_store();
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

    let latest = store
        .latest_plan("run_1")
        .await
        .expect("read")
        .expect("a plan");
    assert_eq!(latest, p, "v2 with its statuses");

    let versions = stored_versions(&store);
    assert_eq!(versions.len(), 2, "both versions stored");
    assert_eq!(versions[0].0, 1);
    let stored_v1: domain::Plan = serde_json::from_str(&versions[0].1).expect("plan json");
    assert_eq!(stored_v1, v1, "v1 keeps its latest state");

    assert_eq!(
        stored_steps(&store),
        vec![
            ("s1".into(), 0, "completed".into(), 1, String::new()),
            ("s3".into(), 1, "in_progress".into(), 1, "running".into()),
            ("s4".into(), 2, "not_started".into(), 0, String::new()),
        ],
        "steps mirror v2; the removed step is gone"
    );

    // A late re-save of v1 updates its row but neither latest_plan nor the steps.
    store.save_plan("run_1", &v1).await.expect("late v1 save");
    assert_eq!(store.latest_plan("run_1").await.expect("read"), Some(p));
    assert_eq!(stored_steps(&store).len(), 3);
}

#[tokio::test]
async fn latest_plan_follows_the_most_recently_saved_plan() {
    let (_dir, store) = temp_store();
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

#[tokio::test]
async fn saving_a_plan_for_an_unknown_run_is_refused() {
    let (_dir, store) = temp_store();
    let err = store
        .save_plan("run_ghost", &plan(&["a"]))
        .await
        .expect_err("no such run");
    assert!(err.message().contains("run_ghost"), "{err}");
}
