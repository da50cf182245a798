//! One run from plan to outcome: plan (unless resumed with a plan), schedule, summarise,
//! close the run.

use crate::engine::config::Mode;
use crate::engine::context::RunContext;
use crate::engine::runtime::{RunOutcome, Runtime};
use crate::engine::scheduler::{self, LoopEnd};
use crate::error::Error;
use crate::model::event::EventKind;
use crate::model::plan::{Plan, StepStatus};
use crate::model::verification::Verification;
use crate::ports::{RunRecord, RunStatus};
use crate::strategy::list::strategy_for;
use crate::strategy::InitialPlan;

impl Runtime {
    /// Plans (unless the run already has a plan), runs the scheduler, writes the summary and
    /// closes the run.
    pub(super) async fn drive(
        &self,
        ctx: &RunContext,
        mut record: RunRecord,
        mode: Mode,
        plan: Option<Plan>,
    ) -> Result<RunOutcome, Error> {
        crate::engine::trace::run_started(ctx.trace_labels(), &mode.to_string(), &ctx.task);
        let mut strategy: Box<dyn crate::strategy::PlanningStrategy> = match &self.style {
            Some(make) => Box::new(crate::strategy::custom::Custom(make())),
            None => strategy_for(mode, &self.config),
        };
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
        // The run's tools are done: its shell sessions are killed and reaped before the
        // workspace is judged and recorded, so a command still running cannot change it
        // after the run-end checkpoint (docs/checkpoints.md).
        self.close_tools(&ctx.run_id).await;
        let stopped = match &end {
            LoopEnd::Stopped(reason) => Some(reason.clone()),
            LoopEnd::Finished => None,
        };
        // The outcome is settled before the summary is written: the summary is told it and
        // starts with a line built from the recorded statuses, so the two cannot disagree.
        let failure = stopped.clone().or_else(|| first_failure(&plan));
        let verification = if failure.is_none() {
            ctx.verified()
        } else {
            Verification {
                verified: false,
                detail: "the run did not complete".to_string(),
            }
        };
        let summary = crate::engine::summary::summarize(
            ctx,
            self,
            &plan,
            stopped.as_deref(),
            failure.as_deref(),
        )
        .await?;
        // A completed run says whether its answer was checked; not when the user switched
        // checking off (the JSON still says `verified: false`), nor for a failed run.
        let summary = if failure.is_none() && self.config.verification {
            format!(
                "{}\n\n{}",
                summary.trim_end(),
                crate::prompts::verification_line(&verification)
            )
        } else {
            summary
        };
        let files = crate::engine::inputs::finish(ctx).await;
        crate::engine::inputs::discard_copies(ctx).await;
        crate::engine::checkpoints::at_run_end(ctx, self).await?;
        let files = crate::engine::checkpoints::file_changes(ctx, self, files).await;
        let summary = with_files(summary, &files);
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
                    verified: verification.verified,
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
            files,
            verification,
        })
    }
}

/// The summary with the files the run changed appended (from the workspace, not from what
/// the model said).
fn with_files(summary: String, files: &crate::model::inputs::FileChanges) -> String {
    let listed = files.text();
    if listed.is_empty() {
        summary
    } else {
        format!(
            "{}

{listed}",
            summary.trim_end()
        )
    }
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
