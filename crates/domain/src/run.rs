//! Starting, resuming and finishing runs: the entry points of [`Runtime`], from start to summary,
//! whatever the planning style. The only file that picks a strategy (`strategy::list`).
//!
//! ```text
//! run_started ─▶ [auto: mode_chosen] ─▶ plan (the style's planner, or the default plan)
//!             ─▶ scheduler (executor tool loops, verify, adapt, revise; journaled)
//!             ─▶ summary ─▶ run_completed | run_failed
//! ```

use std::path::PathBuf;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::engine::config::Mode;
use crate::engine::context::RunContext;
use crate::engine::journal::Journal;
use crate::engine::lease::RunControl;
use crate::engine::runtime::{RunOutcome, RunRequest, Runtime};
use crate::engine::scheduler::{self, LoopEnd};
use crate::error::Error;
use crate::model::event::{EventKind, RunUsage};
use crate::model::plan::{Plan, StepStatus};
use crate::ports::{Lease, LeaseClaim, LeaseOutcome, RunRecord, RunStatus};
use crate::strategy::list::strategy_for;
use crate::strategy::InitialPlan;

impl Runtime {
    /// Runs `request` to the end. Returns `Err` only when the run could not be journaled
    /// (store failure) or was misconfigured; every model or tool failure ends in an outcome.
    pub async fn run(
        &self,
        request: RunRequest,
        cancel: CancellationToken,
    ) -> Result<RunOutcome, Error> {
        self.run_with(request, RunControl::cancel_only(cancel))
            .await
    }

    /// As [`Runtime::run`], also suspendable (see [`RunControl`]).
    pub async fn run_with(
        &self,
        request: RunRequest,
        control: RunControl,
    ) -> Result<RunOutcome, Error> {
        self.check_executors()?;
        let run_id = request.run_id.clone();
        let span = tracing::info_span!("run", run_id = %request.run_id, mode = %self.config.mode);
        let body = |control: RunControl| self.run_inner(request, control);
        self.owned(&run_id, control, body).instrument(span).await
    }

    /// Starts a run that waited in the work queue: `run_id` is stored as `queued` and this
    /// process holds its lease (it claimed it). Runs it as [`Runtime::run_with`] would,
    /// with the mode recorded at enqueue time.
    pub async fn run_queued(&self, run_id: &str, control: RunControl) -> Result<RunOutcome, Error> {
        self.check_executors()?;
        let span = tracing::info_span!("run", run_id = %run_id, queued = true);
        let body = |control: RunControl| self.queued_inner(run_id, control);
        self.owned(run_id, control, body).instrument(span).await
    }

    /// Runs `body` while keeping the run's lease, then gives the lease up and lets the tools
    /// release what they hold. A run stopped by its suspend token (or by losing its lease)
    /// ends with [`Error::Suspended`] ([`Error::LeaseLost`]), whatever unwound it.
    async fn owned<'a, F, Fut>(
        &'a self,
        run_id: &'a str,
        control: RunControl,
        body: F,
    ) -> Result<RunOutcome, Error>
    where
        F: FnOnce(RunControl) -> Fut,
        Fut: std::future::Future<Output = Result<RunOutcome, Error>> + 'a,
    {
        let lost = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let suspend = control.suspend.child_token();
        let keeper = crate::engine::lease::keep(
            self.store.clone(),
            self.clock.clone(),
            self.config.lease.clone(),
            run_id.to_string(),
            suspend.clone(),
            lost.clone(),
        );
        let control = RunControl {
            cancel: control.cancel,
            suspend: suspend.clone(),
        };
        let outcome = tokio::select! {
            o = body(control) => o,
            () = keeper => Err(Error::LeaseLost),
        };
        self.close_tools(run_id).await;
        let lost = lost.load(std::sync::atomic::Ordering::SeqCst);
        if !lost {
            if let Err(e) = self
                .store
                .release_lease(run_id, &self.config.lease.owner)
                .await
            {
                tracing::warn!(run_id, error = %e, "cannot release the run's lease");
            }
        }
        match outcome {
            Err(Error::Store(_)) if lost => Err(Error::LeaseLost),
            Err(Error::Store(_)) if suspend.is_cancelled() => {
                tracing::info!(run_id, "run suspended");
                Err(Error::Suspended)
            }
            other => other,
        }
    }

    /// Lets every executor's tools release what they hold for the run (sessions, browsers).
    async fn close_tools(&self, run_id: &str) {
        for agent in &self.executors {
            agent.toolbox.close_run(run_id).await;
        }
    }

    async fn run_inner(
        &self,
        request: RunRequest,
        control: RunControl,
    ) -> Result<RunOutcome, Error> {
        let ctx = RunContext::new(self, &request, &control);
        let now = ctx.now();
        let record = RunRecord {
            run_id: request.run_id.clone(),
            task: request.task.clone(),
            mode: self.config.mode.to_string(),
            status: RunStatus::Running,
            workspace: request.workspace.display().to_string(),
            created_at: now,
            finished_at: None,
            summary: None,
            error: None,
            usage: RunUsage::default(),
            lease: Some(Lease {
                owner: self.config.lease.owner.clone(),
                until: self.config.lease.until(now),
            }),
            queue_request: None,
        };
        ctx.store().create_run(&record).await?;
        self.start(&ctx, record, self.config.mode).await
    }

    /// The run's record; [`Error::UnknownRun`] when the store has none.
    async fn existing_run(&self, run_id: &str) -> Result<RunRecord, Error> {
        self.store
            .get_run(run_id)
            .await?
            .ok_or_else(|| Error::UnknownRun(run_id.to_string()))
    }

    /// See [`Runtime::run_queued`].
    async fn queued_inner(&self, run_id: &str, control: RunControl) -> Result<RunOutcome, Error> {
        let mut record = self.existing_run(run_id).await?;
        let owner = &self.config.lease.owner;
        if record.status != RunStatus::Queued {
            return Err(Error::Config(format!(
                "run '{run_id}' is {}, not queued",
                record.status.as_str()
            )));
        }
        if record.lease.as_ref().map(|l| &l.owner) != Some(owner) {
            return Err(Error::Config(format!(
                "run '{run_id}' must be claimed before it is started"
            )));
        }
        let mode = record.mode.parse::<Mode>()?;
        let request = RunRequest {
            run_id: run_id.to_string(),
            task: record.task.clone(),
            workspace: PathBuf::from(&record.workspace),
        };
        let ctx = RunContext::new(self, &request, &control);
        record.status = RunStatus::Running;
        ctx.store().update_run(&record).await?;
        self.start(&ctx, record, mode).await
    }

    /// Announces a run just started and takes it to the end.
    async fn start(
        &self,
        ctx: &RunContext,
        record: RunRecord,
        mode: Mode,
    ) -> Result<RunOutcome, Error> {
        let request_task = ctx.task.clone();
        ctx.emit(EventKind::RunStarted {
            task: request_task.clone(),
            mode: mode.to_string(),
            workspace: record.workspace.clone(),
        })
        .await?;
        tracing::info!(task = %request_task, "run started");

        let mode = match mode {
            Mode::Auto => crate::strategy::auto::choose(ctx, self).await?,
            m => m,
        };
        self.drive(ctx, record, mode, None).await
    }

    /// Picks a stopped run up again from its last durable point: the latest saved plan, the
    /// journal of finished LLM and tool calls (reused, never repeated), the same workspace,
    /// and the same event log, whose sequence numbers go on without a gap. A run that was
    /// killed (status still `running` or `waiting`) or cancelled can be resumed.
    pub async fn resume(
        &self,
        run_id: &str,
        cancel: CancellationToken,
    ) -> Result<RunOutcome, Error> {
        self.resume_with(run_id, RunControl::cancel_only(cancel), None)
            .await
    }

    /// As [`Runtime::resume`], also suspendable (see [`RunControl`]). The run's lease is
    /// taken first, in one compare-and-set: a run another process holds is refused with
    /// [`Error::Leased`], unless its owner is `stale_owner`, an owner the caller proved gone
    /// (the domain cannot look at processes; the app can).
    pub async fn resume_with(
        &self,
        run_id: &str,
        control: RunControl,
        stale_owner: Option<String>,
    ) -> Result<RunOutcome, Error> {
        self.check_executors()?;
        let now = self.clock.now();
        let claim = LeaseClaim {
            owner: self.config.lease.owner.clone(),
            now,
            until: self.config.lease.until(now),
            stale_owner,
        };
        match self.store.acquire_lease(run_id, &claim).await? {
            LeaseOutcome::Acquired => {}
            LeaseOutcome::Held(lease) => {
                return Err(Error::Leased {
                    run_id: run_id.to_string(),
                    owner: lease.owner,
                    until: lease.until,
                })
            }
            LeaseOutcome::Unknown => return Err(Error::UnknownRun(run_id.to_string())),
        }
        let span = tracing::info_span!("run", run_id = %run_id, resumed = true);
        let body = |control: RunControl| self.resume_inner(run_id, control);
        self.owned(run_id, control, body).instrument(span).await
    }

    async fn resume_inner(&self, run_id: &str, control: RunControl) -> Result<RunOutcome, Error> {
        let mut record = self.existing_run(run_id).await?;
        let events = self.store.events(run_id, 0).await?;
        let last = events.last();
        let cancelled = matches!(
            last.map(|e| &e.kind),
            Some(EventKind::RunFailed {
                cancelled: true,
                ..
            })
        );
        if record.status == RunStatus::Completed
            || (last.is_some_and(|e| e.kind.is_final()) && !cancelled)
        {
            return Err(Error::Config(format!(
                "run '{run_id}' already ended ({}); there is nothing to resume",
                record.status.as_str()
            )));
        }
        if record.status == RunStatus::Queued || events.is_empty() {
            return Err(Error::Config(format!(
                "run '{run_id}' never started ({}); there is nothing to resume",
                record.status.as_str()
            )));
        }
        let last_seq = last.map_or(0, |e| e.seq);
        let mut usage = RunUsage::default();
        let mut chosen: Option<Mode> = None;
        let mut tool_steps: Vec<&str> = Vec::new();
        for e in &events {
            match &e.kind {
                EventKind::ToolCalled {
                    step_id: Some(step),
                    ..
                } => tool_steps.push(step.as_str()),
                EventKind::LlmCalled {
                    prompt_tokens,
                    completion_tokens,
                    cached_prompt_tokens,
                    ..
                } => usage.add(&crate::ports::llm::Usage {
                    prompt_tokens: *prompt_tokens,
                    completion_tokens: *completion_tokens,
                    cached_prompt_tokens: *cached_prompt_tokens,
                }),
                EventKind::ModeChosen { mode, .. } => chosen = mode.parse().ok(),
                _ => {}
            }
        }
        let journal = Journal::from_events(&events);
        let interrupted_calls = journal.interrupted();
        let request = RunRequest {
            run_id: run_id.to_string(),
            task: record.task.clone(),
            workspace: PathBuf::from(&record.workspace),
        };
        let ctx = RunContext::resumed(self, &request, &control, last_seq, usage, journal);
        for step in tool_steps {
            ctx.count_tool_call(step);
        }
        record.status = RunStatus::Running;
        record.finished_at = None;
        record.summary = None;
        record.error = None;
        ctx.store().update_run(&record).await?;
        ctx.emit(EventKind::RunResumed {
            after_seq: last_seq,
            interrupted_calls,
        })
        .await?;
        tracing::info!(after_seq = last_seq, "run resumed");
        let mode = match record.mode.parse::<Mode>()? {
            Mode::Auto => match chosen {
                Some(m) => m,
                None => crate::strategy::auto::choose(&ctx, self).await?,
            },
            m => m,
        };
        let mut plan = self.store.latest_plan(run_id).await?;
        if let (true, Some(p)) = (cancelled, plan.as_mut()) {
            reopen_after_cancel(p)?;
            ctx.save_plan(p).await?;
        }
        self.drive(&ctx, record, mode, plan).await
    }

    /// Plans (unless the run already has a plan), runs the scheduler, writes the summary and
    /// closes the run.
    async fn drive(
        &self,
        ctx: &RunContext,
        mut record: RunRecord,
        mode: Mode,
        plan: Option<Plan>,
    ) -> Result<RunOutcome, Error> {
        let mut strategy = strategy_for(mode, &self.config);
        let mut plan = match plan {
            Some(p) => p,
            None => {
                let InitialPlan {
                    plan,
                    source,
                    reason,
                } = strategy.initial_plan(ctx, self).await?;
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
                plan
            }
        };

        let end = scheduler::execute(ctx, self, strategy.as_mut(), &mut plan).await?;
        let stopped = match &end {
            LoopEnd::Stopped(reason) => Some(reason.clone()),
            LoopEnd::Finished => None,
        };
        // The outcome is settled before the summary is written: the summary is told it and
        // starts with a line built from the recorded statuses, so the two cannot disagree.
        let failure = stopped.clone().or_else(|| first_failure(&plan));
        let summary = crate::engine::summary::summarize(
            ctx,
            self,
            &plan,
            stopped.as_deref(),
            failure.as_deref(),
        )
        .await?;
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
                    cancelled: ctx.was_cancelled(),
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
            run_id: record.run_id.clone(),
            status,
            summary,
            error: failure,
            plan,
            usage,
        })
    }
}

/// Reopens what a cancellation ended: the in-flight steps (failed "cancelled") get their
/// attempt back, so a resumed run finds the attempt's journal; skipped steps wait again.
fn reopen_after_cancel(plan: &mut Plan) -> Result<(), Error> {
    let ids: Vec<String> = plan
        .steps()
        .iter()
        .filter(|s| s.interrupted())
        .map(|s| s.id.clone())
        .collect();
    for id in ids {
        plan.reopen(&id)?;
    }
    Ok(())
}

/// Why the run failed, from its plan: the first step that failed or was blocked.
fn first_failure(plan: &Plan) -> Option<String> {
    plan.steps()
        .iter()
        .enumerate()
        .find(|(_, s)| matches!(s.status(), StepStatus::Failed | StepStatus::Blocked))
        .map(|(i, s)| {
            format!(
                "step {i} (\"{}\") {}: {}",
                s.description,
                s.status(),
                s.error.as_deref().unwrap_or("no reason given")
            )
        })
}
