//! [`Runtime`]: runs one task from start to summary, whatever the planning style.
//!
//! ```text
//! run_started ─▶ plan (planner LLM + `planning` tool, or the default plan)
//!             ─▶ steps (executor tool loops, journaled) ─▶ summary ─▶ run_completed | run_failed
//! ```

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::error::Error;
use crate::event::{EventKind, RunUsage};
use crate::executor::{ExecutorAgent, StepLimits};
use crate::flow::{self, LoopEnd};
use crate::plan::{Plan, StepStatus};
use crate::ports::{Clock, EventSink, IdGen, LlmClient, RunRecord, RunStatus, RunStore};
use crate::run::RunContext;

/// The planning style of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// One upfront plan through the `planning` tool, steps in order (seeds 000/002).
    #[default]
    Flow,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Flow => "flow",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Mode {
    type Err = Error;
    fn from_str(s: &str) -> Result<Mode, Error> {
        match s {
            "flow" => Ok(Mode::Flow),
            other => Err(Error::Config(format!(
                "unknown mode '{other}' (available: flow)"
            ))),
        }
    }
}

/// Knobs of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunConfig {
    pub mode: Mode,
    pub limits: StepLimits,
    /// Attempts of a step whose LLM calls fail (after the adapter's own retries).
    pub step_attempts: u32,
    /// Planner turns before falling back to the default plan.
    pub planner_attempts: u32,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            mode: Mode::Flow,
            limits: StepLimits::default(),
            step_attempts: 2,
            planner_attempts: 2,
        }
    }
}

/// Everything a run needs, wired by the app.
#[derive(Clone)]
pub struct Runtime {
    pub planner_llm: Arc<dyn LlmClient>,
    /// At least one; the first is the primary agent.
    pub executors: Vec<ExecutorAgent>,
    pub store: Arc<dyn RunStore>,
    pub sink: Arc<dyn EventSink>,
    pub clock: Arc<dyn Clock>,
    pub ids: Arc<dyn IdGen>,
    pub config: RunConfig,
}

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runtime")
            .field("executors", &self.executors)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// A task to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunRequest {
    pub run_id: String,
    pub task: String,
    /// Must exist; tools are confined to it.
    pub workspace: PathBuf,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    pub run_id: String,
    pub status: RunStatus,
    pub summary: String,
    /// Why the run failed, when it did.
    pub error: Option<String>,
    pub plan: Plan,
    pub usage: RunUsage,
}

impl Runtime {
    /// A fresh run id from the runtime's id generator.
    pub fn new_run_id(&self) -> String {
        self.ids.new_id("run")
    }

    /// Runs `request` to the end. Returns `Err` only when the run could not be journaled
    /// (store failure) or was misconfigured; every model or tool failure ends in an outcome.
    pub async fn run(
        &self,
        request: RunRequest,
        cancel: CancellationToken,
    ) -> Result<RunOutcome, Error> {
        if self.executors.is_empty() {
            return Err(Error::Config(
                "a runtime needs at least one executor".into(),
            ));
        }
        let span = tracing::info_span!("run", run_id = %request.run_id, mode = %self.config.mode);
        self.run_inner(request, cancel).instrument(span).await
    }

    async fn run_inner(
        &self,
        request: RunRequest,
        cancel: CancellationToken,
    ) -> Result<RunOutcome, Error> {
        let ctx = RunContext::new(
            request.run_id.clone(),
            request.task.clone(),
            request.workspace.clone(),
            cancel,
            self.store.clone(),
            self.sink.clone(),
            self.clock.clone(),
        );
        let mut record = RunRecord {
            run_id: request.run_id.clone(),
            task: request.task.clone(),
            mode: self.config.mode.to_string(),
            status: RunStatus::Running,
            workspace: request.workspace.display().to_string(),
            created_at: ctx.now(),
            finished_at: None,
            summary: None,
            error: None,
            usage: RunUsage::default(),
        };
        ctx.store().create_run(&record).await?;
        ctx.emit(EventKind::RunStarted {
            task: request.task.clone(),
            mode: self.config.mode.to_string(),
            workspace: record.workspace.clone(),
        })
        .await?;
        tracing::info!(task = %request.task, "run started");

        // Plan ids only need to be unique within their run; a fixed id keeps the requests of a
        // run reproducible (record/replay).
        let plan_id = "plan_1".to_string();
        let (mut plan, source, reason) = flow::create_plan(&ctx, self, plan_id).await?;
        ctx.save_plan(&plan).await?;
        if let Some(r) = &reason {
            ctx.emit(EventKind::Error {
                step_id: None,
                message: format!("{r}; using the default plan"),
            })
            .await?;
        }
        ctx.emit(EventKind::PlanCreated {
            plan: plan.clone(),
            source,
            reason,
        })
        .await?;

        let end = flow::run_steps(&ctx, self, &mut plan).await?;
        let cancelled = end == LoopEnd::Cancelled;
        let summary = flow::summarize(&ctx, self, &plan, cancelled).await?;
        let failure = match end {
            LoopEnd::Cancelled => Some("the run was cancelled".to_string()),
            LoopEnd::Finished { failure } => failure.or_else(|| {
                plan.steps
                    .iter()
                    .find(|s| s.status != StepStatus::Completed)
                    .map(|s| format!("step '{}' ended {}", s.id, s.status))
            }),
        };
        let usage = ctx.usage();
        let status = if failure.is_none() {
            RunStatus::Completed
        } else {
            RunStatus::Failed
        };
        match &failure {
            None => {
                ctx.emit(EventKind::RunCompleted {
                    summary: summary.clone(),
                    usage,
                })
                .await?
            }
            Some(reason) => {
                ctx.emit(EventKind::RunFailed {
                    reason: reason.clone(),
                    summary: summary.clone(),
                    usage,
                })
                .await?
            }
        }
        record.status = status;
        record.finished_at = Some(ctx.now());
        record.summary = Some(summary.clone());
        record.error = failure.clone();
        record.usage = usage;
        ctx.store().update_run(&record).await?;
        tracing::info!(status = status.as_str(), "run finished");
        Ok(RunOutcome {
            run_id: request.run_id,
            status,
            summary,
            error: failure,
            plan,
            usage,
        })
    }
}
