//! The **flow** style (seeds 000 and 002): one upfront plan made through the `planning`
//! tool, steps run in order, each routed by its `[KIND]` tag to an executor, then a summary.
//!
//! OpenManus faults fixed here: a step is completed only by `complete_step` with
//! success=true (never merely because the agent returned); the turn budget is per step; a
//! failing step ends the run clearly instead of being marked done; the summary sees every
//! step's result and has two fallbacks.

use crate::error::{Error, StoreError};
use crate::event::{EventKind, PlanSource};
use crate::executor::{run_step, ExecutorAgent, StepEnd};
use crate::llm::{CallPurpose, ChatMessage, ChatRequest, ToolChoice};
use crate::plan::{Plan, StepStatus};
use crate::planning_tool::{PlanningTool, PLANNING};
use crate::prompts::{self, ExecutorCard};
use crate::run::{CallError, RunContext};
use crate::runtime::Runtime;

/// How the step loop ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LoopEnd {
    /// Every step ran; `failure` names the first step that did not complete, if any.
    Finished {
        failure: Option<String>,
    },
    Cancelled,
}

/// Asks the planner for a plan through the `planning` tool. Any failure gives the default plan.
pub(crate) async fn create_plan(
    ctx: &RunContext,
    rt: &Runtime,
    plan_id: String,
) -> Result<(Plan, PlanSource, Option<String>), Error> {
    let cards: Vec<ExecutorCard> = rt
        .executors
        .iter()
        .map(|e| ExecutorCard {
            kind: e
                .kinds
                .first()
                .cloned()
                .unwrap_or_else(|| e.name.to_uppercase()),
            description: e.description.clone(),
        })
        .collect();
    let mut tool = PlanningTool::new(plan_id.clone(), ctx.task.clone());
    let mut messages = vec![
        ChatMessage::system(prompts::planner_system(&cards)),
        ChatMessage::user(prompts::planner_user(&ctx.task)),
    ];
    let mut last_problem = String::from("the planner made no plan");
    for _attempt in 0..rt.config.planner_attempts.max(1) {
        let request = ChatRequest::new(CallPurpose::Plan, messages.clone())
            .with_tools(vec![PlanningTool::schema()], ToolChoice::Auto);
        let reply = match ctx.chat(rt.planner_llm.as_ref(), request, None).await {
            Ok(r) => r,
            Err(CallError::Llm(e)) => {
                last_problem = format!("the planner LLM call failed: {e}");
                break;
            }
            Err(e) => return Err(e.into()),
        };
        messages.push(ChatMessage::from_reply(&reply));
        let mut errors = Vec::new();
        for call in &reply.tool_calls {
            let result = if call.name == PLANNING {
                tool.call(&call.arguments)
            } else {
                Err(format!(
                    "Error: unknown tool '{}'; only `planning` is available while planning",
                    call.name
                ))
            };
            let text = match result {
                Ok(t) => t,
                Err(e) => {
                    errors.push(e.clone());
                    e
                }
            };
            messages.push(ChatMessage::tool_result(&call.id, text));
        }
        if let Some(plan) = tool.active_plan() {
            if !plan.steps.is_empty() {
                let plan = tool
                    .take_active_plan()
                    .ok_or_else(|| Error::Config("active plan vanished".to_string()))?;
                return Ok((plan, PlanSource::Llm, None));
            }
        }
        last_problem = if reply.tool_calls.is_empty() {
            "the planner answered without calling the `planning` tool".to_string()
        } else if errors.is_empty() {
            "the planner's calls did not create a plan".to_string()
        } else {
            format!("the planner's call was invalid: {}", errors.join("; "))
        };
        messages.push(ChatMessage::user(prompts::planner_retry(&last_problem)));
    }
    let plan = Plan::from_texts(
        plan_id,
        prompts::default_plan_title(&ctx.task),
        ctx.task.clone(),
        &prompts::default_plan_steps(),
    )?;
    Ok((plan, PlanSource::Default, Some(last_problem)))
}

/// Picks the executor for a step kind: a matching agent, else the first executor.
pub(crate) fn route<'a>(executors: &'a [ExecutorAgent], kind: Option<&str>) -> &'a ExecutorAgent {
    kind.and_then(|k| executors.iter().find(|e| e.serves(k)))
        .unwrap_or(&executors[0])
}

/// Runs the steps of a flat plan in order until all are done or one ends the run.
pub(crate) async fn run_steps(
    ctx: &RunContext,
    rt: &Runtime,
    plan: &mut Plan,
) -> Result<LoopEnd, Error> {
    loop {
        if ctx.cancel.is_cancelled() {
            skip_remaining(ctx, plan, "the run was cancelled").await?;
            return Ok(LoopEnd::Cancelled);
        }
        let Some(index) = plan
            .steps
            .iter()
            .position(|s| matches!(s.status, StepStatus::NotStarted | StepStatus::InProgress))
        else {
            return Ok(LoopEnd::Finished { failure: None });
        };
        let agent = route(&rt.executors, plan.steps[index].kind.as_deref());
        let step_id = plan.steps[index].id.clone();
        let max_attempts = rt.config.step_attempts.max(1);
        let failure: Option<String> = loop {
            if plan.steps[index].status == StepStatus::NotStarted {
                plan.transition(&step_id, StepStatus::InProgress)?;
            }
            ctx.save_plan(plan).await?;
            let attempt = plan.steps[index].attempts;
            ctx.emit(EventKind::StepStarted {
                step_id: step_id.clone(),
                index,
                description: plan.steps[index].description.clone(),
                executor: agent.name.clone(),
                attempt,
            })
            .await?;
            let end = run_step(ctx, &rt.config.limits, agent, plan, index).await?;
            match end {
                StepEnd::Completed(result) => {
                    plan.transition(&step_id, StepStatus::Completed)?;
                    plan.steps[index].result = Some(result.clone());
                    plan.steps[index].error = None;
                    ctx.save_plan(plan).await?;
                    ctx.emit(EventKind::StepCompleted {
                        step_id: step_id.clone(),
                        result,
                    })
                    .await?;
                    break None;
                }
                StepEnd::Failed(reason) => {
                    fail_step(ctx, plan, index, StepStatus::Failed, &reason, false).await?;
                    break Some(step_failure(plan, index, &reason));
                }
                StepEnd::Cancelled => {
                    fail_step(ctx, plan, index, StepStatus::Failed, "cancelled", false).await?;
                    skip_remaining(ctx, plan, "the run was cancelled").await?;
                    return Ok(LoopEnd::Cancelled);
                }
                StepEnd::Errored(reason) => {
                    let retry = attempt < max_attempts;
                    fail_step(ctx, plan, index, StepStatus::Blocked, &reason, retry).await?;
                    if retry {
                        plan.transition(&step_id, StepStatus::NotStarted)?;
                        continue;
                    }
                    break Some(step_failure(plan, index, &reason));
                }
            }
        };
        if let Some(failure) = failure {
            skip_remaining(
                ctx,
                plan,
                &format!("an earlier step did not complete: {failure}"),
            )
            .await?;
            return Ok(LoopEnd::Finished {
                failure: Some(failure),
            });
        }
    }
}

fn step_failure(plan: &Plan, index: usize, reason: &str) -> String {
    let step = &plan.steps[index];
    format!(
        "step {index} (\"{}\") {}: {reason}",
        step.description, step.status
    )
}

async fn fail_step(
    ctx: &RunContext,
    plan: &mut Plan,
    index: usize,
    status: StepStatus,
    reason: &str,
    will_retry: bool,
) -> Result<(), Error> {
    let step_id = plan.steps[index].id.clone();
    plan.transition(&step_id, status)?;
    plan.steps[index].error = Some(reason.to_string());
    ctx.save_plan(plan).await?;
    ctx.emit(EventKind::StepFailed {
        step_id,
        status,
        error: reason.to_string(),
        will_retry,
    })
    .await?;
    Ok(())
}

/// Marks every step that has not started as skipped.
pub(crate) async fn skip_remaining(
    ctx: &RunContext,
    plan: &mut Plan,
    reason: &str,
) -> Result<(), Error> {
    let pending: Vec<String> = plan
        .steps
        .iter()
        .filter(|s| matches!(s.status, StepStatus::NotStarted | StepStatus::InProgress))
        .map(|s| s.id.clone())
        .collect();
    if pending.is_empty() {
        return Ok(());
    }
    for id in &pending {
        plan.transition(id, StepStatus::Skipped)?;
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

/// The final summary: the planner LLM, else the primary agent, else a plain report.
pub(crate) async fn summarize(
    ctx: &RunContext,
    rt: &Runtime,
    plan: &Plan,
    cancelled: bool,
) -> Result<String, StoreError> {
    if cancelled {
        return Ok(prompts::plain_report(
            &ctx.task,
            plan,
            "the run was cancelled",
        ));
    }
    let user = prompts::summary_user(&ctx.task, plan);
    let planner_request = ChatRequest::new(
        CallPurpose::Summarize,
        vec![
            ChatMessage::system(prompts::summary_system()),
            ChatMessage::user(user.clone()),
        ],
    );
    let first_problem = match ctx
        .chat(rt.planner_llm.as_ref(), planner_request, None)
        .await
    {
        Ok(reply) => match reply.text() {
            Some(text) => return Ok(text.to_string()),
            None => "the summary reply was empty".to_string(),
        },
        Err(CallError::Store(e)) => return Err(e),
        Err(CallError::Cancelled) => {
            return Ok(prompts::plain_report(
                &ctx.task,
                plan,
                "the run was cancelled",
            ))
        }
        Err(CallError::Llm(e)) => format!("the summary call failed: {e}"),
    };
    ctx.emit(EventKind::Error {
        step_id: None,
        message: format!("{first_problem}; asking the primary agent"),
    })
    .await?;
    let primary = &rt.executors[0];
    let agent_request = ChatRequest::new(
        CallPurpose::Summarize,
        vec![
            ChatMessage::system(prompts::executor_system(
                &primary.name,
                &primary.description,
            )),
            ChatMessage::user(user),
        ],
    )
    .with_tools(Vec::new(), ToolChoice::None);
    let second_problem = match ctx.chat(primary.llm.as_ref(), agent_request, None).await {
        Ok(reply) => match reply.text() {
            Some(text) => return Ok(text.to_string()),
            None => "the primary agent's summary was empty".to_string(),
        },
        Err(CallError::Store(e)) => return Err(e),
        Err(CallError::Cancelled) => "the run was cancelled".to_string(),
        Err(CallError::Llm(e)) => format!("the primary agent's summary failed: {e}"),
    };
    ctx.emit(EventKind::Error {
        step_id: None,
        message: format!("{second_problem}; writing a plain report"),
    })
    .await?;
    Ok(prompts::plain_report(&ctx.task, plan, &second_problem))
}
