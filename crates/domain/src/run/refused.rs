//! A run that cannot start its work: the task asks to change a file the workspace does not
//! hold (docs/security.md, "Input files"). It ends `failed` at once with that reason, before
//! any plan or LLM call, with an empty plan.

use crate::engine::context::RunContext;
use crate::engine::runtime::{RunOutcome, Runtime};
use crate::error::Error;
use crate::model::event::EventKind;
use crate::model::inputs::FileChanges;
use crate::model::plan::Plan;
use crate::ports::{RunRecord, RunStatus};

impl Runtime {
    /// Ends the run `failed` for `reason`, before it planned anything.
    pub(super) async fn refuse_task(
        &self,
        ctx: &RunContext,
        mut record: RunRecord,
        reason: String,
    ) -> Result<RunOutcome, Error> {
        let plan = Plan::new("plan_1", "Not started", ctx.task.clone());
        let summary = format!(
            "{}\n\nNothing was done: {reason}.",
            crate::prompts::outcome_line(&plan, Some(&reason))
        );
        let usage = ctx.usage();
        ctx.emit(EventKind::RunFailed {
            reason: reason.clone(),
            summary: summary.clone(),
            usage,
            cancelled: false,
        })
        .await?;
        record.status = RunStatus::Failed;
        record.finished_at = Some(ctx.now());
        record.summary = Some(summary.clone());
        record.error = Some(reason.clone());
        record.usage = usage;
        ctx.store().update_run(&record).await?;
        tracing::info!(%reason, "run refused");
        Ok(RunOutcome {
            run_id: record.run_id.clone(),
            status: RunStatus::Failed,
            summary,
            error: Some(reason),
            plan,
            usage,
            files: FileChanges::default(),
        })
    }
}
