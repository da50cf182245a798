//! The adapt loop, on the flow style: retries with backoff, re-plans through the `planning`
//! tool, stuck executors, tool-failure hints, the verifier, the token budget.

use std::time::Duration;

use serde_json::json;

use super::{flow_plan, run};
use crate::model::event::AdaptAction;
use crate::ports::llm::CallPurpose;
use crate::ports::RunStatus;
use crate::testing::replies::{acted, call, fail, json_reply, text};
use crate::testing::RoutedLlm;
use crate::tests::support::config;
use crate::{EventKind, Mode, RunConfig, StepStatus};

#[tokio::test(start_paused = true)]
async fn a_failed_step_is_retried_after_a_backoff() {
    let llm = RoutedLlm::new()
        .plans(vec![flow_plan(&["flaky"])])
        .step("flaky", vec![fail("temporary glitch"), acted("worked")]);
    let cfg = RunConfig {
        retries: 2,
        retry_delay: Duration::from_millis(500),
        ..config(Mode::Flow)
    };
    let r = run(llm, cfg, "t").await;
    assert_eq!(r.outcome.status, RunStatus::Completed);
    assert_eq!(r.outcome.plan.steps()[0].attempts(), 2);
    assert_eq!(r.adapt_actions(), vec![AdaptAction::Retry]);
    assert!(
        r.elapsed >= Duration::from_millis(500),
        "backoff waited: {:?}",
        r.elapsed
    );
    let will_retry: Vec<bool> = r
        .events()
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::StepFailed { will_retry, .. } => Some(will_retry),
            _ => None,
        })
        .collect();
    assert_eq!(will_retry, vec![true]);
}

#[tokio::test(start_paused = true)]
async fn flow_replans_through_the_planning_tool_after_retries_run_out() {
    let llm = RoutedLlm::new()
        .plans(vec![
            flow_plan(&["fetch from the primary", "report"]),
            call(
                "planning",
                json!({"command": "update", "steps": ["fetch from the mirror", "report"]}),
            ),
        ])
        .step("fetch from the primary", vec![fail("503"), fail("503")]);
    let cfg = RunConfig {
        retries: 1,
        max_revisions: 1,
        ..config(Mode::Flow)
    };
    let r = run(llm, cfg, "t").await;
    assert_eq!(
        r.outcome.status,
        RunStatus::Completed,
        "{:?}",
        r.outcome.error
    );
    let texts: Vec<&str> = r
        .outcome
        .plan
        .steps()
        .iter()
        .map(|s| s.description.as_str())
        .collect();
    assert_eq!(texts, ["fetch from the mirror", "report"]);
    assert_eq!(
        r.outcome.plan.steps()[1].id,
        "s2",
        "an unchanged step keeps its id"
    );
    assert_eq!(
        r.adapt_actions(),
        vec![AdaptAction::Retry, AdaptAction::Replan]
    );
    assert!(r.names().contains(&"plan_updated"));
    let replan_prompt = r.llm.requests()[3].messages[1]
        .content
        .clone()
        .unwrap_or_default();
    assert!(replan_prompt.contains("failed: 503"), "{replan_prompt}");
}

#[tokio::test(start_paused = true)]
async fn a_stuck_executor_is_nudged_once_then_its_step_fails() {
    let same = || call("shell_exec", json!({"command": "ls"}));
    let llm = RoutedLlm::new()
        .plans(vec![flow_plan(&["loop"])])
        .step("loop", vec![same(), same(), same(), same()]);
    let r = run(llm, config(Mode::Flow), "t").await;
    let step = &r.outcome.plan.steps()[0];
    assert_eq!(step.status(), StepStatus::Failed);
    assert!(step
        .error
        .clone()
        .unwrap_or_default()
        .contains("stuck in a loop"));
    assert_eq!(r.names().iter().filter(|n| **n == "nudge").count(), 1);
    let fourth = r.llm.requests()[4].clone();
    let last = fourth
        .messages
        .last()
        .and_then(|m| m.content.clone())
        .unwrap_or_default();
    assert!(last.contains("You seem stuck"), "{last}");
}

#[tokio::test(start_paused = true)]
async fn repeating_the_same_answer_twice_is_stuck_too() {
    let llm = RoutedLlm::new()
        .plans(vec![flow_plan(&["think"])])
        .step("think", vec![text("hmm"), text("hmm"), text("hmm")]);
    let r = run(llm, config(Mode::Flow), "t").await;
    assert_eq!(r.outcome.plan.steps()[0].status(), StepStatus::Failed);
    assert!(r.outcome.plan.steps()[0]
        .error
        .clone()
        .unwrap_or_default()
        .contains("same answer"));
}

#[tokio::test(start_paused = true)]
async fn a_tool_failing_twice_in_a_row_gets_a_hint() {
    let llm = RoutedLlm::new().plans(vec![flow_plan(&["use boom"])]).step(
        "use boom",
        vec![
            call("boom", json!({"n": 1})),
            call("boom", json!({"n": 2})),
            acted("ok"),
        ],
    );
    let r = run(llm, config(Mode::Flow), "t").await;
    assert_eq!(r.outcome.status, RunStatus::Completed);
    let third = r.llm.requests()[3].clone();
    let last = third
        .messages
        .last()
        .and_then(|m| m.content.clone())
        .unwrap_or_default();
    assert!(last.contains("`boom` failed twice in a row"), "{last}");
}

#[tokio::test(start_paused = true)]
async fn the_verifier_can_reject_a_claimed_result() {
    let llm = RoutedLlm::new()
        .plans(vec![flow_plan(&["write x"])])
        .others(vec![
            json_reply(json!({"ok": false, "reason": "no file was written"})),
            json_reply(json!({"ok": true, "reason": "fine"})),
        ]);
    let cfg = RunConfig {
        verify: true,
        retries: 1,
        ..config(Mode::Flow)
    };
    let r = run(llm, cfg, "t").await;
    assert_eq!(r.outcome.status, RunStatus::Completed);
    let verdicts: Vec<bool> = r
        .events()
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::StepVerified { ok, .. } => Some(ok),
            _ => None,
        })
        .collect();
    assert_eq!(verdicts, vec![false, true]);
    assert_eq!(r.outcome.plan.steps()[0].attempts(), 2);
}

#[tokio::test(start_paused = true)]
async fn a_token_budget_stops_the_run_cleanly() {
    let llm = RoutedLlm::new().plans(vec![flow_plan(&["a", "b", "c"])]);
    let cfg = RunConfig {
        max_tokens: Some(40),
        ..config(Mode::Flow)
    };
    let r = run(llm, cfg, "t").await;
    assert_eq!(r.outcome.status, RunStatus::Failed);
    let reason = r.outcome.error.clone().unwrap_or_default();
    assert!(reason.contains("token budget of 40"), "{reason}");
    assert_eq!(r.status("c"), StepStatus::Skipped);
    assert!(r.outcome.usage.prompt_tokens + r.outcome.usage.completion_tokens >= 40);
    assert!(
        r.outcome.summary.contains("No LLM summary"),
        "plain report, no more LLM calls"
    );
    assert!(!r
        .llm
        .requests()
        .iter()
        .any(|q| q.purpose == CallPurpose::Summarize));
}
