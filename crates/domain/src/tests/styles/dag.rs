//! The dag style: steps start when their dependencies finish (or wave by wave), the
//! concurrency limit, conditions, rollbacks, refused graphs, cancellation of parallel steps.

use std::time::Duration;

use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::{run, run_cancellable};
use crate::ports::RunStatus;
use crate::testing::replies::{acted, fail, json_reply, Reply};
use crate::testing::RoutedLlm;
use crate::tests::support::config;
use crate::{Mode, RunConfig, Schedule, StepStatus};

pub(super) fn dag(actions: Value) -> Reply {
    json_reply(
        json!({"goal": "G", "subgoals": [{"id": "g1", "description": "all", "actions": actions}]}),
    )
}

fn diamond() -> Value {
    json!([
        {"id": "a", "description": "a"},
        {"id": "b", "description": "b"},
        {"id": "c", "description": "c", "depends_on": ["a"]},
        {"id": "d", "description": "d", "depends_on": ["b", "c"]}
    ])
}

fn diamond_llm() -> RoutedLlm {
    RoutedLlm::new()
        .plans(vec![dag(diamond())])
        .latency("a", 10)
        .latency("b", 100)
        .latency("c", 10)
}

#[tokio::test(start_paused = true)]
async fn dag_steps_start_the_moment_their_dependencies_finish() {
    let r = run(diamond_llm(), config(Mode::Dag), "t").await;
    assert_eq!(r.outcome.status, RunStatus::Completed);
    // c (after a, 10 ms) runs while b (100 ms) is still going: makespan = b's 100 ms.
    assert!(
        r.elapsed >= Duration::from_millis(100) && r.elapsed < Duration::from_millis(105),
        "{:?}",
        r.elapsed
    );
    assert_eq!(r.llm.max_in_flight(), 2);
    assert_eq!(r.outcome.plan.steps()[0].group.as_deref(), Some("g1"));
}

#[tokio::test(start_paused = true)]
async fn superstep_scheduling_waits_for_each_wave() {
    let cfg = RunConfig {
        schedule: Schedule::Superstep,
        ..config(Mode::Dag)
    };
    let r = run(diamond_llm(), cfg, "t").await;
    assert_eq!(r.outcome.status, RunStatus::Completed);
    // Waves {a, b} = 100 ms, then {c} = 10 ms, then {d}.
    assert!(r.elapsed >= Duration::from_millis(110), "{:?}", r.elapsed);
}

#[tokio::test(start_paused = true)]
async fn the_concurrency_limit_is_respected() {
    let llm = RoutedLlm::new()
        .plans(vec![dag(json!([
            {"id": "a", "description": "a"}, {"id": "b", "description": "b"},
            {"id": "c", "description": "c"}, {"id": "d", "description": "d"}
        ]))])
        .latency("a", 10)
        .latency("b", 10)
        .latency("c", 10)
        .latency("d", 10);
    let cfg = RunConfig {
        parallelism: 2,
        ..config(Mode::Dag)
    };
    let r = run(llm, cfg, "t").await;
    assert_eq!(r.llm.max_in_flight(), 2);
    assert!(r.elapsed >= Duration::from_millis(20));
}

#[tokio::test(start_paused = true)]
async fn conditional_edges_run_or_skip_by_the_upstream_result() {
    let llm = RoutedLlm::new()
        .plans(vec![dag(json!([
            {"id": "t", "description": "run tests"},
            {"id": "p", "description": "publish", "condition": {"step": "t", "contains": "PASS"}},
            {"id": "f", "description": "file a bug", "condition": {"step": "t", "contains": "fail"}}
        ]))])
        .step("run tests", vec![acted("all tests pass")]);
    let r = run(llm, config(Mode::Dag), "t").await;
    assert_eq!(r.status("publish"), StepStatus::Completed);
    assert_eq!(r.status("file a bug"), StepStatus::Skipped);
    assert_eq!(r.outcome.status, RunStatus::Completed);
    assert_eq!(r.llm.executed("file a bug"), 0);
}

#[tokio::test(start_paused = true)]
async fn a_rollback_runs_when_its_target_fails_and_dependents_are_blocked() {
    let llm = RoutedLlm::new()
        .plans(vec![dag(json!([
            {"id": "m", "description": "migrate"},
            {"id": "u", "description": "undo migration", "rollback_of": "m"},
            {"id": "s", "description": "serve", "depends_on": ["m"]},
            {"id": "k", "description": "cleanup"},
            {"id": "r", "description": "undo cleanup", "rollback_of": "k"}
        ]))])
        .step("migrate", vec![fail("schema conflict")]);
    let r = run(llm, config(Mode::Dag), "t").await;
    assert_eq!(r.status("migrate"), StepStatus::Failed);
    assert_eq!(r.status("undo migration"), StepStatus::Completed);
    assert_eq!(r.status("serve"), StepStatus::Blocked);
    assert_eq!(r.status("undo cleanup"), StepStatus::Skipped);
    assert_eq!(r.outcome.status, RunStatus::Failed);
}

#[tokio::test(start_paused = true)]
async fn a_cyclic_dag_is_refused_with_a_re_ask() {
    let llm = RoutedLlm::new().plans(vec![
        dag(json!([
            {"id": "a", "description": "a", "depends_on": ["b"]},
            {"id": "b", "description": "b", "depends_on": ["a"]}
        ])),
        dag(json!([{"id": "a", "description": "a"}, {"id": "b", "description": "b", "depends_on": ["a"]}])),
    ]);
    let r = run(llm, config(Mode::Dag), "t").await;
    assert_eq!(r.outcome.status, RunStatus::Completed);
    let reask = r.llm.requests()[1]
        .messages
        .last()
        .and_then(|m| m.content.clone())
        .unwrap_or_default();
    assert!(reask.contains("cycle"), "{reask}");
}

#[tokio::test(start_paused = true)]
async fn a_dag_with_dangling_references_twice_gives_the_default_plan() {
    let bad = || dag(json!([{"id": "a", "description": "a", "depends_on": ["ghost"]}]));
    let llm = RoutedLlm::new().plans(vec![bad(), bad()]);
    let r = run(llm, config(Mode::Dag), "t").await;
    assert_eq!(r.outcome.plan.steps()[0].description, "Analyze request");
    assert!(r.errors().iter().any(|e| e.contains("ghost")));
}

#[tokio::test(start_paused = true)]
async fn cancelling_a_parallel_run_ends_every_in_flight_step() {
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        c.cancel();
    });
    let r = run_cancellable(diamond_llm(), config(Mode::Dag), "t", cancel).await;
    assert_eq!(r.status("b"), StepStatus::Failed);
    assert_eq!(r.status("d"), StepStatus::Skipped);
    assert_eq!(r.outcome.error.as_deref(), Some("the run was cancelled"));
    assert!(r.elapsed < Duration::from_millis(100));
}
