//! What the run writes to its store: a failing store ends it, usage is saved after every
//! LLM call, a resumed run tallies what its journal logged.

use std::sync::Arc;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{run, Script};
use crate::ports::llm::CallPurpose;
use crate::ports::{RunStatus, RunStore};
use crate::testing::replies::{calls, create_plan, done, text};
use crate::testing::runs::{request, run_record, runtime, RUN_ID};
use crate::testing::{EchoToolbox, MemoryStore, ScriptedLlm, StoreOp};
use crate::tests::support::base_config;
use crate::{Error, Event, EventKind, RunUsage, StoreError};

/// Runs task "t" on `script` over a store whose every `op` fails with `error`; the run's
/// error.
async fn run_failing(op: StoreOp, error: StoreError, script: Script) -> Error {
    let store = Arc::new(MemoryStore::new());
    store.fail(op, error);
    let rt = runtime(
        Arc::new(ScriptedLlm::new(script)),
        Arc::new(EchoToolbox::new()),
        store,
        base_config(),
    );
    rt.run(request("t"), CancellationToken::new())
        .await
        .expect_err("store failure is a run error")
}

#[tokio::test]
async fn a_store_failure_ends_the_run_with_an_error() {
    let err = run_failing(
        StoreOp::AppendEvent,
        StoreError::Unavailable("disk full".into()),
        vec![],
    )
    .await;
    assert!(err.to_string().contains("disk full"));
}

/// `script` with every reply reporting `cached` of its prompt tokens as served from a cache.
fn with_cached(script: Script, cached: u64) -> Script {
    script
        .into_iter()
        .map(|r| {
            r.map(|mut reply| {
                reply.usage.cached_prompt_tokens = cached;
                reply
            })
        })
        .collect()
}

#[tokio::test]
async fn usage_with_cached_tokens_is_saved_after_every_llm_call() {
    let h = run(with_cached(
        vec![
            create_plan(&["Write hello.txt"]),
            calls(&[("shell_exec", json!({"command": "echo hi > hello.txt"}))]),
            done("wrote hello.txt"),
            text("Done."),
        ],
        4,
    ))
    .await;
    assert_eq!(h.outcome.status, RunStatus::Completed);
    assert_eq!(
        h.outcome.usage,
        RunUsage {
            llm_calls: 4,
            prompt_tokens: 40,
            completion_tokens: 20,
            cached_prompt_tokens: 16,
        }
    );
    // One save per call, each right after its llm_called event, the tally growing.
    let usages = h.store.usage_saves(RUN_ID);
    let calls: Vec<u64> = usages.iter().map(|u| u.llm_calls).collect();
    assert_eq!(calls, vec![1, 2, 3, 4]);
    assert_eq!(usages.last(), Some(&h.outcome.usage));
    let cached: Vec<u64> = h
        .events()
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::LlmCalled {
                cached_prompt_tokens,
                ..
            } => Some(*cached_prompt_tokens),
            _ => None,
        })
        .collect();
    assert_eq!(cached, vec![4, 4, 4, 4]);
    let run = h.store.run(RUN_ID);
    assert_eq!(run.map(|r| r.usage), Some(h.outcome.usage));
}

#[tokio::test]
async fn a_failure_to_save_usage_ends_the_run_with_an_error() {
    let err = run_failing(
        StoreOp::SaveUsage,
        StoreError::Unavailable("database is locked".into()),
        vec![create_plan(&["a"])],
    )
    .await;
    assert!(err.to_string().contains("database is locked"), "{err}");
}

#[tokio::test]
async fn resume_tallies_the_logged_calls_with_their_cached_tokens() {
    let llm = ScriptedLlm::new(vec![create_plan(&["a"]), done("did a"), text("Done.")]);
    let store = Arc::new(MemoryStore::new());
    let at = chrono::Utc::now();
    let logged = |seq: u64, kind: EventKind| Event {
        run_id: "run_1".into(),
        seq,
        at,
        kind,
    };
    // A run killed after one call; its llm_called event from before cached tokens were
    // recorded has no such field and reads as 0.
    let old_call: EventKind = serde_json::from_value(json!({
        "type": "llm_called", "purpose": "plan", "ok": false,
        "prompt_tokens": 7, "completion_tokens": 1, "duration_ms": 3
    }))
    .expect("an old llm_called event reads");
    let events = [
        logged(
            1,
            EventKind::RunStarted {
                task: "make a file".into(),
                mode: "flow".into(),
                workspace: "/tmp/ws".into(),
            },
        ),
        logged(
            2,
            EventKind::LlmCalled {
                purpose: CallPurpose::Plan,
                step_id: None,
                ok: false,
                prompt_tokens: 100,
                completion_tokens: 10,
                cached_prompt_tokens: 80,
                duration_ms: 5,
                key: None,
                request_hash: None,
                response: None,
            },
        ),
        logged(3, old_call),
    ];
    let mut record = run_record(RUN_ID);
    record.created_at = at;
    store.create_run(&record).await.expect("create run");
    for event in &events {
        store.append_event(event).await.expect("append event");
    }
    let rt = runtime(
        Arc::new(llm),
        Arc::new(EchoToolbox::new()),
        store.clone(),
        base_config(),
    );
    let outcome = rt
        .resume("run_1", CancellationToken::new())
        .await
        .expect("the run resumes");
    assert_eq!(outcome.status, RunStatus::Completed);
    // Two logged calls, three new ones (10 prompt, 5 completion, none cached each).
    assert_eq!(
        outcome.usage,
        RunUsage {
            llm_calls: 5,
            prompt_tokens: 137,
            completion_tokens: 26,
            cached_prompt_tokens: 80,
        }
    );
    let first_save = store.usage_saves(RUN_ID).first().copied();
    assert_eq!(
        first_save,
        Some(RunUsage {
            llm_calls: 3,
            prompt_tokens: 117,
            completion_tokens: 16,
            cached_prompt_tokens: 80,
        })
    );
}
