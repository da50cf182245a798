//! The final summary: a factual first line built from the recorded step statuses (the
//! run's outcome, settled before the summary is written), then a text. When the recorded
//! facts say everything (one step, or every step succeeded with recorded tool outputs) the
//! text is written from them with no LLM call (docs/direct.md, "The summary"); otherwise the
//! planner LLM writes it, else the primary agent, else a plain report. The LLM is told the
//! outcome and each step's tool calls, files and facts, so it cannot credit a step with work
//! it did not do.

use crate::engine::config::SummaryStyle;
use crate::engine::context::{RunContext, CANCELLED};
use crate::engine::failure::CallProblem;
use crate::engine::runtime::Runtime;
use crate::error::StoreError;
use crate::model::event::EventKind;
use crate::model::observations::RunFacts;
use crate::model::plan::{Plan, StepStatus};
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
    let facts = ctx.facts();
    if facts_say_everything(rt.config.summary, plan, &facts) {
        return Ok(prompts::facts_report(plan, &facts));
    }
    let user = prompts::summary_user(&ctx.task, plan, failure, &ctx.tool_calls(), &facts);
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
                rt.config.actions,
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

/// Whether the summary is written from the facts, with no LLM call: always for
/// [`SummaryStyle::Facts`], never for [`SummaryStyle::Llm`], and for
/// [`SummaryStyle::Auto`] when the plan has one step or every step completed with recorded
/// tool outputs (an answer, a file, an output).
fn facts_say_everything(style: SummaryStyle, plan: &Plan, facts: &RunFacts) -> bool {
    match style {
        SummaryStyle::Facts => true,
        SummaryStyle::Llm => false,
        SummaryStyle::Auto => {
            plan.steps().len() == 1
                || plan
                    .steps()
                    .iter()
                    .all(|s| s.status() == StepStatus::Completed && !facts.step(&s.id).is_empty())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::event::EventKind;

    fn plan(n: usize) -> Plan {
        let texts: Vec<String> = (0..n).map(|i| format!("Do part {i}")).collect();
        let mut p = Plan::from_texts("plan_1", "t", "g", &texts).expect("plan");
        for s in texts.iter().enumerate().map(|(i, _)| format!("s{}", i + 1)) {
            p.transition(&s, StepStatus::InProgress).expect("legal");
            p.transition(&s, StepStatus::Completed).expect("legal");
        }
        p
    }

    fn output_of(step: &str) -> EventKind {
        EventKind::ToolCalled {
            step_id: Some(step.into()),
            call_id: "c".into(),
            tool: "shell_exec".into(),
            ok: true,
            output: "7".into(),
            duration_ms: 1,
            journal_key: Some(format!("{step}/c")),
        }
    }

    #[test]
    fn facts_write_the_summary_when_they_say_everything() {
        let none = RunFacts::default();
        assert!(facts_say_everything(SummaryStyle::Auto, &plan(1), &none));
        assert!(!facts_say_everything(SummaryStyle::Llm, &plan(1), &none));
        assert!(!facts_say_everything(SummaryStyle::Auto, &plan(2), &none));
        assert!(facts_say_everything(SummaryStyle::Facts, &plan(2), &none));
        let mut facts = RunFacts::default();
        facts.record(&output_of("s1"));
        assert!(!facts_say_everything(SummaryStyle::Auto, &plan(2), &facts));
        facts.record(&output_of("s2"));
        assert!(facts_say_everything(SummaryStyle::Auto, &plan(2), &facts));
    }
}
