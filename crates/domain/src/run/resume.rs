//! Resuming a stopped run from its last durable point (docs/durability.md).

use std::path::PathBuf;

use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::engine::config::Mode;
use crate::engine::context::RunContext;
use crate::engine::journal::Journal;
use crate::engine::lease::RunControl;
use crate::engine::runtime::{RunOutcome, RunRequest, Runtime};
use crate::error::Error;
use crate::model::event::{EventKind, RunUsage};
use crate::model::plan::Plan;
use crate::ports::{LeaseClaim, LeaseOutcome, RunStatus};

impl Runtime {
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
        let span = crate::engine::trace::run_span(run_id, "resumed");
        let body = |control: RunControl| self.resume_inner(run_id, control);
        let outcome = self
            .owned(run_id, control, body)
            .instrument(span.clone())
            .await;
        super::ended(&span, &self.config.trace, &outcome);
        outcome
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
        // Its spans link to those of the life that was interrupted.
        crate::engine::trace::continue_run_trace(self.span_contexts.as_ref(), &mut record);
        ctx.store().update_run(&record).await?;
        ctx.emit(EventKind::RunResumed {
            after_seq: last_seq,
            interrupted_calls,
        })
        .await?;
        tracing::info!(after_seq = last_seq, "run resumed");
        crate::engine::inputs::reload(&ctx, &events).await?;
        let mode = match record.mode.parse::<Mode>()? {
            Mode::Auto if self.style.is_none() => match chosen {
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
