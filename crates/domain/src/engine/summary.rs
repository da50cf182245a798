//! The final summary: a factual first line built from the recorded step statuses (the
//! run's outcome, settled before the summary is written), then the planner LLM's text, else
//! the primary agent's, else a plain report. The LLM is told the outcome and each step's tool
//! calls and files, so it cannot credit a step with work it did not do.

use crate::engine::context::{RunContext, CANCELLED};
use crate::engine::failure::CallProblem;
use crate::engine::runtime::Runtime;
use crate::error::StoreError;
use crate::model::event::EventKind;
use crate::model::plan::Plan;
use crate::ports::llm::{CallPurpose, ChatMessage, ChatRequest, ToolChoice};
use crate::prompts;

/// Writes the run's summary: the outcome line, a blank line, the text. `failure` is why the
/// run failed (`None`: it completed); `stopped` (cancelled, out of budget) skips the LLM.
pub(crate) async fn summarize(
    ctx: &RunContext,
    rt: &Runtime,
    plan: &Plan,
    stopped: Option<&str>,
    failure: Option<&str>,
) -> Result<String, StoreError> {
    let head = prompts::outcome_line(plan, failure);
    let body = write_text(ctx, rt, plan, stopped, failure).await?;
    Ok(format!("{head}\n\n{body}"))
}

async fn write_text(
    ctx: &RunContext,
    rt: &Runtime,
    plan: &Plan,
    stopped: Option<&str>,
    failure: Option<&str>,
) -> Result<String, StoreError> {
    if let Some(why) = stopped {
        return Ok(prompts::plain_report(&ctx.task, plan, why));
    }
    let user = prompts::summary_user(&ctx.task, plan, failure, &ctx.tool_calls());
    let planner_request = ChatRequest::new(
        CallPurpose::Summarize,
        vec![
            ChatMessage::system(prompts::summary_system()),
            ChatMessage::user(user.clone()),
        ],
    );
    let first_problem = match ctx
        .chat("summary", rt.planner_llm.as_ref(), planner_request, None)
        .await
    {
        Ok(reply) => match reply.text() {
            Some(text) => return Ok(text.to_string()),
            None => "the summary reply was empty".to_string(),
        },
        Err(e) => match e.recoverable()? {
            CallProblem::Cancelled => {
                let why = ctx.stop_reason().unwrap_or_else(|| CANCELLED.into());
                return Ok(prompts::plain_report(&ctx.task, plan, &why));
            }
            CallProblem::Llm(e) => format!("the summary call failed: {e}"),
        },
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
    let second_problem = match ctx
        .chat("summary-primary", primary.llm.as_ref(), agent_request, None)
        .await
    {
        Ok(reply) => match reply.text() {
            Some(text) => return Ok(text.to_string()),
            None => "the primary agent's summary was empty".to_string(),
        },
        Err(e) => match e.recoverable()? {
            CallProblem::Cancelled => "the run was stopped".to_string(),
            CallProblem::Llm(e) => format!("the primary agent's summary failed: {e}"),
        },
    };
    ctx.emit(EventKind::Error {
        step_id: None,
        message: format!("{second_problem}; writing a plain report"),
    })
    .await?;
    Ok(prompts::plain_report(&ctx.task, plan, &second_problem))
}
