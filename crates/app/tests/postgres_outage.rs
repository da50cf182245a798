//! PostgreSQL going away under load: stopped and started again, then every connection cut.
//! Workers carry on once it is back (a run whose write failed while it was away ends without
//! an outcome and is resumed from its journal), and nothing is lost or done twice. A test
//! binary of its own: it stops its private cluster (crates/store-conformance's
//! `pg_cluster`).

mod common;

use common::*;
use serde_json::json;
use store_conformance::pg_cluster;

const TOKEN: &str = "test-token-0123456789";

async fn queue(server: &Server, n: usize, label: &str) -> Vec<String> {
    let mut ids = Vec::new();
    for i in 0..n {
        let (status, body) = create(server, json!({"task": format!("{label} {i}")})).await;
        assert!(status.is_success(), "{body}");
        ids.push(body["run_id"].as_str().expect("id").to_string());
    }
    ids
}

#[tokio::test]
async fn a_database_down_under_load_then_cut_connections_lose_nothing() {
    if !pg_cluster::available() {
        return;
    }
    let db = pg_cluster::fresh_database().await;
    let cluster = pg_cluster::cluster();
    let (_llm, base) = append_once_llm().await;
    let pw = Planwright::new();
    let server = pw.serve(&base, Some(TOKEN), &["--db", &db]).await;
    let args = [
        "--db",
        db.as_str(),
        "--concurrency",
        "4",
        "--lease-secs",
        "3",
    ];
    let (_worker, log) = logged_worker(&pw, &base, &args);

    // Down while runs are in the middle of tool calls: the first write after the call
    // fails, the run stops without an outcome; then the database comes back.
    let first = queue(&server, 4, "append").await;
    until_event(&server, &first[0], "tool_calling").await;
    tokio::task::spawn_blocking(|| cluster.stop())
        .await
        .expect("stop task")
        .expect("the database stops");
    log.wait_for("the database is unavailable; the run will be resumed", 60)
        .await;
    tokio::task::spawn_blocking(|| cluster.start())
        .await
        .expect("start task")
        .expect("the database starts again");

    // Then every connection cut while runs are under way.
    let second = queue(&server, 4, "append again").await;
    until_event(&server, &second[0], "tool_calling").await;
    cluster
        .drop_connections(pg_cluster::database_name(&db))
        .await
        .expect("connections cut");

    let all: Vec<String> = first.iter().chain(&second).cloned().collect();
    until_completed(&server, &all, 180).await;
    let mut resumed = 0;
    for id in &all {
        assert_appended_once(&pw, id);
        let log: Vec<(u64, String)> = events(&server, id, None)
            .await
            .collect(30)
            .await
            .into_iter()
            .filter_map(|e| e.id.map(|n| (n, e.event)))
            .collect();
        let seqs: Vec<u64> = log.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            seqs,
            (1..=log.len() as u64).collect::<Vec<_>>(),
            "run {id}: no gap, no duplicate"
        );
        assert_eq!(
            log.last().map(|(_, t)| t.as_str()),
            Some("run_completed"),
            "run {id}: {log:?}"
        );
        resumed += log.iter().filter(|(_, t)| t == "run_resumed").count();
    }
    assert!(
        resumed >= 1,
        "the run the outage stopped was resumed from its journal"
    );
}
