//! The one scheduler behind every planning style.
//!
//! It is event-driven: steps run as futures in one [`FuturesUnordered`]; the moment one ends,
//! its outcome is applied (verify, adapt, let the strategy revise), statuses are propagated
//! along the graph, and every step that became ready is dispatched, up to the concurrency
//! limit. No super-step barrier and no polling, unless [`Schedule::Superstep`] is asked for
//! (for comparison), in which case a new wave starts only when the whole previous wave ended.
//!
//! Adapt loop for a step that did not succeed (docs/design.md, "The adapt loop"): retry with backoff (`retries`,
//! `retry_delay` × attempt), then the step's `fallback`, then a re-plan by the strategy, then
//! give up: the step stays `failed` (or `blocked` when it could not run at all) and what
//! depends on it is blocked. Every branch emits a `step_adapted` event.

use std::collections::{HashMap, HashSet};

use futures_util::future::BoxFuture;
use futures_util::stream::{FuturesUnordered, StreamExt};

use crate::engine::config::Schedule;
use crate::engine::context::RunContext;
use crate::engine::executor::agent::ExecutorAgent;
use crate::engine::executor::{run_step, StepEnd};
use crate::engine::graph::{ready_steps, settle_one, StepIndex};
use crate::engine::runtime::Runtime;
use crate::engine::structured::ask_json;
use crate::error::{Error, StoreError};
use crate::model::event::{AdaptAction, EventKind};
use crate::model::plan::{Plan, StepStatus};
use crate::model::step_input::StepInput;
use crate::ports::llm::CallPurpose;
use crate::ports::llm::ChatMessage;
use crate::prompts;
use crate::strategy::{PlanningStrategy, Revisions, StepReport};

/// How the scheduler ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LoopEnd {
    /// No step can run any more.
    Finished,
    /// Cancelled, out of budget, or stopped by the strategy.
    Stopped(String),
}

enum Task {
    Done {
        step_id: String,
        end: Result<StepEnd, StoreError>,
    },
    /// A retry's backoff is over.
    Wake { step_id: String },
}

/// Picks the executor for a step kind: a matching agent, else the first executor.
pub(crate) fn route<'a>(executors: &'a [ExecutorAgent], kind: Option<&str>) -> &'a ExecutorAgent {
    kind.and_then(|k| executors.iter().find(|e| e.serves(k)))
        .unwrap_or(&executors[0])
}

struct Scheduler<'a> {
    ctx: &'a RunContext,
    rt: &'a Runtime,
    /// Steps running or waiting for a retry.
    busy: HashSet<String>,
    /// Failed attempts since the step was last reset by a fallback or re-plan.
    tries: HashMap<String, u32>,
    used_fallback: HashSet<String>,
    revisions: Revisions,
    index: StepIndex,
}

/// Runs `plan` to the end with `strategy`.
pub(crate) async fn execute(
    ctx: &RunContext,
    rt: &Runtime,
    strategy: &mut dyn PlanningStrategy,
    plan: &mut Plan,
) -> Result<LoopEnd, Error> {
    let cfg = &rt.config;
    let parallel = strategy.parallel();
    let limit = if parallel { cfg.parallelism.max(1) } else { 1 };
    let superstep = parallel && cfg.schedule == Schedule::Superstep;
    let mut s = Scheduler {
        ctx,
        rt,
        busy: HashSet::new(),
        tries: HashMap::new(),
        used_fallback: HashSet::new(),
        revisions: Revisions {
            used: 0,
            max: cfg.max_revisions,
        },
        index: StepIndex::default(),
    };
    let mut running: FuturesUnordered<BoxFuture<'_, Task>> = FuturesUnordered::new();
    // A resumed run goes on with the steps that were in progress, in the same attempt, so
    // the executor finds that attempt's journal.
    let in_progress: Vec<usize> = (0..plan.steps().len())
        .filter(|&i| plan.steps()[i].status() == StepStatus::InProgress)
        .collect();
    for index in in_progress {
        running.push(s.continue_step(plan, index));
    }
    let mut stopped: Option<String> = None;
    loop {
        if stopped.is_none() {
            stopped = ctx.stop_reason().or_else(|| strategy.should_stop());
        }
        if stopped.is_none() {
            propagate(ctx, plan, strategy.stop_on_give_up(), &s.busy, &mut s.index).await?;
            let wave_open = !superstep || running.is_empty();
            if wave_open {
                s.index.refresh(plan);
                for index in ready_steps(plan, parallel, &s.busy, &s.index) {
                    if running.len() >= limit {
                        break;
                    }
                    // Await first: `push` borrows `running`, which must not live across an
                    // await (the run's future has to stay `Send`).
                    let step = s.start(plan, index).await?;
                    running.push(step);
                }
            }
        }
        let Some(task) = running.next().await else {
            break;
        };
        match task {
            Task::Wake { step_id } => {
                s.busy.remove(&step_id);
            }
            Task::Done { step_id, end } => {
                s.busy.remove(&step_id);
                let end = end?;
                if let Some(retry) = s.finish(strategy, plan, &step_id, end).await? {
                    running.push(retry);
                }
            }
        }
    }
    if let Some(reason) = stopped.or_else(|| ctx.stop_reason()) {
        skip_remaining(ctx, plan, &reason).await?;
        return Ok(LoopEnd::Stopped(reason));
    }
    // Whatever is still waiting could never become ready.
    let stranded: Vec<String> = plan
        .steps()
        .iter()
        .filter(|st| st.status() == StepStatus::NotStarted)
        .map(|st| st.id.clone())
        .collect();
    for id in stranded {
        set_status(
            ctx,
            plan,
            &id,
            StepStatus::Blocked,
            "its dependencies can never be satisfied",
        )
        .await?;
    }
    Ok(LoopEnd::Finished)
}

impl<'a> Scheduler<'a> {
    /// Marks step `index` in progress and returns the future that runs it.
    async fn start(&mut self, plan: &mut Plan, index: usize) -> Result<BoxFuture<'a, Task>, Error> {
        let step_id = plan.steps()[index].id.clone();
        plan.transition(&step_id, StepStatus::InProgress)?;
        self.ctx.save_plan(plan).await?;
        let agent = route(&self.rt.executors, plan.steps()[index].kind.as_deref());
        self.ctx
            .emit(EventKind::StepStarted {
                step_id,
                index,
                description: plan.steps()[index].description.clone(),
                executor: agent.name.clone(),
                attempt: plan.steps()[index].attempts(),
            })
            .await?;
        Ok(self.continue_step(plan, index))
    }

    /// The future that runs step `index`, already in progress: just started, or left in
    /// progress by a run that is being resumed.
    fn continue_step(&mut self, plan: &Plan, index: usize) -> BoxFuture<'a, Task> {
        let step_id = plan.steps()[index].id.clone();
        let agent = route(&self.rt.executors, plan.steps()[index].kind.as_deref());
        self.busy.insert(step_id.clone());
        let input = StepInput::new(plan, index, self.rt.config.limits.max_dependency_chars);
        let (ctx, limits) = (self.ctx, &self.rt.config.limits);
        let route_tools = self.rt.config.route_tools;
        Box::pin(async move {
            let end = run_step(ctx, limits, agent, &input, route_tools).await;
            Task::Done { step_id, end }
        })
    }

    /// Applies a step's outcome; returns a backoff timer when the step will be retried.
    async fn finish(
        &mut self,
        strategy: &mut dyn PlanningStrategy,
        plan: &mut Plan,
        step_id: &str,
        end: StepEnd,
    ) -> Result<Option<BoxFuture<'a, Task>>, Error> {
        let Some(index) = plan.index_of(step_id) else {
            return Ok(None);
        };
        let (failure, status) = match end {
            StepEnd::Completed {
                result,
                revise_plan,
                attachments,
            } => match self.verify(plan, index, &result).await? {
                None => {
                    plan.complete_step(step_id, result.clone(), attachments)?;
                    self.ctx.save_plan(plan).await?;
                    self.ctx
                        .emit(EventKind::StepCompleted {
                            step_id: step_id.to_string(),
                            result: result.clone(),
                        })
                        .await?;
                    self.tries.remove(step_id);
                    let report = StepReport {
                        step_id: step_id.to_string(),
                        description: plan.steps()[index].description.clone(),
                        success: true,
                        text: result,
                        revise_requested: revise_plan,
                    };
                    self.after_step(strategy, plan, &report).await?;
                    return Ok(None);
                }
                Some(rejection) => (rejection, StepStatus::Failed),
            },
            StepEnd::Cancelled => {
                fail(
                    self.ctx,
                    plan,
                    index,
                    StepStatus::Failed,
                    "cancelled",
                    Retry::Interrupted,
                )
                .await?;
                return Ok(None);
            }
            StepEnd::Failed(reason) => (reason, StepStatus::Failed),
            StepEnd::Errored(reason) => (reason, StepStatus::Blocked),
        };
        self.adapt(strategy, plan, index, failure, status).await
    }

    /// The optional verifier: `Some(reason)` when it rejects the claimed result.
    async fn verify(
        &mut self,
        plan: &Plan,
        index: usize,
        result: &str,
    ) -> Result<Option<String>, Error> {
        if !self.rt.config.verify {
            return Ok(None);
        }
        let step = &plan.steps()[index];
        let messages = vec![
            ChatMessage::system(prompts::verify_system()),
            ChatMessage::user(prompts::verify_step(
                &self.ctx.task,
                &step.display_text(),
                &prompts::truncate_chars(result, 2000),
            )),
        ];
        let scope = format!(
            "verify:{}:{}",
            plan.steps()[index].id,
            plan.steps()[index].attempts()
        );
        let verdict = ask_json(
            self.ctx,
            &scope,
            self.rt.planner_llm.as_ref(),
            CallPurpose::Other,
            messages,
            Some(&step.id),
        )
        .await;
        let (ok, reason) = match verdict {
            Ok(answer) => (
                answer.value["ok"].as_bool().unwrap_or(true),
                answer.value["reason"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            ),
            Err(e) => (
                true,
                format!(
                    "verifier unavailable ({}); result accepted",
                    e.recoverable()?
                ),
            ),
        };
        self.ctx
            .emit(EventKind::StepVerified {
                step_id: step.id.clone(),
                ok,
                reason: reason.clone(),
            })
            .await?;
        Ok((!ok).then(|| format!("the verifier rejected the result: {reason}")))
    }

    /// Retry, fallback, re-plan, give up — in that order.
    async fn adapt(
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

    async fn after_step(
        &mut self,
        strategy: &mut dyn PlanningStrategy,
        plan: &mut Plan,
        report: &StepReport,
    ) -> Result<(), Error> {
        if self.ctx.cancel.is_cancelled() {
            return Ok(());
        }
        if let Some(why) = strategy
            .after_step(self.ctx, self.rt, plan, report, &mut self.revisions)
            .await?
        {
            self.plan_changed(plan, why).await?;
        }
        Ok(())
    }

    async fn plan_changed(&mut self, plan: &Plan, reason: String) -> Result<(), Error> {
        self.ctx.save_plan(plan).await?;
        self.ctx
            .emit(EventKind::PlanUpdated {
                plan: plan.clone(),
                reason,
            })
            .await?;
        Ok(())
    }
}

/// Settles steps that can no longer run: dependents of failed/blocked steps are blocked,
/// dependents of skipped steps and unmet conditions are skipped, rollbacks whose target did
/// not fail are skipped, and — for sequential styles — everything after a step given up on.
async fn propagate(
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
async fn set_status(
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

/// What happens to a step that did not succeed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Retry {
    Yes,
    No,
    /// The run's cancellation cut it short: a resumed run opens it again.
    Interrupted,
}

async fn fail(
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

/// Marks every step that has not started as skipped.
async fn skip_remaining(ctx: &RunContext, plan: &mut Plan, reason: &str) -> Result<(), Error> {
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
