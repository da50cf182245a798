//! The **plan-act** style (docs/design.md, "The plan-act style"): the planner answers JSON
//! `{title, goal, language, steps: [{id, description}]}`; an execution agent runs one step at
//! a time; the planner then revises only the unfinished steps, keeping completed ones and
//! their ids. It revises after a failure always (the adapt loop's re-plan), and after a
//! success only when the executor flagged `revise_plan` or the run is configured to revise
//! after every step. Revisions are capped per run.

use async_trait::async_trait;
use serde::Deserialize;

use crate::engine::context::{CallError, RunContext};
use crate::engine::scheduler::{InitialPlan, Revisions, StepReport, Strategy};
use crate::engine::structured::{ask_json_shaped, AskError};
use crate::error::Error;
use crate::model::event::{EventKind, PlanSource};
use crate::model::plan::{Plan, Step};
use crate::model::plan_check::check_step_texts;
use crate::ports::llm::{CallPurpose, ChatMessage};
use crate::prompts;
use crate::run::{Revise, Runtime};
use crate::strategy::flow::{default_plan, executor_cards};
use crate::strategy::revise::{parse_steps, revise_unfinished, StepJson};

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

/// Builds a plan from planner JSON; planner ids are kept when unique, else minted.
pub(crate) fn plan_from_json(
    task: &str,
    title: &str,
    goal: &str,
    language: Option<String>,
    specs: &[StepJson],
) -> Result<Plan, String> {
    if specs.is_empty() {
        return Err("the plan has no steps".to_string());
    }
    let mut plan = Plan {
        id: "plan_1".to_string(),
        title: if title.trim().is_empty() {
            prompts::default_plan_title(task)
        } else {
            title.trim().to_string()
        },
        goal: if goal.trim().is_empty() {
            task.to_string()
        } else {
            goal.trim().to_string()
        },
        language,
        steps: Vec::new(),
        version: 1,
        next_step_seq: 1,
    };
    let mut steps: Vec<Step> = Vec::with_capacity(specs.len());
    for spec in specs {
        if spec.description.trim().is_empty() {
            return Err("a step has an empty description".to_string());
        }
        let id = match &spec.id {
            Some(id) if !steps.iter().any(|s| &s.id == id) => id.clone(),
            Some(id) => return Err(format!("step id '{id}' appears twice")),
            None => String::new(),
        };
        let mut step = Step::new(id, &spec.description);
        step.depends_on = spec.depends_on.clone();
        step.fallback = spec.fallback.clone();
        step.condition = spec.condition.clone();
        step.rollback_of = spec.rollback_of.clone();
        steps.push(step);
    }
    plan.steps = steps;
    for i in 0..plan.steps.len() {
        if plan.steps[i].id.is_empty() {
            let id = plan.fresh_step_id();
            plan.steps[i].id = id;
        }
    }
    plan.validate_graph().map_err(|e| e.to_string())?;
    Ok(plan)
}

#[async_trait]
impl Strategy for PlanAct {
    async fn initial_plan(&mut self, ctx: &RunContext, rt: &Runtime) -> Result<InitialPlan, Error> {
        let max = rt.config.max_plan_steps.max(1);
        let mut messages = vec![
            ChatMessage::system(prompts::plan_act_system(&executor_cards(rt))),
            ChatMessage::user(prompts::plan_act_create(&ctx.task, max)),
        ];
        let mut problem = String::new();
        for _ in 0..rt.config.planner_attempts.max(1) {
            let answer = match ask_json_shaped(
                ctx,
                "plan",
                rt.planner_llm.as_ref(),
                CallPurpose::Plan,
                messages,
                None,
                Some(("plan", crate::strategy::response_schemas::plan_act(max))),
            )
            .await
            {
                Ok(a) => a,
                Err(AskError::Call(CallError::Store(e))) => return Err(e.into()),
                Err(e) => return default_plan(ctx, format!("the planner failed: {e}")),
            };
            let head: PlanJson = serde_json::from_value(answer.value.clone()).unwrap_or(PlanJson {
                title: String::new(),
                goal: String::new(),
                language: None,
            });
            let built = parse_steps(&answer.value)
                .and_then(|specs| {
                    plan_from_json(&ctx.task, &head.title, &head.goal, head.language, &specs)
                })
                .and_then(|plan| {
                    let texts: Vec<String> = plan.steps.iter().map(|s| s.display_text()).collect();
                    check_step_texts(&texts, Some(max))
                        .map(|()| plan)
                        .map_err(|problems| problems.join("; "))
                });
            match built {
                Ok(plan) => {
                    return Ok(InitialPlan {
                        plan,
                        source: PlanSource::Llm,
                        reason: None,
                    })
                }
                Err(e) => problem = e,
            }
            messages = answer.transcript;
            messages.push(ChatMessage::user(prompts::dag_invalid(&problem)));
        }
        default_plan(ctx, format!("the planner's plan was invalid: {problem}"))
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
            .steps
            .iter()
            .any(|s| s.status == crate::model::plan::StepStatus::NotStarted);
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
        let trigger = format!(
            "step '{}' (\"{}\") FAILED: {}",
            failed.step_id,
            failed.description,
            prompts::truncate_chars(&failed.text, 600)
        );
        revise_unfinished(
            ctx,
            rt,
            plan,
            prompts::plan_act_system(&executor_cards(rt)),
            &trigger,
            Some(&failed.step_id),
        )
        .await
    }
}
