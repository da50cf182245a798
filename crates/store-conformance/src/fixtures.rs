//! Values the cases build runs, plans, events and claims from.

use chrono::{DateTime, TimeZone, Utc};
use domain::ports::{LeaseClaim, RunRecord, RunStatus};
use domain::{Event, EventKind, Plan, RunUsage};
use serde_json::json;

/// 2026-01-01T00:00:00Z plus `secs` and `nanos`: every time of the suite, exact to the
/// nanosecond (stores must round-trip it).
pub fn time(secs: i64, nanos: u32) -> DateTime<Utc> {
    Utc.timestamp_opt(1_767_225_600 + secs, nanos)
        .single()
        .expect("valid time")
}

/// A run started directly (not through the queue), `running`, no lease.
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
        client: None,
    }
}

/// A run as a client of the queue stores it.
pub fn queued(run_id: &str, created_secs: i64) -> RunRecord {
    let mut run = running_run(run_id, created_secs);
    run.status = RunStatus::Queued;
    run.queue_request = Some(json!({"mode": "flow", "model": "m"}));
    run
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

pub fn message(run_id: &str, seq: u64, text: &str) -> Event {
    event(
        run_id,
        seq,
        EventKind::Message {
            step_id: None,
            text: text.into(),
        },
    )
}

pub fn claim(owner: &str, now: i64, until: i64) -> LeaseClaim {
    LeaseClaim {
        owner: owner.into(),
        now: time(now, 0),
        until: time(until, 0),
        stale_owner: None,
    }
}
