//! Behaviour of a whole run with every port mocked (mockall): the scripted LLM answers in
//! order, the store records what it is given, the toolbox answers by tool name.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::engine::config::RunConfig;
use crate::engine::executor::agent::ExecutorAgent;
use crate::engine::runtime::{RunOutcome, RunRequest, Runtime};
use crate::error::{LlmError, ToolError};
use crate::model::event::{Event, EventKind, PlanSource, RunUsage};
use crate::model::plan::{Plan, StepStatus};
use crate::ports::llm::{
    CallPurpose, ChatRequest, ChatResponse, Role, ToolCall, ToolSchema, Usage,
};
use crate::ports::{
    MockLlmClient, MockRunStore, MockToolbox, NoEventSink, RunRecord, RunStatus, SequentialIds,
    SystemClock, ToolOutput, Toolbox,
};

type Script = Vec<Result<ChatResponse, LlmError>>;

/// Requests the scripted LLM received.
type Seen = Arc<Mutex<Vec<ChatRequest>>>;

fn scripted(script: Script) -> (MockLlmClient, Seen) {
    let seen: Seen = Arc::default();
    let queue = Arc::new(Mutex::new(VecDeque::from(script)));
    let mut llm = MockLlmClient::new();
    let seen2 = seen.clone();
    llm.expect_chat().returning(move |req| {
        seen2.lock().expect("lock").push(req);
        queue
            .lock()
            .expect("lock")
            .pop_front()
            .unwrap_or_else(|| Err(LlmError::Permanent("script exhausted".into())))
    });
    (llm, seen)
}

fn text(s: &str) -> Result<ChatResponse, LlmError> {
    Ok(ChatResponse {
        content: Some(s.to_string()),
        usage: Usage {
            prompt_tokens: 10,
            completion_tokens: 5,
            cached_prompt_tokens: 0,
        },
        ..ChatResponse::default()
    })
}

fn calls(list: &[(&str, Value)]) -> Result<ChatResponse, LlmError> {
    raw_calls(
        &list
            .iter()
            .map(|(n, a)| (*n, a.to_string()))
            .collect::<Vec<_>>(),
    )
}

fn raw_calls(list: &[(&str, String)]) -> Result<ChatResponse, LlmError> {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
    Ok(ChatResponse {
        tool_calls: list
            .iter()
            .map(|(name, args)| ToolCall {
                id: format!(
                    "call_{}",
                    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                ),
                name: name.to_string(),
                arguments: args.clone(),
            })
            .collect(),
        usage: Usage {
            prompt_tokens: 10,
            completion_tokens: 5,
            cached_prompt_tokens: 0,
        },
        ..ChatResponse::default()
    })
}

fn create_plan(steps: &[&str]) -> Result<ChatResponse, LlmError> {
    calls(&[(
        "planning",
        json!({"command": "create", "title": "Test plan", "steps": steps}),
    )])
}

fn done(result: &str) -> Result<ChatResponse, LlmError> {
    calls(&[("complete_step", json!({"success": true, "result": result}))])
}

/// A shell call and `complete_step` in one turn: a step that acts, then claims success.
fn acted(result: &str) -> Result<ChatResponse, LlmError> {
    calls(&[
        ("shell_exec", json!({"command": "true"})),
        ("complete_step", json!({"success": true, "result": result})),
    ])
}

fn fail(result: &str) -> Result<ChatResponse, LlmError> {
    calls(&[("complete_step", json!({"success": false, "result": result}))])
}

#[derive(Default)]
struct Recorded {
    events: Mutex<Vec<Event>>,
    plans: Mutex<Vec<Plan>>,
    runs: Mutex<Vec<RunRecord>>,
    /// Every usage the run saved as it went, in order.
    usages: Mutex<Vec<RunUsage>>,
    /// Owners that released the run's lease.
    released: Mutex<Vec<String>>,
}

fn recording_store() -> (MockRunStore, Arc<Recorded>) {
    recording_store_renewing(true)
}

/// A recording store whose lease renewals say the lease was taken over.
fn recording_store_where_renewals_fail() -> (MockRunStore, Arc<Recorded>) {
    recording_store_renewing(false)
}

fn recording_store_renewing(renewed: bool) -> (MockRunStore, Arc<Recorded>) {
    let rec = Arc::new(Recorded::default());
    let mut store = MockRunStore::new();
    let r = rec.clone();
    store.expect_append_event().returning(move |e| {
        r.events.lock().expect("lock").push(e.clone());
        Ok(())
    });
    let r = rec.clone();
    store.expect_save_plan().returning(move |_, p| {
        r.plans.lock().expect("lock").push(p.clone());
        Ok(())
    });
    store.expect_set_run_status().returning(|_, _| Ok(()));
    store
        .expect_renew_lease()
        .returning(move |_, _, _| Ok(renewed));
    let r = rec.clone();
    store.expect_release_lease().returning(move |_, owner| {
        r.released.lock().expect("lock").push(owner.to_string());
        Ok(())
    });
    store
        .expect_acquire_lease()
        .returning(|_, _| Ok(crate::ports::LeaseOutcome::Acquired));
    let r = rec.clone();
    store.expect_save_usage().returning(move |_, u| {
        r.usages.lock().expect("lock").push(*u);
        Ok(())
    });
    let r = rec.clone();
    store.expect_create_run().returning(move |run| {
        r.runs.lock().expect("lock").push(run.clone());
        Ok(())
    });
    let r = rec.clone();
    store.expect_update_run().returning(move |run| {
        r.runs.lock().expect("lock").push(run.clone());
        Ok(())
    });
    (store, rec)
}

/// A toolbox with `shell_exec` (echoes its command) and `boom` (always errors).
fn toolbox() -> MockToolbox {
    let mut tb = MockToolbox::new();
    tb.expect_close_run().returning(|_| ());
    tb.expect_schemas().returning(|| {
        vec![ToolSchema {
            name: "shell_exec".into(),
            description: "run".into(),
            parameters: json!({"type": "object"}),
        }]
    });
    tb.expect_call().returning(|name, args, _ctx| match name {
        "shell_exec" => Ok(ToolOutput::ok(format!(
            "exit code: 0\nstdout: ran {}",
            args["command"].as_str().unwrap_or("?")
        ))),
        "boom" => Err(ToolError::Failed("kaboom".into())),
        "panic" => panic!("tool bug"),
        other => Err(ToolError::Refused(format!("unknown tool '{other}'"))),
    });
    tb
}

struct Harness {
    outcome: RunOutcome,
    rec: Arc<Recorded>,
    seen: Seen,
}

impl Harness {
    fn events(&self) -> Vec<Event> {
        self.rec.events.lock().expect("lock").clone()
    }
    fn names(&self) -> Vec<&'static str> {
        self.events().iter().map(|e| e.kind.name()).collect()
    }
    fn requests(&self) -> Vec<ChatRequest> {
        self.seen.lock().expect("lock").clone()
    }
}

fn agent(name: &str, kinds: &[&str], llm: MockLlmClient) -> ExecutorAgent {
    ExecutorAgent {
        name: name.into(),
        description: format!("The {name} agent."),
        kinds: kinds.iter().map(|k| k.to_string()).collect(),
        llm: Arc::new(llm),
        toolbox: Arc::new(toolbox()),
    }
}

/// A runtime with one general agent over `toolbox`; the planner and the executor share `llm`.
fn runtime_over(
    llm: MockLlmClient,
    store: MockRunStore,
    toolbox: Arc<dyn Toolbox>,
    config: RunConfig,
) -> Runtime {
    let llm = Arc::new(llm);
    Runtime {
        planner_llm: llm.clone(),
        executors: vec![ExecutorAgent {
            name: "general".into(),
            description: "A general-purpose agent.".into(),
            kinds: vec![],
            llm,
            toolbox,
        }],
        store: Arc::new(store),
        sink: Arc::new(NoEventSink),
        clock: Arc::new(SystemClock),
        user: Arc::new(crate::ports::NoUser),
        ids: Arc::new(SequentialIds::default()),
        config,
    }
}

async fn run_with(script: Script, config: RunConfig) -> Harness {
    let (llm, seen) = scripted(script);
    let (store, rec) = recording_store();
    let rt = runtime_over(llm, store, Arc::new(toolbox()), config);
    let outcome = rt
        .run(
            RunRequest {
                run_id: "run_1".into(),
                task: "make a file".into(),
                workspace: PathBuf::from("/tmp/ws"),
            },
            CancellationToken::new(),
        )
        .await
        .expect("run ends with an outcome");
    Harness { outcome, rec, seen }
}

/// The spine's behaviour: no retries, no re-plans, no waiting.
fn base_config() -> RunConfig {
    RunConfig {
        retries: 0,
        retry_delay: std::time::Duration::ZERO,
        max_revisions: 0,
        ..RunConfig::default()
    }
}

async fn run(script: Script) -> Harness {
    run_with(script, base_config()).await
}

fn assert_gap_free(events: &[Event]) {
    for (i, e) in events.iter().enumerate() {
        assert_eq!(
            e.seq,
            i as u64 + 1,
            "event {i} ({}) has seq {}",
            e.kind.name(),
            e.seq
        );
        assert_eq!(e.run_id, "run_1");
    }
}

/// Every assistant tool call in every request is answered by a tool message right after it.
fn assert_valid_transcripts(requests: &[ChatRequest]) {
    for req in requests {
        let msgs = &req.messages;
        for (i, m) in msgs.iter().enumerate() {
            if m.role == Role::Assistant && !m.tool_calls.is_empty() {
                let answers: Vec<_> = msgs[i + 1..]
                    .iter()
                    .take_while(|n| n.role == Role::Tool)
                    .filter_map(|n| n.tool_call_id.clone())
                    .collect();
                for call in &m.tool_calls {
                    assert!(
                        answers.contains(&call.id),
                        "tool call {} unanswered",
                        call.id
                    );
                }
            }
            if m.role == Role::Tool {
                assert!(i > 0, "a tool message cannot come first");
            }
        }
    }
}

#[tokio::test]
async fn happy_path_plans_executes_every_step_and_summarizes() {
    let h = run(vec![
        create_plan(&["Write hello.txt", "Check hello.txt"]),
        calls(&[("shell_exec", json!({"command": "echo hi > hello.txt"}))]),
        done("wrote hello.txt"),
        calls(&[("shell_exec", json!({"command": "cat hello.txt"}))]),
        done("it says hi"),
        text("All done: hello.txt says hi."),
    ])
    .await;
    assert_eq!(h.outcome.status, RunStatus::Completed);
    assert_eq!(h.outcome.error, None);
    assert_eq!(
        h.outcome.summary,
        "Completed: 2 of 2 steps done.\n\nAll done: hello.txt says hi."
    );
    let steps = &h.outcome.plan.steps();
    assert_eq!(steps.len(), 2);
    assert!(steps.iter().all(|s| s.status() == StepStatus::Completed));
    assert_eq!(steps[0].result.as_deref(), Some("wrote hello.txt"));
    assert_eq!(steps[1].result.as_deref(), Some("it says hi"));
    assert_eq!(h.outcome.usage.llm_calls, 6);
    assert_eq!(h.outcome.usage.prompt_tokens, 60);
    assert_eq!(h.outcome.usage.completion_tokens, 30);
    let names: Vec<_> = h
        .names()
        .into_iter()
        .filter(|n| *n != "llm_called")
        .collect();
    assert_eq!(
        names,
        vec![
            "run_started",
            "plan_created",
            "step_started",
            "tool_calling",
            "tool_called",
            "step_completed",
            "step_started",
            "tool_calling",
            "tool_called",
            "step_completed",
            "run_completed"
        ]
    );
    assert_gap_free(&h.events());
    assert_valid_transcripts(&h.requests());
    // Step 2's prompt carries step 1's result; the summary sees both results.
    let reqs = h.requests();
    let step2_prompt = reqs[3].messages[1].content.clone().unwrap_or_default();
    assert!(step2_prompt.contains("wrote hello.txt"), "{step2_prompt}");
    let summary_prompt = reqs[5].messages[1].content.clone().unwrap_or_default();
    assert_eq!(reqs[5].purpose, CallPurpose::Summarize);
    assert!(summary_prompt.contains("it says hi"));
    assert!(
        summary_prompt.contains("[completed] Write hello.txt (1 tool call)"),
        "{summary_prompt}"
    );
    assert!(summary_prompt.contains("OUTCOME: The run COMPLETED"));
    // The run record ends completed with the usage.
    let runs = h.rec.runs.lock().expect("lock").clone();
    let last = runs.last().expect("run record");
    assert_eq!(last.status, RunStatus::Completed);
    assert_eq!(last.usage, h.outcome.usage);
}

#[tokio::test]
async fn planner_garbage_gives_the_default_plan() {
    let h = run(vec![
        text("Sure! Here is my plan: 1. do it"),
        raw_calls(&[("planning", "{not json".to_string())]),
        done("analysed"),
        acted("executed"),
        acted("verified"),
        text("summary"),
    ])
    .await;
    let descriptions: Vec<_> = h
        .outcome
        .plan
        .steps()
        .iter()
        .map(|s| s.description.as_str())
        .collect();
    assert_eq!(
        descriptions,
        ["Analyze request", "Execute task", "Verify results"]
    );
    assert_eq!(h.outcome.status, RunStatus::Completed);
    let created = h
        .events()
        .into_iter()
        .find_map(|e| match e.kind {
            EventKind::PlanCreated { source, reason, .. } => Some((source, reason)),
            _ => None,
        })
        .expect("plan_created event");
    assert_eq!(created.0, PlanSource::Default);
    assert!(created.1.unwrap_or_default().contains("not valid JSON"));
    // The planner saw the error of its first answer before its second try.
    let second = &h.requests()[1];
    assert!(second
        .messages
        .last()
        .and_then(|m| m.content.clone())
        .unwrap_or_default()
        .contains("without calling the `planning` tool"));
    assert_valid_transcripts(&h.requests());
}

#[tokio::test]
async fn planner_llm_failure_gives_the_default_plan() {
    let h = run(vec![
        Err(LlmError::Transient("server down".into())),
        done("a"),
        acted("b"),
        acted("c"),
        text("summary"),
    ])
    .await;
    assert_eq!(h.outcome.plan.steps().len(), 3);
    assert_eq!(h.outcome.status, RunStatus::Completed);
    assert!(h.events().iter().any(|e| matches!(
        &e.kind,
        EventKind::Error { message, .. } if message.contains("server down")
    )));
}

#[tokio::test]
async fn an_invalid_planning_call_is_corrected_on_the_second_turn() {
    let h = run(vec![
        calls(&[(
            "planning",
            json!({"command": "create", "title": "T", "steps": []}),
        )]),
        create_plan(&["only step"]),
        done("ok"),
        text("summary"),
    ])
    .await;
    assert_eq!(h.outcome.plan.steps().len(), 1);
    assert_eq!(h.outcome.plan.steps()[0].description, "only step");
    let second = &h.requests()[1];
    let tool_msg = second
        .messages
        .iter()
        .find(|m| m.role == Role::Tool)
        .and_then(|m| m.content.clone())
        .unwrap_or_default();
    assert!(tool_msg.contains("must not be empty"), "{tool_msg}");
}

#[tokio::test]
async fn success_claimed_without_any_tool_call_is_refused_then_fails_the_step() {
    let h = run(vec![
        create_plan(&["Write hello.txt", "Report the result"]),
        done("wrote hello.txt"),
        done("wrote hello.txt, really"),
        text("The task was completed successfully."),
    ])
    .await;
    assert_eq!(h.outcome.status, RunStatus::Failed);
    let step = &h.outcome.plan.steps()[0];
    assert_eq!(step.status(), StepStatus::Failed);
    assert_eq!(
        step.error.as_deref(),
        Some("claimed success without calling any tool")
    );
    // The first claim was answered "Not accepted", not "Step finished".
    let reqs = h.requests();
    let answer = reqs[2]
        .messages
        .iter()
        .rfind(|m| m.role == Role::Tool)
        .and_then(|m| m.content.clone())
        .unwrap_or_default();
    assert!(answer.starts_with("Not accepted"), "{answer}");
    // The summary cannot contradict the status: the runtime's line comes first, and the
    // summary prompt said the run failed.
    assert!(
        h.outcome.summary.starts_with(
            "Failed: step 0 (\"Write hello.txt\") failed: claimed success without calling any \
             tool. 0 of 2 steps done.\n\n"
        ),
        "{}",
        h.outcome.summary
    );
    let summary_prompt = reqs[3].messages[1].content.clone().unwrap_or_default();
    assert!(
        summary_prompt.contains("OUTCOME: The run FAILED: step 0"),
        "{summary_prompt}"
    );
    assert!(summary_prompt.contains("Write hello.txt (0 tool calls)"));
    assert!(h.names().contains(&"nudge"));
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
    let nudge = h.requests()[4].messages.last().cloned().expect("message");
    assert_eq!(nudge.role, Role::User);
    assert!(nudge
        .content
        .unwrap_or_default()
        .contains("did not call any tool"));
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
    let reqs = h.requests();
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
    let retry = &h.requests()[5];
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
        h.outcome.summary.ends_with("\n\nprimary agent summary"),
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
async fn steps_are_routed_by_kind_tag() {
    let (planner, _) = scripted(vec![
        create_plan(&["[CODE] write code", "[SEARCH] look it up", "untagged"]),
        text("summary"),
    ]);
    let (code_llm, code_seen) = scripted(vec![acted("coded")]);
    let (search_llm, search_seen) = scripted(vec![acted("found"), done("untagged done")]);
    let (store, _rec) = recording_store();
    let rt = Runtime {
        planner_llm: Arc::new(planner),
        executors: vec![
            agent("searcher", &["SEARCH"], search_llm),
            agent("coder", &["CODE"], code_llm),
        ],
        store: Arc::new(store),
        sink: Arc::new(NoEventSink),
        clock: Arc::new(SystemClock),
        user: Arc::new(crate::ports::NoUser),
        ids: Arc::new(SequentialIds::default()),
        config: base_config(),
    };
    let outcome = rt
        .run(
            RunRequest {
                run_id: "run_1".into(),
                task: "t".into(),
                workspace: PathBuf::from("/tmp"),
            },
            CancellationToken::new(),
        )
        .await
        .expect("outcome");
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(code_seen.lock().expect("lock").len(), 1);
    // SEARCH goes to the searcher; the untagged step to the first executor (also the searcher).
    assert_eq!(search_seen.lock().expect("lock").len(), 2);
    assert_eq!(outcome.plan.steps()[0].result.as_deref(), Some("coded"));
}

#[tokio::test]
async fn cancellation_ends_the_step_skips_the_rest_and_still_summarizes() {
    let cancel = CancellationToken::new();
    let (llm, seen) = scripted(vec![
        create_plan(&["one", "two"]),
        calls(&[("shell_exec", json!({"command": "long"}))]),
    ]);
    let llm = Arc::new(llm);
    let (store, rec) = recording_store();
    let mut tb = MockToolbox::new();
    tb.expect_close_run().returning(|_| ());
    tb.expect_schemas().returning(Vec::new);
    let c = cancel.clone();
    tb.expect_call().returning(move |_, _, _| {
        c.cancel();
        Ok(ToolOutput::ok("interrupted"))
    });
    let rt = Runtime {
        planner_llm: llm.clone(),
        executors: vec![ExecutorAgent {
            name: "general".into(),
            description: "d".into(),
            kinds: vec![],
            llm,
            toolbox: Arc::new(tb),
        }],
        store: Arc::new(store),
        sink: Arc::new(NoEventSink),
        clock: Arc::new(SystemClock),
        user: Arc::new(crate::ports::NoUser),
        ids: Arc::new(SequentialIds::default()),
        config: base_config(),
    };
    let outcome = rt
        .run(
            RunRequest {
                run_id: "run_1".into(),
                task: "t".into(),
                workspace: PathBuf::from("/tmp"),
            },
            cancel,
        )
        .await
        .expect("outcome");
    assert_eq!(outcome.status, RunStatus::Failed);
    assert_eq!(outcome.error.as_deref(), Some("the run was cancelled"));
    assert_eq!(outcome.plan.steps()[0].status(), StepStatus::Failed);
    assert_eq!(outcome.plan.steps()[1].status(), StepStatus::Skipped);
    assert!(outcome.summary.contains("cancelled"));
    assert_eq!(
        seen.lock().expect("lock").len(),
        2,
        "no LLM call after cancel"
    );
    let events = rec.events.lock().expect("lock").clone();
    assert!(matches!(
        events.last().map(|e| &e.kind),
        Some(EventKind::RunFailed { .. })
    ));
}

#[tokio::test]
async fn a_store_failure_ends_the_run_with_an_error() {
    let (llm, _) = scripted(vec![]);
    let mut store = MockRunStore::new();
    store.expect_create_run().returning(|_| Ok(()));
    store.expect_set_run_status().returning(|_, _| Ok(()));
    store.expect_renew_lease().returning(|_, _, _| Ok(true));
    store.expect_release_lease().returning(|_, _| Ok(()));
    store
        .expect_append_event()
        .returning(|_| Err(crate::error::StoreError::Unavailable("disk full".into())));
    let rt = Runtime {
        planner_llm: Arc::new(llm),
        executors: vec![agent("general", &[], scripted(vec![]).0)],
        store: Arc::new(store),
        sink: Arc::new(NoEventSink),
        clock: Arc::new(SystemClock),
        user: Arc::new(crate::ports::NoUser),
        ids: Arc::new(SequentialIds::default()),
        config: base_config(),
    };
    let err = rt
        .run(
            RunRequest {
                run_id: "r".into(),
                task: "t".into(),
                workspace: PathBuf::from("/tmp"),
            },
            CancellationToken::new(),
        )
        .await
        .expect_err("store failure is a run error");
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
    let usages = h.rec.usages.lock().expect("lock").clone();
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
    let runs = h.rec.runs.lock().expect("lock").clone();
    assert_eq!(runs.last().map(|r| r.usage), Some(h.outcome.usage));
}

#[tokio::test]
async fn a_failure_to_save_usage_ends_the_run_with_an_error() {
    let (llm, _) = scripted(vec![create_plan(&["a"])]);
    let mut store = MockRunStore::new();
    store.expect_create_run().returning(|_| Ok(()));
    store.expect_set_run_status().returning(|_, _| Ok(()));
    store.expect_renew_lease().returning(|_, _, _| Ok(true));
    store.expect_release_lease().returning(|_, _| Ok(()));
    store.expect_append_event().returning(|_| Ok(()));
    store.expect_save_plan().returning(|_, _| Ok(()));
    store.expect_save_usage().returning(|_, _| {
        Err(crate::error::StoreError::Unavailable(
            "database is locked".into(),
        ))
    });
    let rt = Runtime {
        planner_llm: Arc::new(llm),
        executors: vec![agent("general", &[], scripted(vec![]).0)],
        store: Arc::new(store),
        sink: Arc::new(NoEventSink),
        clock: Arc::new(SystemClock),
        user: Arc::new(crate::ports::NoUser),
        ids: Arc::new(SequentialIds::default()),
        config: base_config(),
    };
    let err = rt
        .run(
            RunRequest {
                run_id: "r".into(),
                task: "t".into(),
                workspace: PathBuf::from("/tmp"),
            },
            CancellationToken::new(),
        )
        .await
        .expect_err("store failure is a run error");
    assert!(err.to_string().contains("database is locked"), "{err}");
}

#[tokio::test]
async fn resume_tallies_the_logged_calls_with_their_cached_tokens() {
    let (llm, _) = scripted(vec![create_plan(&["a"]), done("did a"), text("Done.")]);
    let (mut store, rec) = recording_store();
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
    store
        .expect_events()
        .returning(move |_, after| Ok(events.iter().filter(|e| e.seq > after).cloned().collect()));
    store.expect_get_run().returning(move |id| {
        Ok(Some(RunRecord {
            run_id: id.to_string(),
            task: "make a file".into(),
            mode: "flow".into(),
            status: RunStatus::Running,
            workspace: "/tmp/ws".into(),
            created_at: at,
            finished_at: None,
            summary: None,
            error: None,
            usage: RunUsage::default(),
            lease: None,
            queue_request: None,
        }))
    });
    store.expect_latest_plan().returning(|_| Ok(None));
    let rt = runtime_over(llm, store, Arc::new(toolbox()), base_config());
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
    let first_save = rec.usages.lock().expect("lock").first().copied();
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

/// A run is spawnable on a multi-threaded runtime (the server runs many at once).
#[allow(dead_code)]
fn runs_and_resumes_are_send(rt: &'static Runtime, request: RunRequest) {
    fn assert_send<T: Send>(_: &T) {}
    let run = rt.run(request, CancellationToken::new());
    assert_send(&run);
    let resume = rt.resume("r", CancellationToken::new());
    assert_send(&resume);
}

/// A runtime whose toolbox fires `on_call` when `shell_exec` runs (to stop the run from
/// inside a tool call, deterministically), over a recording store.
fn stopping_runtime(
    script: Script,
    store: MockRunStore,
    on_call: CancellationToken,
    config: RunConfig,
) -> Runtime {
    let (llm, _) = scripted(script);
    let mut tb = MockToolbox::new();
    tb.expect_close_run().returning(|_| ());
    tb.expect_schemas().returning(|| {
        vec![ToolSchema {
            name: "shell_exec".into(),
            description: "run".into(),
            parameters: json!({"type": "object"}),
        }]
    });
    tb.expect_call().returning(move |_, _, _| {
        on_call.cancel();
        Ok(ToolOutput::ok("exit code: 0"))
    });
    runtime_over(llm, store, Arc::new(tb), config)
}

fn two_step_script() -> Script {
    vec![
        create_plan(&["a", "b"]),
        acted("did a"),
        acted("did b"),
        text("summary"),
    ]
}

fn request() -> RunRequest {
    RunRequest {
        run_id: "run_1".into(),
        task: "make a file".into(),
        workspace: PathBuf::from("/tmp/ws"),
    }
}

/// Suspension stops at a safe point: the tool call under way finishes and is journaled,
/// nothing new starts, no outcome is written, and the lease is given up.
#[tokio::test]
async fn a_suspended_run_finishes_its_call_writes_no_outcome_and_releases_its_lease() {
    let (store, rec) = recording_store();
    let suspend = CancellationToken::new();
    let rt = stopping_runtime(two_step_script(), store, suspend.clone(), base_config());
    let err = rt
        .run_with(
            request(),
            crate::engine::lease::RunControl {
                cancel: CancellationToken::new(),
                suspend,
            },
        )
        .await
        .expect_err("a suspended run has no outcome");
    assert!(matches!(err, crate::Error::Suspended), "{err:?}");
    let events = rec.events.lock().expect("lock").clone();
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
    assert_eq!(
        rec.released.lock().expect("lock").as_slice(),
        [RunConfig::default().lease.owner],
        "the lease was given up"
    );
    let last = rec.runs.lock().expect("lock").last().cloned().expect("run");
    assert_eq!(last.status, RunStatus::Running, "its status is kept");
}

/// A run whose lease was taken over (its renewal says so) stops and reports it; it does not
/// release the new owner's lease.
#[tokio::test(start_paused = true)]
async fn a_run_that_lost_its_lease_stops_without_an_outcome() {
    let (store, rec) = recording_store_where_renewals_fail();
    // The tool call waits long enough (paused time) for a renewal to find the lease gone.
    let (llm, _) = scripted(two_step_script());
    let rt = runtime_over(llm, store, slow_toolbox(), base_config());
    let err = rt
        .run(request(), CancellationToken::new())
        .await
        .expect_err("no outcome");
    assert!(matches!(err, crate::Error::LeaseLost), "{err:?}");
    let names: Vec<&str> = rec
        .events
        .lock()
        .expect("lock")
        .iter()
        .map(|e| e.kind.name())
        .collect();
    assert!(
        !names
            .iter()
            .any(|n| *n == "run_completed" || *n == "run_failed"),
        "{names:?}"
    );
    assert!(
        rec.released.lock().expect("lock").is_empty(),
        "the new owner's lease is left alone"
    );
}

/// A toolbox whose every call takes a minute (of paused test time), then succeeds.
fn slow_toolbox() -> Arc<dyn Toolbox> {
    let mut tb = MockToolbox::new();
    tb.expect_close_run().returning(|_| ());
    tb.expect_schemas().returning(Vec::new);
    tb.expect_call()
        .returning(|_, _, _| Ok(ToolOutput::ok("exit code: 0")));
    Arc::new(SlowToolbox(Arc::new(tb)))
}

/// Delays every call of `inner` by a minute.
struct SlowToolbox(Arc<MockToolbox>);

#[async_trait::async_trait]
impl Toolbox for SlowToolbox {
    fn schemas(&self) -> Vec<ToolSchema> {
        self.0.schemas()
    }
    async fn call(
        &self,
        name: &str,
        args: Value,
        ctx: &crate::ports::ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        tokio::time::sleep(std::time::Duration::from_secs(60)).await;
        self.0.call(name, args, ctx).await
    }
    async fn close_run(&self, run_id: &str) {
        self.0.close_run(run_id).await
    }
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
    let next = &h.requests()[2];
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
    let (store, rec) = recording_store();
    let (llm, _) = scripted(vec![
        create_plan(&["a"]),
        calls(&[("shell_exec", json!({"command": "slow"}))]),
        done("never accepted"),
        text("summary"),
    ]);
    let mut config = base_config();
    config.limits.max_step_time = Some(std::time::Duration::from_secs(30));
    let rt = runtime_over(llm, store, slow_toolbox(), config);
    let outcome = rt
        .run(request(), CancellationToken::new())
        .await
        .expect("an outcome");
    assert_eq!(outcome.status, RunStatus::Failed);
    let failed = rec
        .events
        .lock()
        .expect("lock")
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::StepFailed { error, .. } => Some(error.clone()),
            _ => None,
        })
        .expect("step_failed");
    assert_eq!(failed, "the step's time limit of 30 s was reached");
}
