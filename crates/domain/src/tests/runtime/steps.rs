//! One step's tool loop: claims without action, failures, limits (turns, time, calls per
//! answer), LLM errors, bad tool calls, a context too long.

use std::time::Duration;

use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::{run, run_with};
use crate::engine::config::RunConfig;
use crate::model::event::EventKind;
use crate::model::plan::StepStatus;
use crate::ports::llm::{LlmError, Role};
use crate::ports::RunStatus;
use crate::testing::replies::{calls, create_plan, done, fail, raw_calls, text};
use crate::testing::{EchoToolbox, ScriptedLlm};
use crate::tests::support::{assert_gap_free, assert_valid_transcripts, base_config, run_task};

/// A success claimed before acting is refused once (the model may act); claimed again, it
/// stands: the run completes, and its answer is not verified (docs/verification.md).
#[tokio::test]
async fn success_claimed_without_any_tool_call_is_refused_once_then_stands() {
    let mut config = base_config();
    config.limits.nudges = crate::engine::executor::agent::Nudges::default();
    config.limits.nudges.claim_before_acting = true;
    let h = run_with(
        vec![
            create_plan(&["Write hello.txt"]),
            done("wrote hello.txt"),
            done("wrote hello.txt, really"),
            text("The task was completed successfully."),
        ],
        config,
    )
    .await;
    assert_eq!(h.outcome.status, RunStatus::Completed);
    assert!(!h.outcome.verification.verified);
    let step = &h.outcome.plan.steps()[0];
    assert_eq!(step.result.as_deref(), Some("wrote hello.txt, really"));
    // The first claim was answered "Not accepted yet", not "Step finished".
    let reqs = h.llm.requests();
    let answer = reqs[2]
        .messages
        .iter()
        .rfind(|m| m.role == Role::Tool)
        .and_then(|m| m.content.clone())
        .unwrap_or_default();
    assert!(answer.starts_with("Not accepted yet"), "{answer}");
    assert!(h.names().contains(&"nudge"));
}

/// With the nudges off, the first claim stands.
#[tokio::test]
async fn nudges_off_leave_the_model_alone() {
    let mut config = base_config();
    config.limits.nudges = crate::engine::executor::agent::Nudges::none();
    let h = run_with(
        vec![
            create_plan(&["Write hello.txt"]),
            calls(&[("boom", json!({}))]),
            calls(&[("boom", json!({}))]),
            calls(&[("boom", json!({}))]),
            done("wrote hello.txt"),
            text("Done."),
        ],
        config,
    )
    .await;
    assert_eq!(h.outcome.status, RunStatus::Completed);
    assert!(!h.names().contains(&"nudge"), "{:?}", h.names());
}

#[tokio::test]
async fn a_reporting_step_may_complete_without_a_tool_call() {
    let h = run(vec![
        create_plan(&["Summarize the findings"]),
        done("nothing to find"),
        text("ok"),
    ])
    .await;
    assert_eq!(h.outcome.status, RunStatus::Completed);
}

#[tokio::test]
async fn executor_failure_fails_the_step_and_the_run_with_the_reason() {
    let h = run(vec![
        create_plan(&["Download the file", "Parse it"]),
        fail("the URL returns 404"),
        text("could not finish"),
    ])
    .await;
    assert_eq!(h.outcome.status, RunStatus::Failed);
    let err = h.outcome.error.clone().unwrap_or_default();
    assert!(err.contains("the URL returns 404"), "{err}");
    assert!(err.contains("Download the file"), "{err}");
    assert_eq!(h.outcome.plan.steps()[0].status(), StepStatus::Failed);
    assert_eq!(
        h.outcome.plan.steps()[0].error.as_deref(),
        Some("the URL returns 404")
    );
    assert_eq!(h.outcome.plan.steps()[1].status(), StepStatus::Skipped);
    assert_eq!(
        h.outcome.summary,
        "Failed: step 0 (\"Download the file\") failed: the URL returns 404. 0 of 2 steps \
         done.\n\ncould not finish"
    );
    let names = h.names();
    assert!(names.contains(&"step_failed"));
    assert!(names.contains(&"step_skipped"));
    assert_eq!(names.last(), Some(&"run_failed"));
    assert_gap_free(&h.events());
}

#[tokio::test]
async fn the_turn_limit_fails_the_step_and_resets_per_step() {
    let mut config = base_config();
    config.limits.max_turns = 2;
    // Step 1 uses both of its turns and finishes on the second; step 2 again gets two.
    let h = run_with(
        vec![
            create_plan(&["one", "two"]),
            calls(&[("shell_exec", json!({"command": "a"}))]),
            done("one done"),
            text("thinking..."),
            text("still thinking..."),
            text("summary"),
        ],
        config,
    )
    .await;
    assert_eq!(h.outcome.plan.steps()[0].status(), StepStatus::Completed);
    assert_eq!(h.outcome.plan.steps()[1].status(), StepStatus::Failed);
    assert!(h.outcome.plan.steps()[1]
        .error
        .clone()
        .unwrap_or_default()
        .contains("turn limit of 2"));
    assert_eq!(h.outcome.status, RunStatus::Failed);
    // The model was nudged to use tools after its text-only answer.
    let nudge = h.llm.requests()[4]
        .messages
        .last()
        .cloned()
        .expect("message");
    assert_eq!(nudge.role, Role::User);
    assert_eq!(nudge.content, Some(crate::prompts::nudge_use_tools()));
}

#[tokio::test]
async fn llm_errors_during_a_step_are_retried_then_block_the_step() {
    let config = RunConfig {
        retries: 1,
        ..base_config()
    };
    let h = run_with(
        vec![
            create_plan(&["one", "two"]),
            Err(LlmError::Transient("503".into())),
            Err(LlmError::Transient("503 again".into())),
            text("summary"),
        ],
        config,
    )
    .await;
    let step = &h.outcome.plan.steps()[0];
    assert_eq!(step.status(), StepStatus::Blocked);
    assert_eq!(step.attempts(), 2);
    assert_eq!(h.outcome.plan.steps()[1].status(), StepStatus::Skipped);
    assert_eq!(h.outcome.status, RunStatus::Failed);
    let retries: Vec<bool> = h
        .events()
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::StepFailed {
                will_retry, status, ..
            } => {
                assert_eq!(*status, StepStatus::Blocked);
                Some(*will_retry)
            }
            _ => None,
        })
        .collect();
    assert_eq!(retries, vec![true, false]);
}

#[tokio::test]
async fn unknown_tools_and_bad_arguments_are_answered_and_the_run_goes_on() {
    let h = run(vec![
        create_plan(&["do it"]),
        raw_calls(&[
            ("teleport", "{}".to_string()),
            ("shell_exec", "{\"command\": ".to_string()),
            ("shell_exec", "[1,2]".to_string()),
            ("boom", "{}".to_string()),
            ("panic", "{}".to_string()),
        ]),
        raw_calls(&[("complete_step", "{\"success\": \"yes\"}".to_string())]),
        done("finally"),
        text("summary"),
    ])
    .await;
    assert_eq!(h.outcome.status, RunStatus::Completed);
    let reqs = h.llm.requests();
    let tool_msgs: Vec<String> = reqs[2]
        .messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .filter_map(|m| m.content.clone())
        .collect();
    assert_eq!(tool_msgs.len(), 5);
    assert!(
        tool_msgs[0].contains("unknown tool 'teleport'"),
        "{tool_msgs:?}"
    );
    assert!(tool_msgs[1].contains("not valid JSON"));
    assert!(tool_msgs[2].contains("must be a JSON object"));
    assert!(tool_msgs[3].contains("kaboom"));
    assert!(
        tool_msgs[4].contains("the tool 'panic' crashed"),
        "{tool_msgs:?}"
    );
    let bad_complete = reqs[3].messages.last().and_then(|m| m.content.clone());
    assert!(bad_complete
        .unwrap_or_default()
        .contains("invalid arguments for complete_step"));
    let failed_calls = h
        .events()
        .iter()
        .filter(|e| matches!(e.kind, EventKind::ToolCalled { ok: false, .. }))
        .count();
    assert_eq!(failed_calls, 5);
    assert_valid_transcripts(&reqs);
}

#[tokio::test]
async fn context_too_long_trims_old_observations_and_retries_once() {
    let h = run(vec![
        create_plan(&["one"]),
        calls(&[("shell_exec", json!({"command": "a"}))]),
        calls(&[("shell_exec", json!({"command": "b"}))]),
        calls(&[("shell_exec", json!({"command": "c"}))]),
        Err(LlmError::ContextTooLong("too many tokens".into())),
        done("ok"),
        text("summary"),
    ])
    .await;
    assert_eq!(h.outcome.status, RunStatus::Completed);
    let retry = &h.llm.requests()[5];
    let tool_contents: Vec<String> = retry
        .messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .filter_map(|m| m.content.clone())
        .collect();
    assert_eq!(tool_contents.len(), 3);
    assert!(tool_contents[0].contains("trimmed"));
    assert!(tool_contents[2].contains("ran c"));
}

/// One answer with 20 tool calls runs at most `max_calls_per_reply` of them; the rest are
/// answered "not executed" so the model can ask again.
#[tokio::test]
async fn tool_calls_beyond_the_per_answer_cap_are_not_run() {
    let many: Vec<(&str, Value)> = (0..20)
        .map(|i| ("shell_exec", json!({"command": format!("echo {i}")})))
        .collect();
    let mut config = base_config();
    config.limits.max_calls_per_reply = 4;
    let h = run_with(
        vec![
            create_plan(&["a"]),
            calls(&many),
            done("did a"),
            text("summary"),
        ],
        config,
    )
    .await;
    assert_eq!(h.outcome.status, RunStatus::Completed);
    let ran = h
        .events()
        .iter()
        .filter(|e| matches!(e.kind, EventKind::ToolCalled { .. }))
        .count();
    assert_eq!(ran, 4);
    let next = &h.llm.requests()[2];
    let refused = next
        .messages
        .iter()
        .filter(|m| {
            m.content
                .as_deref()
                .is_some_and(|c| c.starts_with("Not executed: at most 4"))
        })
        .count();
    assert_eq!(refused, 16);
}

/// A step that runs past its wall-time limit fails with that reason at the next turn.
#[tokio::test(start_paused = true)]
async fn a_step_past_its_time_limit_fails() {
    let mut config = base_config();
    config.limits.max_step_time = Some(Duration::from_secs(30));
    let h = run_task(
        ScriptedLlm::new(vec![
            create_plan(&["a"]),
            calls(&[("shell_exec", json!({"command": "slow"}))]),
            done("never accepted"),
            text("summary"),
        ]),
        EchoToolbox::new().delay(Duration::from_secs(60)),
        config,
        "make a file",
        CancellationToken::new(),
    )
    .await;
    assert_eq!(h.outcome.status, RunStatus::Failed);
    let failed = h
        .events()
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::StepFailed { error, .. } => Some(error.clone()),
            _ => None,
        })
        .expect("step_failed");
    assert_eq!(failed, "the step's time limit of 30 s was reached");
}
