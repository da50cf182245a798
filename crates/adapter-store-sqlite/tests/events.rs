//! The event log, as SQLite keeps it (the store-agnostic cases are in
//! `tests/conformance.rs`: crates/store-conformance).

mod common;

use common::{event, running_run, temp_store};
use domain::ports::RunStore;
use domain::EventKind;

#[tokio::test]
async fn a_store_error_names_the_file() {
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
