//! What every planning style shares: the executor cards a planner is shown, the default plan
//! used when a planner fails, building a plan from a planner's JSON steps, and the one
//! "ask for JSON, re-ask on an invalid answer, else fall back to the default plan" loop.

use serde_json::Value;

use crate::engine::context::RunContext;
use crate::engine::runtime::Runtime;
use crate::engine::structured::ask_json_shaped;
use crate::error::Error;
use crate::model::event::{EventKind, PlanSource};
use crate::model::plan::{Plan, Step};
use crate::ports::llm::{CallPurpose, ChatMessage};
use crate::prompts::{self, ExecutorCard};
use crate::strategy::revise::StepJson;
use crate::strategy::InitialPlan;

pub(crate) fn executor_cards(rt: &Runtime) -> Vec<ExecutorCard> {
    rt.executors
        .iter()
        .map(|e| ExecutorCard {
            kind: e
                .kinds
                .first()
                .cloned()
                .unwrap_or_else(|| e.name.to_uppercase()),
            description: e.description.clone(),
        })
        .collect()
}

/// The plan used when a planner fails (docs/design.md, "The flow style").
pub(crate) fn default_plan(ctx: &RunContext, reason: String) -> Result<InitialPlan, Error> {
    let plan = Plan::from_texts(
        "plan_1",
        prompts::default_plan_title(&ctx.task),
        ctx.task.clone(),
        &prompts::default_plan_steps(),
    )?;
    Ok(InitialPlan {
        plan,
        source: PlanSource::Default,
        reason: Some(reason),
    })
}

/// Says (an `error` event) that the planner listed `listed` steps, more than the cap `max`,
/// and only the first `max` were kept; nothing when it listed no more than `max`.
pub(crate) async fn report_truncation(
    ctx: &RunContext,
    listed: usize,
    max: usize,
) -> Result<(), Error> {
    if listed > max {
        ctx.emit(EventKind::Error {
            step_id: None,
            message: format!(
                "the planner listed {listed} steps, more than the plan-size cap of {max} \
                 (--max-plan-steps): kept the first {max}"
            ),
        })
        .await?;
    }
    Ok(())
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
    let title = if title.trim().is_empty() {
        prompts::default_plan_title(task)
    } else {
        title.trim().to_string()
    };
    let goal = if goal.trim().is_empty() {
        task.to_string()
    } else {
        goal.trim().to_string()
    };
    let mut plan = Plan::new("plan_1", title, goal);
    plan.language = language;
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
    plan.add_steps(steps).map_err(|e| e.to_string())?;
    Ok(plan)
}

/// What a style asks its planner for a first plan.
pub(crate) struct PlanRequest<'a> {
    /// Who is asking, in failure reasons ("the DAG planner").
    pub planner: &'a str,
    pub messages: Vec<ChatMessage>,
    /// The response format's name and JSON schema.
    pub schema: (&'a str, Value),
}

/// Asks the planner for a plan as JSON and builds it with `build`. An answer `build` refuses
/// is re-asked (up to `planner_attempts` turns) with `re_ask(problem)`; a planner that fails
/// or keeps answering badly gets the default plan, with the reason. Only a fatal error (the
/// run's store or the run itself stopped) is an `Err`.
pub(crate) async fn plan_from_planner(
    ctx: &RunContext,
    rt: &Runtime,
    request: PlanRequest<'_>,
    build: impl Fn(&Value) -> Result<Plan, String>,
    re_ask: impl Fn(&str) -> String,
) -> Result<InitialPlan, Error> {
    let PlanRequest {
        planner,
        mut messages,
        schema,
    } = request;
    let mut problem = String::from("the planner made no plan");
    for _ in 0..rt.config.planner_attempts.max(1) {
        let answer = match ask_json_shaped(
            ctx,
            "plan",
            rt.planner_llm.as_ref(),
            CallPurpose::Plan,
            messages,
            None,
            Some((schema.0, schema.1.clone())),
        )
        .await
        {
            Ok(a) => a,
            Err(e) => {
                let problem = e.recoverable()?;
                return default_plan(ctx, format!("{planner} failed: {problem}"));
            }
        };
        match build(&answer.value) {
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
        messages.push(ChatMessage::user(re_ask(&problem)));
    }
    default_plan(ctx, format!("{planner}'s plan was invalid: {problem}"))
}
