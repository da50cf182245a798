//! How a run ends: its summary, cancellation, suspension, a lost lease.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{run, Script};
use crate::model::event::EventKind;
use crate::model::plan::StepStatus;
use crate::ports::llm::LlmError;
use crate::ports::RunStatus;
use crate::testing::replies::{acted, calls, create_plan, done, text};
use crate::testing::runs::{request, runtime, RUN_ID};
use crate::testing::{EchoToolbox, MemoryStore, ScriptedLlm};
use crate::tests::support::{assert_gap_free, base_config, run_task};
use crate::RunControl;
use crate::{RunRequest, Runtime};

#[tokio::test]
async fn summary_falls_back_to_the_primary_agent_then_to_a_plain_report() {
    let h = run(vec![
        create_plan(&["one"]),
        done("did one"),
        Err(LlmError::Permanent("summary model missing".into())),
        text("primary agent summary"),
    ])
    .await;
    assert!(
        h.outcome
            .summary
            .contains("\n\nprimary agent summary\n\nNot verified"),
        "{}",
        h.outcome.summary
    );

    let h = run(vec![
        create_plan(&["one"]),
        done("did one"),
        Err(LlmError::Permanent("nope".into())),
        Err(LlmError::Permanent("still nope".into())),
    ])
    .await;
    assert_eq!(h.outcome.status, RunStatus::Completed);
    assert!(h.outcome.summary.contains("No LLM summary"));
    assert!(h.outcome.summary.contains("did one"));
}

#[tokio::test]
async fn cancellation_ends_the_step_skips_the_rest_and_still_summarizes() {
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    let h = run_task(
        ScriptedLlm::new(vec![
            create_plan(&["one", "two"]),
            calls(&[("shell_exec", json!({"command": "long"}))]),
        ]),
        EchoToolbox::new().on_call(move || c.cancel()),
        base_config(),
        "t",
        cancel,
    )
    .await;
    let outcome = &h.outcome;
    assert_eq!(outcome.status, RunStatus::Failed);
    assert_eq!(outcome.error.as_deref(), Some("the run was cancelled"));
    assert_eq!(outcome.plan.steps()[0].status(), StepStatus::Failed);
    assert_eq!(outcome.plan.steps()[1].status(), StepStatus::Skipped);
    assert!(outcome.summary.contains("cancelled"));
    assert_eq!(h.llm.requests().len(), 2, "no LLM call after cancel");
    let events = h.events();
    assert!(matches!(
        events.last().map(|e| &e.kind),
        Some(EventKind::RunFailed { .. })
    ));
}

/// A run is spawnable on a multi-threaded runtime (the server runs many at once).
#[allow(dead_code)]
fn runs_and_resumes_are_send(rt: &'static Runtime, request: RunRequest) {
    fn assert_send<T: Send>(_: &T) {}
    let run = rt.run(request, CancellationToken::new());
    assert_send(&run);
    let resume = rt.resume("r", CancellationToken::new());
    assert_send(&resume);
}

/// A runtime running [`two_step_script`] over `toolbox` and `store`.
fn two_step_runtime(toolbox: EchoToolbox, store: Arc<MemoryStore>) -> Runtime {
    runtime(
        Arc::new(ScriptedLlm::new(two_step_script())),
        Arc::new(toolbox),
        store,
        base_config(),
    )
}

fn two_step_script() -> Script {
    vec![
        create_plan(&["a", "b"]),
        acted("did a"),
        acted("did b"),
        text("summary"),
    ]
}

/// Suspension stops at a safe point: the tool call under way finishes and is journaled,
/// nothing new starts, no outcome is written, and the lease is given up.
#[tokio::test]
async fn a_suspended_run_finishes_its_call_writes_no_outcome_and_releases_its_lease() {
    let store = Arc::new(MemoryStore::new());
    let suspend = CancellationToken::new();
    let on_call = suspend.clone();
    let rt = two_step_runtime(
        EchoToolbox::new().on_call(move || on_call.cancel()),
        store.clone(),
    );
    let err = rt
        .run_with(
            request("make a file"),
            RunControl {
                cancel: CancellationToken::new(),
                suspend,
            },
        )
        .await
        .expect_err("a suspended run has no outcome");
    assert!(matches!(err, crate::Error::Suspended), "{err:?}");
    let events = store.events_of(RUN_ID);
    assert_gap_free(&events);
    let names: Vec<&str> = events.iter().map(|e| e.kind.name()).collect();
    assert!(
        names.contains(&"tool_called"),
        "the call under way finished: {names:?}"
    );
    assert!(
        !names
            .iter()
            .any(|n| *n == "run_completed" || *n == "run_failed"),
        "{names:?}"
    );
    assert_eq!(
        names.iter().filter(|n| **n == "step_started").count(),
        1,
        "step b never started: {names:?}"
    );
    let last = store.run(RUN_ID).expect("run");
    assert_eq!(last.lease, None, "the lease was given up");
    assert_eq!(last.status, RunStatus::Running, "its status is kept");
}

/// A run whose lease was taken over (its renewal says so) stops and reports it; it does not
/// release the new owner's lease.
#[tokio::test(start_paused = true)]
async fn a_run_that_lost_its_lease_stops_without_an_outcome() {
    let store = Arc::new(MemoryStore::new());
    // Another process takes the lease over while the tool call runs; the call waits long
    // enough (paused time) for a renewal to find the lease gone.
    let thief = store.clone();
    let toolbox = EchoToolbox::new()
        .delay(Duration::from_secs(60))
        .on_call(move || thief.take_over_lease(RUN_ID, OTHER_OWNER, far_future()));
    let rt = two_step_runtime(toolbox, store.clone());
    let err = rt
        .run(request("make a file"), CancellationToken::new())
        .await
        .expect_err("no outcome");
    assert!(matches!(err, crate::Error::LeaseLost), "{err:?}");
    let names: Vec<&str> = store
        .events_of(RUN_ID)
        .iter()
        .map(|e| e.kind.name())
        .collect();
    assert!(
        !names
            .iter()
            .any(|n| *n == "run_completed" || *n == "run_failed"),
        "{names:?}"
    );
    assert_eq!(
        store.run(RUN_ID).and_then(|r| r.lease).map(|l| l.owner),
        Some(OTHER_OWNER.to_string()),
        "the new owner's lease is left alone"
    );
}

const OTHER_OWNER: &str = "another process";

fn far_future() -> chrono::DateTime<chrono::Utc> {
    chrono::Utc::now() + chrono::Duration::days(1)
}
