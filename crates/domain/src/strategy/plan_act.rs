//! The **plan-act** style (docs/design.md, "The plan-act style"): the planner answers JSON
//! `{title, goal, language, steps: [{id, description}]}`; an execution agent runs one step at
//! a time; the planner then revises only the unfinished steps, keeping completed ones and
//! their ids. It revises after a failure always (the adapt loop's re-plan), and after a
//! success only when the executor flagged `revise_plan` or the run is configured to revise
//! after every step. Revisions are capped per run.

use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use serde::Deserialize;

use serde_json::Value;

use crate::engine::config::Revise;
use crate::engine::context::RunContext;
use crate::engine::runtime::Runtime;
use crate::error::Error;
use crate::model::event::{EventKind, PlanSource};
use crate::model::plan::Plan;
use crate::model::plan_check::check_step_texts;
use crate::ports::llm::ChatMessage;
use crate::prompts;
use crate::strategy::planner::{
    executor_cards, plan_from_json, plan_from_planner, report_truncation, PlanRequest,
};
use crate::strategy::response_schemas;
use crate::strategy::revise::{parse_steps, replan_after_failure, revise_unfinished};
use crate::strategy::{InitialPlan, PlanningStrategy, Revisions, StepReport};

#[derive(Debug, Default)]
pub(crate) struct PlanAct;

#[derive(Debug, Deserialize)]
struct PlanJson {
    #[serde(default)]
    title: String,
    #[serde(default)]
    goal: String,
    #[serde(default)]
    language: Option<String>,
}

/// The planner's JSON as a plan, or why it is not one: its steps checked as flow checks a
/// `planning` call's (at most `max`, no junk, no duplicates).
/// A list over `max` keeps its first `max` steps; `listed` is set to how many there were.
fn build(task: &str, value: &Value, max: usize, listed: &AtomicUsize) -> Result<Plan, String> {
    let head: PlanJson = serde_json::from_value(value.clone()).unwrap_or(PlanJson {
        title: String::new(),
        goal: String::new(),
        language: None,
    });
    let plan = parse_steps(value).and_then(|mut specs| {
        listed.store(specs.len(), Ordering::Relaxed);
        specs.truncate(max);
        plan_from_json(task, &head.title, &head.goal, head.language, &specs)
    })?;
    let texts: Vec<String> = plan.steps().iter().map(|s| s.display_text()).collect();
    check_step_texts(&texts, Some(max)).map_err(|problems| problems.join("; "))?;
    Ok(plan)
}

#[async_trait]
impl PlanningStrategy for PlanAct {
    async fn initial_plan(&mut self, ctx: &RunContext, rt: &Runtime) -> Result<InitialPlan, Error> {
        let max = rt.config.max_plan_steps.max(1);
        let request = PlanRequest {
            planner: "the planner",
            messages: vec![
                ChatMessage::system(prompts::plan_act_system(&executor_cards(rt))),
                ChatMessage::user(prompts::plan_act_create(&ctx.task, max)),
            ],
            schema: ("plan", response_schemas::plan_act(max)),
        };
        let listed = AtomicUsize::new(0);
        let build = |value: &Value| build(&ctx.task, value, max, &listed);
        let plan = plan_from_planner(ctx, rt, request, build, prompts::plan_invalid).await?;
        if plan.source == PlanSource::Llm {
            report_truncation(ctx, listed.load(Ordering::Relaxed), max).await?;
        }
        Ok(plan)
    }

    async fn after_step(
        &mut self,
        ctx: &RunContext,
        rt: &Runtime,
        plan: &mut Plan,
        report: &StepReport,
        revisions: &mut Revisions,
    ) -> Result<Option<String>, Error> {
        let pending = plan
            .steps()
            .iter()
            .any(|s| s.status() == crate::model::plan::StepStatus::NotStarted);
        let wanted = report.success
            && (report.revise_requested || (rt.config.revise == Revise::EveryStep && pending));
        if !wanted {
            return Ok(None);
        }
        if !revisions.take() {
            ctx.emit(EventKind::Error {
                step_id: Some(report.step_id.clone()),
                message: format!(
                    "revision limit of {} reached; keeping the plan as it is",
                    revisions.max
                ),
            })
            .await?;
            return Ok(None);
        }
        let trigger = format!(
            "step '{}' (\"{}\") completed with result: {}",
            report.step_id,
            report.description,
            prompts::truncate_chars(&report.text, 600)
        );
        revise_unfinished(
            ctx,
            rt,
            plan,
            prompts::plan_act_system(&executor_cards(rt)),
            &trigger,
            None,
        )
        .await
    }

    async fn replan(
        &mut self,
        ctx: &RunContext,
        rt: &Runtime,
        plan: &mut Plan,
        failed: &StepReport,
        revisions: &mut Revisions,
    ) -> Result<Option<String>, Error> {
        if !revisions.take() {
            return Ok(None);
        }
        replan_after_failure(
            ctx,
            rt,
            plan,
            prompts::plan_act_system(&executor_cards(rt)),
            "step",
            failed,
        )
        .await
    }
}
