//! Journal benchmarks (run by `cargo xtask bench`): events appended per second to a real
//! SQLite file with `synchronous=NORMAL` and `FULL`, and the time to resume a run of about
//! 1,000 events. Prints a Markdown section on stdout.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use adapter_store_sqlite::{Durability, SqliteStore};
use async_trait::async_trait;
use chrono::Utc;
use domain::error::{LlmError, ToolError};
use domain::llm::{CallPurpose, ChatRequest, ChatResponse, Role, ToolCall, ToolSchema};
use domain::model::event::{Event, EventKind, RunUsage};
use domain::ports::{
    EventSink, LlmClient, RunRecord, RunStatus, RunStore, SequentialIds, ToolContext, ToolOutput,
    Toolbox,
};
use domain::{ExecutorAgent, RunConfig, RunRequest, Runtime};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

fn record(run_id: &str) -> RunRecord {
    RunRecord {
        run_id: run_id.into(),
        task: "bench".into(),
        mode: "flow".into(),
        status: RunStatus::Running,
        workspace: "/tmp".into(),
        created_at: Utc::now(),
        finished_at: None,
        summary: None,
        error: None,
        usage: RunUsage::default(),
        lease: None,
        queue_request: None,
        client: None,
    }
}

async fn append_rate(durability: Durability, n: u64) -> f64 {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open_with(dir.path().join("bench.db"), durability).unwrap();
    store.create_run(&record("r")).await.unwrap();
    let started = Instant::now();
    for seq in 1..=n {
        let event = Event {
            run_id: "r".into(),
            seq,
            at: Utc::now(),
            kind: EventKind::ToolCalled {
                step_id: Some("s1".into()),
                call_id: format!("c{seq}"),
                tool: "shell_exec".into(),
                ok: true,
                output: "exit code: 0\n--- stdout ---\nhello\n--- stderr ---\n(empty)".into(),
                duration_ms: 3,
                journal_key: Some(format!("exec:s1:1#{seq}/c{seq}")),
            },
        };
        store.append_event(&event).await.unwrap();
    }
    n as f64 / started.elapsed().as_secs_f64()
}

/// Usage saves per second: the write added to every LLM call so an interrupted run keeps
/// its usage.
async fn usage_save_rate(durability: Durability, n: u64) -> f64 {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open_with(dir.path().join("bench.db"), durability).unwrap();
    store.create_run(&record("r")).await.unwrap();
    let started = Instant::now();
    for i in 1..=n {
        let usage = RunUsage {
            llm_calls: i,
            prompt_tokens: i * 1000,
            completion_tokens: i * 50,
            cached_prompt_tokens: i * 800,
        };
        store.save_usage("r", &usage).await.unwrap();
    }
    n as f64 / started.elapsed().as_secs_f64()
}

/// Every step: one tool call, then `complete_step`. Records when the first live call came.
struct ScriptedLlm {
    steps: usize,
    first_call: Mutex<Option<Instant>>,
}

fn step_and_turn(req: &ChatRequest) -> (String, usize) {
    let prompt = req
        .messages
        .iter()
        .find(|m| m.role == Role::User)
        .and_then(|m| m.content.as_deref())
        .unwrap_or_default();
    let step = prompt
        .split_once("You are now working on step ")
        .map(|(_, r)| r.split(':').next().unwrap_or("").to_string())
        .unwrap_or_default();
    let turn = req
        .messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .count();
    (step, turn)
}

#[async_trait]
impl LlmClient for ScriptedLlm {
    async fn chat(&self, req: ChatRequest) -> Result<ChatResponse, LlmError> {
        {
            let mut first = self.first_call.lock().unwrap();
            if first.is_none() {
                *first = Some(Instant::now());
            }
        }
        let call = |name: &str, args: Value| ChatResponse {
            tool_calls: vec![ToolCall {
                id: "c1".into(),
                name: name.into(),
                arguments: args.to_string(),
            }],
            ..ChatResponse::default()
        };
        Ok(match req.purpose {
            CallPurpose::Plan => {
                let steps: Vec<String> = (0..self.steps).map(|i| format!("step {i}")).collect();
                call(
                    "planning",
                    json!({"command": "create", "title": "bench", "steps": steps}),
                )
            }
            CallPurpose::Summarize => ChatResponse {
                content: Some("summary".into()),
                ..ChatResponse::default()
            },
            _ => {
                let (step, turn) = step_and_turn(&req);
                if turn == 0 {
                    call("noop", json!({"step": step}))
                } else {
                    call(
                        "complete_step",
                        json!({"success": true, "result": format!("done {step}")}),
                    )
                }
            }
        })
    }
}

struct Noop;

#[async_trait]
impl Toolbox for Noop {
    fn schemas(&self) -> Vec<ToolSchema> {
        vec![ToolSchema {
            name: "noop".into(),
            description: "does nothing".into(),
            parameters: json!({"type": "object"}),
        }]
    }
    async fn call(&self, _: &str, _: Value, _: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::ok("ok"))
    }
}

/// Cancels the run once `at` events were written.
struct CancelAt {
    at: u64,
    token: CancellationToken,
    seen: AtomicU64,
}

impl EventSink for CancelAt {
    fn publish(&self, event: &Event) {
        self.seen.store(event.seq, Ordering::Relaxed);
        if event.seq >= self.at {
            self.token.cancel();
        }
    }
}

fn runtime(store: Arc<SqliteStore>, llm: Arc<ScriptedLlm>, sink: Arc<dyn EventSink>) -> Runtime {
    Runtime::builder(llm.clone())
        .executor(ExecutorAgent {
            name: "general".into(),
            description: "bench".into(),
            kinds: vec![],
            llm,
            toolbox: Arc::new(Noop),
        })
        .store(store)
        .sink(sink)
        .ids(Arc::new(SequentialIds::default()))
        .config(RunConfig {
            mode: domain::Mode::Flow,
            retries: 0,
            retry_delay: Duration::ZERO,
            // The bench's plan is long on purpose (250 steps).
            max_plan_steps: 300,
            ..RunConfig::default()
        })
        .build()
}

async fn resume_time() -> (u64, Duration, Duration) {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open(dir.path().join("bench.db")).unwrap());
    let token = CancellationToken::new();
    let sink = Arc::new(CancelAt {
        at: 1000,
        token: token.clone(),
        seen: AtomicU64::new(0),
    });
    let first = runtime(
        store.clone(),
        Arc::new(ScriptedLlm {
            steps: 250,
            first_call: Mutex::new(None),
        }),
        sink,
    );
    let request = RunRequest {
        run_id: "bench".into(),
        task: "bench".into(),
        workspace: PathBuf::from("/tmp"),
    };
    first.run(request, token).await.unwrap();
    let events = store.events("bench", 0).await.unwrap().len() as u64;
    let llm = Arc::new(ScriptedLlm {
        steps: 250,
        first_call: Mutex::new(None),
    });
    let second = runtime(
        store.clone(),
        llm.clone(),
        Arc::new(domain::ports::NoEventSink),
    );
    let started = Instant::now();
    let outcome = second
        .resume("bench", CancellationToken::new())
        .await
        .unwrap();
    let total = started.elapsed();
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    let to_first = llm
        .first_call
        .lock()
        .unwrap()
        .map(|t| t - started)
        .unwrap_or(total);
    (events, to_first, total)
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let normal = append_rate(Durability::Normal, 3000).await;
        let full = append_rate(Durability::Full, 500).await;
        let saves_normal = usage_save_rate(Durability::Normal, 3000).await;
        let saves_full = usage_save_rate(Durability::Full, 500).await;
        let (events, to_first, total) = resume_time().await;
        println!("## Journal (`crates/adapter-store-sqlite/benches/journal.rs`)\n");
        println!("Events appended one transaction each to a real SQLite file (WAL).\n");
        println!("| synchronous | events/s | time per event |");
        println!("| --- | --- | --- |");
        println!("| NORMAL (default) | {normal:.0} | {:.1} µs |", 1e6 / normal);
        println!("| FULL (`PLANWRIGHT_DB_SYNC=full`) | {full:.0} | {:.1} µs |\n", 1e6 / full);
        println!("The run's usage, saved after every LLM call (one `UPDATE` transaction each):\n");
        println!("| synchronous | saves/s | time per save |");
        println!("| --- | --- | --- |");
        println!("| NORMAL (default) | {saves_normal:.0} | {:.1} µs |", 1e6 / saves_normal);
        println!("| FULL | {saves_full:.0} | {:.1} µs |\n", 1e6 / saves_full);
        println!("Resuming a cancelled flow run of {events} events (250 planned steps, one tool call");
        println!("each, cancelled at event 1,000): loading the log, rebuilding the journal and the plan");
        println!("until the first new LLM call, then finishing the remaining steps with a zero-latency LLM.\n");
        println!("| events in the log | to the first new LLM call | whole resumed run |");
        println!("| --- | --- | --- |");
        println!(
            "| {events} | {:.1} ms | {:.1} ms |",
            to_first.as_secs_f64() * 1000.0,
            total.as_secs_f64() * 1000.0
        );
    });
}
