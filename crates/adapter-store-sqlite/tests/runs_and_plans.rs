//! Plan versions and the `steps` table as SQLite keeps them (the store-agnostic cases are in
//! `tests/conformance.rs`: crates/store-conformance).

mod common;

use adapter_store_sqlite::SqliteStore;
use common::{plan, running_run, temp_store};
use domain::model::plan::StepSpec;
use domain::ports::RunStore;
use domain::StepStatus;

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
async fn every_plan_version_row_is_kept_and_steps_mirror_the_newest() {
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
