//! Starting, resuming and finishing runs: the entry points of [`Runtime`], from start to summary,
//! whatever the planning style. The only file that picks a strategy (`strategy::list`).
//!
//! ```text
//! run_started ─▶ [auto: mode_chosen] ─▶ plan (the style's planner, or the default plan)
//!             ─▶ scheduler (executor tool loops, verify, adapt, revise; journaled)
//!             ─▶ summary ─▶ run_completed | run_failed
//! ```

mod drive;
mod resume;

use std::path::PathBuf;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::engine::config::Mode;
use crate::engine::context::RunContext;
use crate::engine::lease::RunControl;
use crate::engine::runtime::{RunOutcome, RunRequest, Runtime};
use crate::error::Error;
use crate::model::event::{EventKind, RunUsage};
use crate::ports::{Lease, RunRecord, RunStatus};

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
        let span = crate::engine::trace::run_span(&run_id, "new");
        let body = |control: RunControl| self.run_inner(request, control);
        let outcome = self
            .owned(&run_id, control, body)
            .instrument(span.clone())
            .await;
        ended(&span, &self.config.trace, &outcome);
        outcome
    }

    /// Starts a run that waited in the work queue: `run_id` is stored as `queued` and this
    /// process holds its lease (it claimed it). Runs it as [`Runtime::run_with`] would,
    /// with the mode recorded at enqueue time.
    pub async fn run_queued(&self, run_id: &str, control: RunControl) -> Result<RunOutcome, Error> {
        self.check_executors()?;
        let span = crate::engine::trace::run_span(run_id, "queued");
        let body = |control: RunControl| self.queued_inner(run_id, control);
        let outcome = self
            .owned(run_id, control, body)
            .instrument(span.clone())
            .await;
        ended(&span, &self.config.trace, &outcome);
        outcome
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
            client: None,
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
        crate::engine::trace::continue_run_trace(self.span_contexts.as_ref(), &mut record);
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
        crate::engine::inputs::record(ctx).await?;

        // A style of the embedder's needs no choice of style.
        let mode = match mode {
            Mode::Auto if self.style.is_none() => crate::strategy::auto::choose(ctx, self).await?,
            m => m,
        };
        self.drive(ctx, record, mode, None).await
    }
}

/// Records how a run ended on its span (`engine::trace`).
fn ended(
    span: &tracing::Span,
    labels: &crate::engine::trace::TraceLabels,
    outcome: &Result<RunOutcome, Error>,
) {
    use crate::engine::trace::RunFailure;
    let failure = match outcome {
        Ok(outcome) if outcome.status == crate::ports::RunStatus::Completed => None,
        Ok(outcome) => Some(RunFailure {
            kind: "failed",
            reason: outcome
                .error
                .clone()
                .unwrap_or_else(|| outcome.status.as_str().to_string()),
        }),
        Err(e) => Some(RunFailure {
            kind: e.kind(),
            reason: e.to_string(),
        }),
    };
    crate::engine::trace::run_ended(span, labels, failure.as_ref());
}
