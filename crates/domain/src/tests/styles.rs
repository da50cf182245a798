//! Every planning style through the one scheduler, with a scripted LLM that answers by what
//! is asked (planner replies in order, executor replies per step, with latency). Time is
//! tokio's paused clock, so makespans are exact and nothing really sleeps.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::engine::config::Schedule;
use crate::engine::config::{Mode, Revise, RunConfig};
use crate::engine::executor::agent::ExecutorAgent;
use crate::engine::runtime::{RunOutcome, RunRequest, Runtime};
use crate::error::{LlmError, ToolError};
use crate::model::event::{AdaptAction, Event, EventKind, PlanSource};
use crate::model::plan::StepStatus;
use crate::ports::llm::{
    CallPurpose, ChatRequest, ChatResponse, ResponseFormat, Role, ToolCall, Usage,
};
use crate::ports::{
    LlmClient, MockRunStore, MockToolbox, NoEventSink, RunStatus, SequentialIds, SystemClock,
    ToolOutput,
};

type Reply = Result<ChatResponse, LlmError>;

/// Answers planner calls from a queue, executor calls per step description, verifier
/// (`Other`) calls from a queue, and summaries with "summary".
#[derive(Default)]
struct FakeLlm {
    plans: Mutex<VecDeque<Reply>>,
    others: Mutex<VecDeque<Reply>>,
    steps: Mutex<HashMap<String, VecDeque<Reply>>>,
    latency: HashMap<String, Duration>,
    requests: Mutex<Vec<ChatRequest>>,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
}

fn usage() -> Usage {
    Usage {
        prompt_tokens: 10,
        completion_tokens: 5,
        cached_prompt_tokens: 0,
    }
}

fn text(s: &str) -> Reply {
    Ok(ChatResponse {
        content: Some(s.to_string()),
        usage: usage(),
        ..ChatResponse::default()
    })
}

fn json_reply(v: Value) -> Reply {
    text(&v.to_string())
}

fn call(name: &str, args: Value) -> Reply {
    static NEXT: AtomicUsize = AtomicUsize::new(1);
    Ok(ChatResponse {
        tool_calls: vec![ToolCall {
            id: format!("c{}", NEXT.fetch_add(1, Ordering::Relaxed)),
            name: name.to_string(),
            arguments: args.to_string(),
        }],
        usage: usage(),
        ..ChatResponse::default()
    })
}

/// A step that acts (one shell call) and claims success, in one turn: an executor claiming
/// success without any tool call is refused for steps that ask for an action.
fn done(result: &str) -> Reply {
    let mut reply = call("shell_exec", json!({"command": "true"}))?;
    let complete = call("complete_step", json!({"success": true, "result": result}))?;
    reply.tool_calls.extend(complete.tool_calls);
    Ok(reply)
}

fn fail(result: &str) -> Reply {
    call("complete_step", json!({"success": false, "result": result}))
}

/// The step an executor request is about: `You are now working on step N: "TEXT"`.
fn step_of(req: &ChatRequest) -> String {
    let prompt = req
        .messages
        .iter()
        .find(|m| m.role == Role::User)
        .and_then(|m| m.content.clone())
        .unwrap_or_default();
    prompt
        .split_once("You are now working on step ")
        .and_then(|(_, rest)| rest.split_once('"'))
        .and_then(|(_, rest)| rest.split_once('"'))
        .map(|(text, _)| text.to_string())
        .unwrap_or_default()
}

impl FakeLlm {
    fn new() -> FakeLlm {
        FakeLlm::default()
    }
    fn plans(self, replies: Vec<Reply>) -> FakeLlm {
        *self.plans.lock().expect("lock") = replies.into();
        self
    }
    fn others(self, replies: Vec<Reply>) -> FakeLlm {
        *self.others.lock().expect("lock") = replies.into();
        self
    }
    fn step(self, text: &str, replies: Vec<Reply>) -> FakeLlm {
        self.steps
            .lock()
            .expect("lock")
            .insert(text.to_string(), replies.into());
        self
    }
    fn latency(mut self, text: &str, ms: u64) -> FakeLlm {
        self.latency
            .insert(text.to_string(), Duration::from_millis(ms));
        self
    }
    fn requests(&self) -> Vec<ChatRequest> {
        self.requests.lock().expect("lock").clone()
    }
    fn executed(&self, step: &str) -> usize {
        self.requests()
            .iter()
            .filter(|r| r.purpose == CallPurpose::Execute && step_of(r) == step)
            .count()
    }
}

#[async_trait]
impl LlmClient for FakeLlm {
    async fn chat(&self, req: ChatRequest) -> Result<ChatResponse, LlmError> {
        self.requests.lock().expect("lock").push(req.clone());
        match req.purpose {
            CallPurpose::Plan => self
                .plans
                .lock()
                .expect("lock")
                .pop_front()
                .unwrap_or_else(|| Err(LlmError::Permanent("no planner reply left".into()))),
            CallPurpose::Other => self
                .others
                .lock()
                .expect("lock")
                .pop_front()
                .unwrap_or_else(|| Err(LlmError::Permanent("no reply left".into()))),
            CallPurpose::Summarize => text("summary"),
            CallPurpose::Execute => {
                let step = step_of(&req);
                let n = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                self.max_in_flight.fetch_max(n, Ordering::SeqCst);
                if let Some(d) = self.latency.get(&step) {
                    tokio::time::sleep(*d).await;
                }
                self.in_flight.fetch_sub(1, Ordering::SeqCst);
                let scripted = self
                    .steps
                    .lock()
                    .expect("lock")
                    .get_mut(&step)
                    .and_then(VecDeque::pop_front);
                scripted.unwrap_or_else(|| done(&format!("done: {step}")))
            }
        }
    }
}

fn toolbox() -> MockToolbox {
    let mut tb = MockToolbox::new();
    tb.expect_close_run().returning(|_| ());
    tb.expect_schemas().returning(Vec::new);
    tb.expect_call().returning(|name, _, _| match name {
        "boom" => Err(ToolError::Failed("kaboom".into())),
        _ => Ok(ToolOutput::ok("ok")),
    });
    tb
}

fn store(events: Arc<Mutex<Vec<Event>>>) -> MockRunStore {
    let mut store = MockRunStore::new();
    store.expect_create_run().returning(|_| Ok(()));
    store.expect_renew_lease().returning(|_, _, _| Ok(true));
    store.expect_release_lease().returning(|_, _| Ok(()));
    store.expect_set_run_status().returning(|_, _| Ok(()));
    store.expect_update_run().returning(|_| Ok(()));
    store.expect_save_plan().returning(|_, _| Ok(()));
    store.expect_save_usage().returning(|_, _| Ok(()));
    store.expect_append_event().returning(move |e| {
        events.lock().expect("lock").push(e.clone());
        Ok(())
    });
    store
}

fn config(mode: Mode) -> RunConfig {
    RunConfig {
        mode,
        retries: 0,
        retry_delay: Duration::ZERO,
        max_revisions: 0,
        ..RunConfig::default()
    }
}

struct Run {
    outcome: RunOutcome,
    events: Vec<Event>,
    llm: Arc<FakeLlm>,
    elapsed: Duration,
}

impl Run {
    fn names(&self) -> Vec<&'static str> {
        self.events.iter().map(|e| e.kind.name()).collect()
    }
    fn status(&self, description: &str) -> StepStatus {
        self.outcome
            .plan
            .steps()
            .iter()
            .find(|s| s.description == description)
            .map(|s| s.status())
            .unwrap_or_else(|| panic!("no step {description:?} in {:#?}", self.outcome.plan))
    }
    fn adapt_actions(&self) -> Vec<AdaptAction> {
        self.events
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::StepAdapted { action, .. } => Some(*action),
                _ => None,
            })
            .collect()
    }
    fn errors(&self) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::Error { message, .. } => Some(message.clone()),
                _ => None,
            })
            .collect()
    }
}

async fn run_cancellable(
    llm: FakeLlm,
    config: RunConfig,
    task: &str,
    cancel: CancellationToken,
) -> Run {
    let llm = Arc::new(llm);
    let events: Arc<Mutex<Vec<Event>>> = Arc::default();
    let rt = Runtime {
        planner_llm: llm.clone(),
        executors: vec![ExecutorAgent {
            name: "general".into(),
            description: "d".into(),
            kinds: vec![],
            llm: llm.clone(),
            toolbox: Arc::new(toolbox()),
        }],
        store: Arc::new(store(events.clone())),
        sink: Arc::new(NoEventSink),
        clock: Arc::new(SystemClock),
        user: Arc::new(crate::ports::NoUser),
        ids: Arc::new(SequentialIds::default()),
        config,
    };
    let started = tokio::time::Instant::now();
    let outcome = rt
        .run(
            RunRequest {
                run_id: "run_1".into(),
                task: task.into(),
                workspace: PathBuf::from("/tmp"),
            },
            cancel,
        )
        .await
        .expect("outcome");
    let elapsed = started.elapsed();
    let events = events.lock().expect("lock").clone();
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e.seq, i as u64 + 1, "gap-free event log");
    }
    Run {
        outcome,
        events,
        llm,
        elapsed,
    }
}

async fn run(llm: FakeLlm, config: RunConfig, task: &str) -> Run {
    run_cancellable(llm, config, task, CancellationToken::new()).await
}

fn flow_plan(steps: &[&str]) -> Reply {
    call(
        "planning",
        json!({"command": "create", "title": "T", "steps": steps}),
    )
}

// ---------------------------------------------------------------- the adapt loop (flow)

#[tokio::test(start_paused = true)]
async fn a_failed_step_is_retried_after_a_backoff() {
    let llm = FakeLlm::new()
        .plans(vec![flow_plan(&["flaky"])])
        .step("flaky", vec![fail("temporary glitch"), done("worked")]);
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
        .events
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
    let llm = FakeLlm::new()
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
    let llm = FakeLlm::new()
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
    let llm = FakeLlm::new()
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
    let llm = FakeLlm::new().plans(vec![flow_plan(&["use boom"])]).step(
        "use boom",
        vec![
            call("boom", json!({"n": 1})),
            call("boom", json!({"n": 2})),
            done("ok"),
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
    let llm = FakeLlm::new()
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
        .events
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
    let llm = FakeLlm::new().plans(vec![flow_plan(&["a", "b", "c"])]);
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

// ---------------------------------------------------------------------------- plan-act

fn pa_plan(steps: Value) -> Reply {
    json_reply(json!({"title": "T", "goal": "G", "language": "en", "steps": steps}))
}

#[tokio::test(start_paused = true)]
async fn plan_act_revises_when_the_executor_says_the_plan_no_longer_fits() {
    let llm = FakeLlm::new()
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
    let llm = FakeLlm::new().plans(vec![
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
    let llm = FakeLlm::new()
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
    let llm = FakeLlm::new().plans(vec![text("I would start by"), text("sorry, no JSON")]);
    let r = run(llm, config(Mode::PlanAct), "t").await;
    assert_eq!(r.outcome.plan.steps().len(), 3);
    assert_eq!(r.outcome.plan.steps()[0].description, "Analyze request");
    let source = r.events.iter().find_map(|e| match &e.kind {
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
    let llm = FakeLlm::new().plans(vec![
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
    let llm = FakeLlm::new()
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
    let llm = FakeLlm::new()
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

// -------------------------------------------------------------------------------- todo

#[tokio::test(start_paused = true)]
async fn todo_starts_small_and_adds_work_as_it_is_discovered() {
    let llm = FakeLlm::new().plans(vec![
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
    let updated = r.events.iter().find_map(|e| match &e.kind {
        EventKind::PlanUpdated { reason, .. } => Some(reason.clone()),
        _ => None,
    });
    assert_eq!(updated.as_deref(), Some("found a log folder"));
}

#[tokio::test(start_paused = true)]
async fn a_todo_whose_dependency_failed_is_blocked_and_never_run() {
    let llm = FakeLlm::new()
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
    let llm = FakeLlm::new().plans(vec![
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
    let llm = FakeLlm::new()
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
    let llm = FakeLlm::new().plans(vec![
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

// --------------------------------------------------------------------------------- dag

fn dag(actions: Value) -> Reply {
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

fn diamond_llm() -> FakeLlm {
    FakeLlm::new()
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
    assert_eq!(r.llm.max_in_flight.load(Ordering::SeqCst), 2);
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
    let llm = FakeLlm::new()
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
    assert_eq!(r.llm.max_in_flight.load(Ordering::SeqCst), 2);
    assert!(r.elapsed >= Duration::from_millis(20));
}

#[tokio::test(start_paused = true)]
async fn conditional_edges_run_or_skip_by_the_upstream_result() {
    let llm = FakeLlm::new()
        .plans(vec![dag(json!([
            {"id": "t", "description": "run tests"},
            {"id": "p", "description": "publish", "condition": {"step": "t", "contains": "PASS"}},
            {"id": "f", "description": "file a bug", "condition": {"step": "t", "contains": "fail"}}
        ]))])
        .step("run tests", vec![done("all tests pass")]);
    let r = run(llm, config(Mode::Dag), "t").await;
    assert_eq!(r.status("publish"), StepStatus::Completed);
    assert_eq!(r.status("file a bug"), StepStatus::Skipped);
    assert_eq!(r.outcome.status, RunStatus::Completed);
    assert_eq!(r.llm.executed("file a bug"), 0);
}

#[tokio::test(start_paused = true)]
async fn a_rollback_runs_when_its_target_fails_and_dependents_are_blocked() {
    let llm = FakeLlm::new()
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
    let llm = FakeLlm::new().plans(vec![
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
    let llm = FakeLlm::new().plans(vec![bad(), bad()]);
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

// -------------------------------------------------------------------------------- auto

fn chosen(r: &Run) -> (String, String) {
    r.events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::ModeChosen { mode, by, .. } => Some((mode.clone(), by.clone())),
            _ => None,
        })
        .expect("mode_chosen event")
}

#[tokio::test(start_paused = true)]
async fn auto_uses_rules_for_clear_tasks() {
    let llm = FakeLlm::new().plans(vec![flow_plan(&["write it"])]);
    let r = run(llm, config(Mode::Auto), "Write hello.txt containing hi").await;
    assert_eq!(chosen(&r), ("flow".to_string(), "rules".to_string()));
    assert_eq!(r.outcome.status, RunStatus::Completed);
}

#[tokio::test(start_paused = true)]
async fn auto_asks_the_llm_when_the_rules_are_unsure() {
    let llm = FakeLlm::new().plans(vec![
        json_reply(json!({"class": "emergent", "reason": "open-ended"})),
        json_reply(json!({"todos": [{"description": "look around"}]})),
        json_reply(json!({"needs_update": false})),
    ]);
    let r = run(
        llm,
        config(Mode::Auto),
        "Investigate why the build is slow, then compare it with last week",
    )
    .await;
    assert_eq!(chosen(&r), ("todo".to_string(), "llm".to_string()));
    assert_eq!(r.outcome.plan.steps()[0].description, "look around");
}

#[tokio::test(start_paused = true)]
async fn auto_falls_back_to_complex_when_the_classifier_fails() {
    let llm = FakeLlm::new().plans(vec![
        text("dunno"),
        text("still dunno"),
        dag(json!([{"id": "a", "description": "a"}])),
    ]);
    let r = run(
        llm,
        config(Mode::Auto),
        "Investigate the logs, then compare both servers",
    )
    .await;
    assert_eq!(chosen(&r), ("dag".to_string(), "fallback".to_string()));
    assert_eq!(r.outcome.status, RunStatus::Completed);
}
