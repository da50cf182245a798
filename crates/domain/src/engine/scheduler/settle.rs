//! Steps settled: an attempt that failed ([`fail`]), steps blocked or skipped along the
//! graph's edges, or skipped because the run stops; each change goes through the step state
//! machine and is saved and announced.

use std::collections::HashSet;

use crate::engine::context::RunContext;
use crate::engine::graph::{settle_one, StepIndex};
use crate::error::Error;
use crate::model::event::EventKind;
use crate::model::plan::{Plan, StepStatus};

/// Settles steps that can no longer run: dependents of failed/blocked steps are blocked,
/// dependents of skipped steps and unmet conditions are skipped, rollbacks whose target did
/// not fail are skipped, and — for sequential styles — everything after a step given up on.
pub(super) async fn propagate(
    ctx: &RunContext,
    plan: &mut Plan,
    stop_on_give_up: bool,
    busy: &HashSet<String>,
    index: &mut StepIndex,
) -> Result<(), Error> {
    let given_up = |plan: &Plan, i: usize| {
        matches!(
            plan.steps()[i].status(),
            StepStatus::Failed | StepStatus::Blocked
        ) && !busy.contains(&plan.steps()[i].id)
    };
    // Fast path: nothing waits on an edge and nothing was given up on.
    let has_edges = plan.steps().iter().any(|s| {
        s.status() == StepStatus::NotStarted
            && (!s.depends_on.is_empty() || s.condition.is_some() || s.rollback_of.is_some())
    });
    let gave_up_any = stop_on_give_up && (0..plan.steps().len()).any(|i| given_up(plan, i));
    if !has_edges && !gave_up_any {
        return Ok(());
    }
    loop {
        index.refresh(plan);
        let change = settle_one(plan, stop_on_give_up, busy, index, &given_up);
        match change {
            Some((id, to, why)) => set_status(ctx, plan, &id, to, &why).await?,
            None => return Ok(()),
        }
    }
}

/// Moves a not-started step to skipped or blocked, with its event.
pub(super) async fn set_status(
    ctx: &RunContext,
    plan: &mut Plan,
    step_id: &str,
    to: StepStatus,
    reason: &str,
) -> Result<(), Error> {
    plan.end_step(step_id, to, reason)?;
    ctx.save_plan(plan).await?;
    let event = if to == StepStatus::Skipped {
        EventKind::StepSkipped {
            step_id: step_id.to_string(),
            reason: reason.to_string(),
        }
    } else {
        EventKind::StepFailed {
            step_id: step_id.to_string(),
            status: to,
            error: reason.to_string(),
            will_retry: false,
        }
    };
    ctx.emit(event).await?;
    Ok(())
}

/// Marks every step that has not started as skipped.
pub(super) async fn skip_remaining(
    ctx: &RunContext,
    plan: &mut Plan,
    reason: &str,
) -> Result<(), Error> {
    let pending: Vec<String> = plan
        .steps()
        .iter()
        .filter(|s| matches!(s.status(), StepStatus::NotStarted | StepStatus::InProgress))
        .map(|s| s.id.clone())
        .collect();
    if pending.is_empty() {
        return Ok(());
    }
    let cancelled = ctx.was_cancelled();
    for id in &pending {
        if cancelled {
            plan.interrupt(id, StepStatus::Skipped, reason)?;
        } else {
            plan.end_step(id, StepStatus::Skipped, reason)?;
        }
    }
    ctx.save_plan(plan).await?;
    for id in pending {
        ctx.emit(EventKind::StepSkipped {
            step_id: id,
            reason: reason.to_string(),
        })
        .await?;
    }
    Ok(())
}

/// What happens to a step that did not succeed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Retry {
    Yes,
    No,
    /// The run's cancellation cut it short: a resumed run opens it again.
    Interrupted,
}

/// Ends a step's attempt as `status` with its event.
pub(super) async fn fail(
    ctx: &RunContext,
    plan: &mut Plan,
    index: usize,
    status: StepStatus,
    reason: &str,
    then: Retry,
) -> Result<(), Error> {
    let step_id = plan.steps()[index].id.clone();
    if then == Retry::Interrupted {
        plan.interrupt(&step_id, status, reason)?;
    } else {
        plan.end_step(&step_id, status, reason)?;
    }
    ctx.save_plan(plan).await?;
    ctx.emit(EventKind::StepFailed {
        step_id,
        status,
        error: reason.to_string(),
        will_retry: then == Retry::Yes,
    })
    .await?;
    Ok(())
}
