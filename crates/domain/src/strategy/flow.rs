//! The **flow** style (docs/design.md, "The flow style"): one upfront plan made through the
//! `planning` tool, steps run in order, each routed by its `[KIND]` tag to an executor; after
//! a failure the planner may `update` the plan.
//!
//! Where it departs from that design (same section): a step is completed only by
//! `complete_step` with success=true; the turn budget is per step; a failing step ends the
//! run clearly; the summary sees every step's result and has two fallbacks.

use async_trait::async_trait;

use crate::engine::context::RunContext;
use crate::engine::failure::Failure;
use crate::engine::runtime::Runtime;
use crate::error::Error;
use crate::model::event::{EventKind, PlanSource};
use crate::model::plan::{Plan, StepStatus};
use crate::model::plan_text::render_plan_text;
use crate::ports::llm::{CallPurpose, ChatMessage, ChatRequest, ToolChoice};
use crate::prompts;
use crate::strategy::planner::{default_plan, executor_cards, report_truncation};
use crate::strategy::{InitialPlan, PlanningStrategy, Revisions, StepReport};
use crate::tools::planning::{PlanningTool, PLANNING};

#[derive(Debug, Default)]
pub(crate) struct Flow;

#[async_trait]
impl PlanningStrategy for Flow {
    async fn initial_plan(&mut self, ctx: &RunContext, rt: &Runtime) -> Result<InitialPlan, Error> {
        let max = rt.config.max_plan_steps.max(1);
        let mut tool = PlanningTool::new("plan_1", ctx.task.clone()).with_max_steps(max);
        let messages = vec![
            ChatMessage::system(prompts::planner_system(&executor_cards(rt))),
            ChatMessage::user(prompts::planner_user(&ctx.task, max)),
        ];
        match converse_with_planning_tool(ctx, "plan", rt, &mut tool, messages).await {
            Ok(plan) => {
                if let Some(listed) = tool.truncated_from() {
                    report_truncation(ctx, listed, max).await?;
                }
                Ok(InitialPlan {
                    plan,
                    source: PlanSource::Llm,
                    reason: None,
                })
            }
            Err(e) => default_plan(ctx, e.recoverable()?),
        }
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
        let index = plan.index_of(&failed.step_id).unwrap_or(0);
        // The completed steps stay in the new list, so they do not count against the bound.
        let done = plan
            .steps()
            .iter()
            .filter(|s| s.status() == StepStatus::Completed)
            .count();
        let max = done + rt.config.max_plan_steps.max(1);
        let mut tool = PlanningTool::with_plan(plan.clone()).with_max_steps(max);
        let messages = vec![
            ChatMessage::system(prompts::planner_system(&executor_cards(rt))),
            ChatMessage::user(prompts::flow_replan(
                &render_plan_text(plan),
                index,
                &failed.description,
                &failed.text,
            )),
        ];
        let revised =
            match converse_with_planning_tool(ctx, "replan", rt, &mut tool, messages).await {
                Ok(p) => p,
                Err(e) => {
                    let problem = e.recoverable()?;
                    ctx.emit(EventKind::Error {
                        step_id: Some(failed.step_id.clone()),
                        message: format!("re-plan failed: {problem}"),
                    })
                    .await?;
                    return Ok(None);
                }
            };
        // Completed steps are history: a revision may not drop or change them.
        let lost: Vec<&str> = plan
            .steps()
            .iter()
            .filter(|s| s.status() == StepStatus::Completed)
            .filter(|s| {
                revised
                    .step(&s.id)
                    .is_none_or(|r| r.status() != StepStatus::Completed)
            })
            .map(|s| s.id.as_str())
            .collect();
        if !lost.is_empty() {
            ctx.emit(EventKind::Error {
                step_id: Some(failed.step_id.clone()),
                message: format!(
                    "re-plan refused: it dropped completed steps {}",
                    lost.join(", ")
                ),
            })
            .await?;
            return Ok(None);
        }
        *plan = revised;
        if let Some(s) = plan.step(&failed.step_id) {
            if matches!(s.status(), StepStatus::Failed | StepStatus::Blocked) {
                plan.transition(&failed.step_id, StepStatus::NotStarted)?;
            }
        }
        Ok(Some(format!(
            "re-planned after step {index} failed: {}",
            failed.text
        )))
    }
}

/// Lets the planner call the `planning` tool until it produced a plan (create or update),
/// with one correction turn; a recoverable failure says why it did not. The planner is offered
/// `planning` narrowed to the one command it needs, and that function is forced.
async fn converse_with_planning_tool(
    ctx: &RunContext,
    scope: &str,
    rt: &Runtime,
    tool: &mut PlanningTool,
    mut messages: Vec<ChatMessage>,
) -> Result<Plan, Failure<String>> {
    let start_version = tool.active_plan().map(|p| p.version());
    let done = tool.active_plan().map_or(0, |p| {
        p.steps()
            .iter()
            .filter(|s| s.status() == StepStatus::Completed)
            .count()
    });
    let max = done + rt.config.max_plan_steps.max(1);
    let (command, schema) = if start_version.is_some() {
        ("update", PlanningTool::update_schema(max))
    } else {
        ("create", PlanningTool::create_schema(max))
    };
    let mut last_problem = String::from("the planner made no plan");
    for _attempt in 0..rt.config.planner_attempts.max(1) {
        let request = ChatRequest::new(CallPurpose::Plan, messages.clone()).with_tools(
            vec![schema.clone()],
            ToolChoice::Function(PLANNING.to_string()),
        );
        let reply = match ctx
            .chat(scope, rt.planner_llm.as_ref(), request, None)
            .await
        {
            Ok(r) => r,
            Err(e) => {
                last_problem = format!("the planner failed: {}", e.recoverable()?);
                break;
            }
        };
        messages.push(ChatMessage::from_reply(&reply));
        let mut errors = Vec::new();
        let mut sent = Vec::new();
        for call in &reply.tool_calls {
            let result = if call.name == PLANNING {
                sent.push(call.arguments.clone());
                tool.call(&call.arguments)
            } else {
                Err(format!(
                    "Error: unknown tool '{}'; only `planning` is available while planning",
                    call.name
                ))
            };
            let text = result.unwrap_or_else(|e| {
                errors.push(e.trim_start_matches("Error: ").to_string());
                e
            });
            messages.push(ChatMessage::tool_result(&call.id, text));
        }
        let changed = tool
            .active_plan()
            .is_some_and(|p| !p.steps().is_empty() && Some(p.version()) != start_version);
        if changed {
            if let Some(plan) = tool.take_active_plan() {
                return Ok(plan);
            }
        }
        last_problem = if reply.tool_calls.is_empty() {
            "the planner answered without calling the `planning` tool".to_string()
        } else if errors.is_empty() {
            "the planner's calls did not create a plan".to_string()
        } else {
            format!("the planner's call was invalid: {}", errors.join("; "))
        };
        messages.push(ChatMessage::user(prompts::planner_retry(
            command,
            &errors,
            sent.last().map(String::as_str),
            max,
        )));
    }
    Err(Failure::Recoverable(last_problem))
}
