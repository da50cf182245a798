//! Runtimes, requests and run records built the same way for every test: one general
//! agent, no live listener, the system clock, no user, sequential ids.

use std::path::PathBuf;
use std::sync::Arc;

use crate::model::event::RunUsage;
use crate::ports::{LlmClient, RunRecord, RunStatus, RunStore, SequentialIds, Toolbox};
use crate::{ExecutorAgent, RunConfig, RunRequest, Runtime};

/// The id every test run gets from [`request`].
pub const RUN_ID: &str = "run_1";

/// An executor agent for steps tagged with one of `kinds` (none: any step).
pub fn agent(
    name: &str,
    kinds: &[&str],
    llm: Arc<dyn LlmClient>,
    toolbox: Arc<dyn Toolbox>,
) -> ExecutorAgent {
    ExecutorAgent {
        name: name.into(),
        description: format!("The {name} agent."),
        kinds: kinds.iter().map(|k| k.to_string()).collect(),
        llm,
        toolbox,
    }
}

/// A runtime whose planner and only (general) agent share `llm`.
pub fn runtime(
    llm: Arc<dyn LlmClient>,
    toolbox: Arc<dyn Toolbox>,
    store: Arc<dyn RunStore>,
    config: RunConfig,
) -> Runtime {
    Runtime::builder(llm.clone())
        .executor(agent("general", &[], llm, toolbox))
        .store(store)
        .ids(Arc::new(SequentialIds::default()))
        .config(config)
        .build()
}

/// A request for run [`RUN_ID`] in `/tmp/ws`.
pub fn request(task: &str) -> RunRequest {
    RunRequest {
        run_id: RUN_ID.into(),
        task: task.into(),
        workspace: PathBuf::from("/tmp/ws"),
    }
}

/// A flow run record, running, created now, nobody holding its lease.
pub fn run_record(run_id: &str) -> RunRecord {
    RunRecord {
        run_id: run_id.into(),
        task: "make a file".into(),
        mode: "flow".into(),
        status: RunStatus::Running,
        workspace: "/tmp/ws".into(),
        created_at: chrono::Utc::now(),
        finished_at: None,
        summary: None,
        error: None,
        usage: RunUsage::default(),
        lease: None,
        queue_request: None,
        client: None,
    }
}

/// Runs `rt` on a `benchmark` task and returns how long the run took; panics unless it
/// completed (the measure of the scheduler and telemetry benchmarks).
pub async fn timed_run(rt: &Runtime) -> std::time::Duration {
    let started = std::time::Instant::now();
    let outcome = rt
        .run(
            request("benchmark"),
            tokio_util::sync::CancellationToken::new(),
        )
        .await
        .unwrap_or_else(|e| panic!("the benchmark run failed: {e}"));
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    started.elapsed()
}
