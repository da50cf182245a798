//! Fixtures shared by the integration tests.
#![allow(dead_code)]

use adapter_store_sqlite::SqliteStore;
use chrono::{DateTime, TimeZone, Utc};
use domain::ports::{RunRecord, RunStatus};
use domain::{Event, EventKind, Plan, RunUsage};
use tempfile::TempDir;

/// A fresh store in its own temporary folder (a real file, never `:memory:`).
pub fn temp_store() -> (TempDir, SqliteStore) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = SqliteStore::open(dir.path().join("runs.db")).expect("store opens");
    (dir, store)
}

pub fn time(secs: i64, nanos: u32) -> DateTime<Utc> {
    Utc.timestamp_opt(1_767_225_600 + secs, nanos)
        .single()
        .expect("valid time")
}

pub fn running_run(run_id: &str, created_secs: i64) -> RunRecord {
    RunRecord {
        run_id: run_id.into(),
        task: format!("task of {run_id}"),
        mode: "flow".into(),
        status: RunStatus::Running,
        workspace: format!("/tmp/ws/{run_id}"),
        created_at: time(created_secs, 123_456_789),
        finished_at: None,
        summary: None,
        error: None,
        usage: RunUsage::default(),
        lease: None,
        queue_request: None,
    }
}

pub fn plan(texts: &[&str]) -> Plan {
    let texts: Vec<String> = texts.iter().map(|t| t.to_string()).collect();
    Plan::from_texts("plan_1", "A plan", "the goal", &texts).expect("valid plan")
}

pub fn event(run_id: &str, seq: u64, kind: EventKind) -> Event {
    Event {
        run_id: run_id.into(),
        seq,
        at: time(seq as i64, 500),
        kind,
    }
}
