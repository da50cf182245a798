//! The plan-act style: a JSON plan, revisions (asked by the executor, after every step, after
//! a failure), the default plan, the plain-prompt fallback, step fallbacks, cancellation.

use std::time::Duration;

use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::{run, run_cancellable};
use crate::model::event::AdaptAction;
use crate::ports::llm::{CallPurpose, ResponseFormat, ToolCall};
use crate::ports::RunStatus;
use crate::testing::replies::{call, fail, json_reply, text, Reply};
use crate::testing::RoutedLlm;
use crate::tests::support::config;
use crate::{EventKind, LlmError, Mode, PlanSource, Revise, RunConfig, StepStatus};

fn pa_plan(steps: Value) -> Reply {
    json_reply(json!({"title": "T", "goal": "G", "language": "en", "steps": steps}))
}

#[tokio::test(start_paused = true)]
async fn plan_act_revises_when_the_executor_says_the_plan_no_longer_fits() {
    let llm = RoutedLlm::new()
        .plans(vec![
            pa_plan(json!([{"id": "1", "description": "inspect"}, {"id": "2", "description": "fix"}])),
            json_reply(json!({"steps": [{"id": "2", "description": "fix"}, {"description": "add a test"}]})),
        ])
        .step(
            "inspect",
            vec![call("shell_exec", json!({"command": "true"})).map(|mut r| {
                r.tool_calls.push(ToolCall {
                    id: "c_inspect".into(),
                    name: "complete_step".into(),
                    arguments: json!({"success": true, "result": "found 2 bugs", "revise_plan": true}).to_string(),
                });
                r
            })],
        );
    let cfg = RunConfig {
        max_revisions: 3,
        ..config(Mode::PlanAct)
    };
    let r = run(llm, cfg, "fix the bugs").await;
    assert_eq!(r.outcome.status, RunStatus::Completed);
    let ids: Vec<&str> = r
        .outcome
        .plan
        .steps()
        .iter()
        .map(|s| s.id.as_str())
        .collect();
    assert_eq!(ids, ["1", "2", "s1"], "completed ids kept, new id fresh");
    assert_eq!(r.outcome.plan.language.as_deref(), Some("en"));
    assert_eq!(r.status("add a test"), StepStatus::Completed);
    // The planner was asked with the plan's JSON schema, and saw the completed step.
    let reqs = r.llm.requests();
    assert!(
        matches!(&reqs[0].response_format, ResponseFormat::JsonSchema { schema, .. } if schema["properties"]["steps"]["maxItems"] == 6),
        "{:?}",
        reqs[0].response_format
    );
    let revise = reqs
        .iter()
        .filter(|q| q.purpose == CallPurpose::Plan)
        .nth(1)
        .expect("revision");
    let prompt = revise.messages[1].content.clone().unwrap_or_default();
    assert!(
        prompt.contains("\"status\":\"completed\"") && prompt.contains("found 2 bugs"),
        "{prompt}"
    );
}

#[tokio::test(start_paused = true)]
async fn plan_act_revises_after_every_step_when_configured() {
    let llm = RoutedLlm::new().plans(vec![
        pa_plan(json!([{"id": "1", "description": "a"}, {"id": "2", "description": "b"}])),
        json_reply(json!({"steps": [{"id": "2", "description": "b"}]})),
    ]);
    let cfg = RunConfig {
        max_revisions: 5,
        revise: Revise::EveryStep,
        ..config(Mode::PlanAct)
    };
    let r = run(llm, cfg, "t").await;
    assert_eq!(r.outcome.status, RunStatus::Completed);
    // One revision after "a"; none after "b" (nothing left to revise).
    assert_eq!(
        r.names().iter().filter(|n| **n == "plan_updated").count(),
        1
    );
}

#[tokio::test(start_paused = true)]
async fn plan_act_replans_after_a_failure_and_re_asks_on_an_unknown_step_id() {
    let llm = RoutedLlm::new()
        .plans(vec![
            pa_plan(json!([{"id": "a", "description": "fetch"}, {"id": "b", "description": "parse"}])),
            json_reply(json!({"steps": [{"id": "zz", "description": "nonsense"}]})),
            json_reply(json!({"steps": [{"description": "fetch from the mirror"}, {"id": "b", "description": "parse"}]})),
        ])
        .step("fetch", vec![fail("404")]);
    let cfg = RunConfig {
        max_revisions: 2,
        ..config(Mode::PlanAct)
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
    assert_eq!(texts, ["fetch from the mirror", "parse"]);
    let reask = r
        .llm
        .requests()
        .into_iter()
        .filter(|q| q.purpose == CallPurpose::Plan)
        .nth(2)
        .expect("re-ask");
    let last = reask
        .messages
        .last()
        .and_then(|m| m.content.clone())
        .unwrap_or_default();
    assert!(last.contains("unknown step id 'zz'"), "{last}");
    assert!(r.adapt_actions().contains(&AdaptAction::Replan));
}

#[tokio::test(start_paused = true)]
async fn plan_act_planner_garbage_gives_the_default_plan() {
    let llm = RoutedLlm::new().plans(vec![text("I would start by"), text("sorry, no JSON")]);
    let r = run(llm, config(Mode::PlanAct), "t").await;
    assert_eq!(r.outcome.plan.steps().len(), 3);
    assert_eq!(r.outcome.plan.steps()[0].description, "Analyze request");
    let source = r.events().iter().find_map(|e| match &e.kind {
        EventKind::PlanCreated { source, .. } => Some(*source),
        _ => None,
    });
    assert_eq!(source, Some(PlanSource::Default));
    let repair = r.llm.requests()[1]
        .messages
        .last()
        .and_then(|m| m.content.clone())
        .unwrap_or_default();
    assert!(repair.contains("no valid JSON"), "{repair}");
}

#[tokio::test(start_paused = true)]
async fn plan_act_falls_back_to_json_object_when_json_schema_is_refused() {
    let llm = RoutedLlm::new().plans(vec![
        Err(LlmError::ResponseFormatUnsupported(
            "'response_format.type' must be 'json_schema' or 'text'".into(),
        )),
        text(&format!(
            "Here is the plan:\n```json\n{}\n```",
            json!({"title": "T", "steps": [{"id": "1", "description": "only"}]})
        )),
    ]);
    let r = run(llm, config(Mode::PlanAct), "t").await;
    assert_eq!(r.outcome.plan.steps()[0].description, "only");
    let reqs = r.llm.requests();
    assert!(matches!(
        reqs[0].response_format,
        ResponseFormat::JsonSchema { .. }
    ));
    assert_eq!(reqs[1].response_format, ResponseFormat::JsonObject);
}

#[tokio::test(start_paused = true)]
async fn a_step_fallback_is_tried_when_retries_run_out() {
    let llm = RoutedLlm::new()
        .plans(vec![pa_plan(
            json!([{"id": "1", "description": "use tool A", "fallback": "use tool B"}]),
        )])
        .step("use tool A", vec![fail("A is missing")]);
    let r = run(llm, config(Mode::PlanAct), "t").await;
    assert_eq!(r.outcome.status, RunStatus::Completed);
    let step = &r.outcome.plan.steps()[0];
    assert_eq!(step.description, "use tool B");
    assert!(step.notes.contains("fallback for: use tool A"));
    assert_eq!(r.adapt_actions(), vec![AdaptAction::Fallback]);
}

#[tokio::test(start_paused = true)]
async fn plan_act_cancellation_marks_the_step_and_summarizes() {
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        c.cancel();
    });
    let llm = RoutedLlm::new()
        .plans(vec![pa_plan(
            json!([{"id": "1", "description": "slow"}, {"id": "2", "description": "after"}]),
        )])
        .latency("slow", 1000);
    let r = run_cancellable(llm, config(Mode::PlanAct), "t", cancel).await;
    assert_eq!(r.outcome.status, RunStatus::Failed);
    assert_eq!(r.outcome.error.as_deref(), Some("the run was cancelled"));
    assert_eq!(r.status("slow"), StepStatus::Failed);
    assert_eq!(r.status("after"), StepStatus::Skipped);
    assert!(
        r.elapsed < Duration::from_millis(1000),
        "in-flight step ended at once"
    );
    assert!(r.outcome.summary.contains("cancelled"));
}

/// A plan-act plan over `max_plan_steps` keeps its first steps, with an event; it is not
/// re-asked nor swapped for the default plan.
#[tokio::test(start_paused = true)]
async fn a_plan_act_plan_over_the_cap_is_cut_with_an_event() {
    let llm = RoutedLlm::new().plans(vec![pa_plan(json!([
        {"id": "1", "description": "one"},
        {"id": "2", "description": "two"},
        {"id": "3", "description": "three"}
    ]))]);
    let cfg = RunConfig {
        max_plan_steps: 2,
        ..config(Mode::PlanAct)
    };
    let r = run(llm, cfg, "do three things").await;
    let ids: Vec<&str> = r
        .outcome
        .plan
        .steps()
        .iter()
        .map(|s| s.id.as_str())
        .collect();
    assert_eq!(ids, ["1", "2"]);
    assert!(r.events().iter().any(|e| matches!(
        &e.kind,
        EventKind::PlanCreated {
            source: PlanSource::Llm,
            ..
        }
    )));
    assert!(
        r.errors().iter().any(|m| m.contains("listed 3 steps")),
        "{:?}",
        r.errors()
    );
}
