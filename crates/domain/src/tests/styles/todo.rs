//! The todo style: a small list grown as work is discovered, blocked dependents, refused
//! cycles, stalls, the list's cap.

use serde_json::json;

use super::run;
use crate::ports::llm::CallPurpose;
use crate::ports::RunStatus;
use crate::testing::replies::{fail, json_reply};
use crate::testing::RoutedLlm;
use crate::tests::support::config;
use crate::{EventKind, Mode, RunConfig, StepStatus};

#[tokio::test(start_paused = true)]
async fn todo_starts_small_and_adds_work_as_it_is_discovered() {
    let llm = RoutedLlm::new().plans(vec![
        json_reply(json!({"todos": [
            {"description": "list files", "dependencies": []},
            {"description": "summarize", "dependencies": [1]}
        ]})),
        json_reply(json!({"needs_update": true, "reason": "found a log folder",
            "new_todos": [{"description": "read the logs", "dependencies": ["s1"]}]})),
        json_reply(json!({"needs_update": false, "reason": "fine"})),
        json_reply(json!({"needs_update": false, "reason": "fine"})),
    ]);
    let r = run(llm, config(Mode::Todo), "what is in this folder").await;
    assert_eq!(r.outcome.status, RunStatus::Completed);
    let ids: Vec<&str> = r
        .outcome
        .plan
        .steps()
        .iter()
        .map(|s| s.id.as_str())
        .collect();
    assert_eq!(ids, ["s1", "s2", "s3"]);
    assert!(r
        .outcome
        .plan
        .steps()
        .iter()
        .all(|s| s.status() == StepStatus::Completed));
    assert_eq!(r.outcome.plan.steps()[1].depends_on, vec!["s1".to_string()]);
    let updated = r.events().iter().find_map(|e| match &e.kind {
        EventKind::PlanUpdated { reason, .. } => Some(reason.clone()),
        _ => None,
    });
    assert_eq!(updated.as_deref(), Some("found a log folder"));
}

#[tokio::test(start_paused = true)]
async fn a_todo_whose_dependency_failed_is_blocked_and_never_run() {
    let llm = RoutedLlm::new()
        .plans(vec![
            json_reply(json!({"todos": [
                {"description": "a", "dependencies": []},
                {"description": "b", "dependencies": [1]},
                {"description": "c", "dependencies": []}
            ]})),
            json_reply(json!({"needs_update": false})),
            json_reply(json!({"needs_update": false})),
        ])
        .step("a", vec![fail("no access")]);
    let r = run(llm, config(Mode::Todo), "t").await;
    assert_eq!(r.status("a"), StepStatus::Failed);
    assert_eq!(r.status("b"), StepStatus::Blocked);
    assert_eq!(r.status("c"), StepStatus::Completed);
    assert_eq!(r.llm.executed("b"), 0, "an unready TODO is never force-run");
    assert_eq!(r.outcome.status, RunStatus::Failed);
}

#[tokio::test(start_paused = true)]
async fn a_todo_update_with_a_cycle_is_refused() {
    let llm = RoutedLlm::new().plans(vec![
        json_reply(
            json!({"todos": [{"description": "a"}, {"description": "b"}, {"description": "c"}]}),
        ),
        json_reply(json!({"needs_update": true, "modify_todos": [
            {"id": "s2", "dependencies": ["s3"]}, {"id": "s3", "dependencies": ["s2"]}]})),
        json_reply(json!({"needs_update": false})),
        json_reply(json!({"needs_update": false})),
    ]);
    let r = run(llm, config(Mode::Todo), "t").await;
    assert_eq!(r.outcome.status, RunStatus::Completed);
    assert!(
        r.errors()
            .iter()
            .any(|e| e.contains("TODO update refused") && e.contains("cycle")),
        "{:?}",
        r.errors()
    );
    assert!(r
        .outcome
        .plan
        .steps()
        .iter()
        .all(|s| s.depends_on.is_empty()));
}

#[tokio::test(start_paused = true)]
async fn todo_stops_after_rounds_without_progress() {
    let llm = RoutedLlm::new()
        .plans(vec![
            json_reply(json!({"todos": [{"description": "a"}, {"description": "b"}, {"description": "c"}]})),
            json_reply(json!({"needs_update": false})),
            json_reply(json!({"needs_update": false})),
        ])
        .step("a", vec![fail("x")])
        .step("b", vec![fail("y")]);
    let cfg = RunConfig {
        todo_stall_rounds: 2,
        ..config(Mode::Todo)
    };
    let r = run(llm, cfg, "t").await;
    assert_eq!(r.status("c"), StepStatus::Skipped);
    assert!(r
        .outcome
        .error
        .clone()
        .unwrap_or_default()
        .contains("no TODO was completed in the last 2 rounds"));
}

#[tokio::test(start_paused = true)]
async fn the_todo_list_is_capped_and_compression_is_asked_near_the_cap() {
    let llm = RoutedLlm::new().plans(vec![
        json_reply(json!({"todos": [{"description": "a"}]})),
        json_reply(json!({"needs_update": true, "new_todos": [
            {"description": "b"}, {"description": "c"}, {"description": "d"}]})),
        json_reply(json!({"needs_update": false})),
        json_reply(json!({"needs_update": false})),
    ]);
    let cfg = RunConfig {
        max_todos: 3,
        ..config(Mode::Todo)
    };
    let r = run(llm, cfg, "t").await;
    assert_eq!(r.outcome.plan.steps().len(), 3);
    assert!(r.errors().iter().any(|e| e.contains("limit of 3")));
    let near_cap = r
        .llm
        .requests()
        .into_iter()
        .filter(|q| q.purpose == CallPurpose::Plan)
        .nth(2)
        .expect("update");
    let prompt = near_cap.messages[1].content.clone().unwrap_or_default();
    assert!(prompt.contains("nearly full (3/3)"), "{prompt}");
}
