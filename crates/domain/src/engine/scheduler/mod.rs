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

mod adapt;
mod settle;

use self::settle::{fail, propagate, set_status, skip_remaining, Retry};
use crate::engine::checkpoints;
use crate::engine::config::Schedule;
use crate::engine::context::RunContext;
use crate::engine::executor::agent::ExecutorAgent;
use crate::engine::executor::{run_step, StepEnd, StepSetup};
use crate::engine::graph::{ready_steps, StepIndex};
use crate::engine::runtime::Runtime;
use crate::engine::verification::check_then_verify;
use crate::error::{Error, StoreError};
use crate::model::event::EventKind;
use crate::model::plan::{Plan, StepStatus};
use crate::model::step_input::{InputBudget, StepInput};
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
    /// Steps whose last attempt's answer was rejected (by the check of the answer or the
    /// verifier): their retry is told why; any other retry starts from the step alone.
    rejected: HashSet<String>,
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
        rejected: HashSet::new(),
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
        let limits = &self.rt.config.limits;
        let budget = InputBudget {
            result_chars: limits.max_dependency_chars,
            total_chars: limits.max_earlier_chars,
        };
        let mut input = StepInput::new(plan, index, &self.ctx.facts(), budget);
        if self.rejected.contains(&step_id) {
            input.rejection = input.step.error.clone();
        }
        let (ctx, rt) = (self.ctx, self.rt);
        let setup = StepSetup {
            limits: &self.rt.config.limits,
            route_tools: self.rt.config.route_tools,
            actions: self.rt.config.actions,
        };
        let attempt = plan.steps()[index].attempts();
        Box::pin(async move {
            // The workspace as this attempt found it (docs/checkpoints.md).
            if let Err(e) = checkpoints::before_attempt(ctx, rt, &step_id, attempt).await {
                return Task::Done {
                    step_id,
                    end: Err(e),
                };
            }
            let end = run_step(ctx, setup, agent, &input).await;
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
        self.rejected.remove(step_id);
        let (failure, status) = match end {
            StepEnd::Completed {
                result,
                revise_plan,
                attachments,
            } => match check_then_verify(self.ctx, self.rt, plan, index, &result, &self.busy)
                .await?
            {
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
                Some(rejection) => {
                    self.rejected.insert(step_id.to_string());
                    (rejection, StepStatus::Failed)
                }
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
