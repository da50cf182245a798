//! The adapt loop for a step that did not succeed (docs/design.md, "The adapt loop"): retry
//! with backoff, then the step's fallback, then a re-plan by the strategy, then give up.

use futures_util::future::BoxFuture;

use super::settle::{fail, Retry};
use super::{Scheduler, Task};
use crate::error::Error;
use crate::model::event::{AdaptAction, EventKind};
use crate::model::plan::{Plan, StepStatus};
use crate::strategy::{PlanningStrategy, StepReport};

impl<'a> Scheduler<'a> {
    /// Retry, fallback, re-plan, give up — in that order.
    pub(super) async fn adapt(
        &mut self,
        strategy: &mut dyn PlanningStrategy,
        plan: &mut Plan,
        index: usize,
        reason: String,
        status: StepStatus,
    ) -> Result<Option<BoxFuture<'a, Task>>, Error> {
        let cfg = &self.rt.config;
        let step_id = plan.steps()[index].id.clone();
        let tries = self.tries.entry(step_id.clone()).or_insert(0);
        *tries += 1;
        let tries = *tries;
        let stopping = self.ctx.cancel.is_cancelled();
        let retry = tries <= cfg.retries && !stopping;
        let then = if retry { Retry::Yes } else { Retry::No };
        fail(self.ctx, plan, index, status, &reason, then).await?;
        if stopping {
            return Ok(None);
        }
        if retry {
            let delay = cfg.retry_delay.saturating_mul(tries);
            self.ctx
                .emit(EventKind::StepAdapted {
                    step_id: step_id.clone(),
                    action: AdaptAction::Retry,
                    detail: format!(
                        "retry {tries} of {} in {} ms",
                        cfg.retries,
                        delay.as_millis()
                    ),
                })
                .await?;
            plan.transition(&step_id, StepStatus::NotStarted)?;
            self.ctx.save_plan(plan).await?;
            self.busy.insert(step_id.clone());
            let cancel = self.ctx.cancel.clone();
            return Ok(Some(Box::pin(async move {
                if !delay.is_zero() {
                    tokio::select! {
                        _ = tokio::time::sleep(delay) => {}
                        _ = cancel.cancelled() => {}
                    }
                }
                Task::Wake { step_id }
            })));
        }
        if let Some(fallback) = plan.steps()[index].fallback.clone() {
            if self.used_fallback.insert(step_id.clone()) {
                self.tries.remove(&step_id);
                self.ctx
                    .emit(EventKind::StepAdapted {
                        step_id: step_id.clone(),
                        action: AdaptAction::Fallback,
                        detail: fallback.clone(),
                    })
                    .await?;
                plan.transition(&step_id, StepStatus::NotStarted)?;
                let step = &mut plan.steps_mut()[index];
                step.notes = format!("fallback for: {}", step.description);
                step.description = fallback;
                step.fallback = None;
                self.ctx.save_plan(plan).await?;
                return Ok(None);
            }
        }
        let report = StepReport {
            step_id: step_id.clone(),
            description: plan.steps()[index].description.clone(),
            success: false,
            text: reason.clone(),
            revise_requested: false,
        };
        if let Some(why) = strategy
            .replan(self.ctx, self.rt, plan, &report, &mut self.revisions)
            .await?
        {
            self.tries.remove(&step_id);
            self.ctx
                .emit(EventKind::StepAdapted {
                    step_id: step_id.clone(),
                    action: AdaptAction::Replan,
                    detail: why.clone(),
                })
                .await?;
            self.plan_changed(plan, why).await?;
            return Ok(None);
        }
        self.ctx
            .emit(EventKind::StepAdapted {
                step_id,
                action: AdaptAction::GiveUp,
                detail: reason,
            })
            .await?;
        self.after_step(strategy, plan, &report).await?;
        Ok(None)
    }
}
