//! A program that asks the user with `input()` (docs/code-actions.md, "A program that
//! asks"). The code tool stops such a program at the question, before it changed any file
//! (`ToolOutput::asks`); the runtime asks the user as `message_ask_user` does (journaled,
//! the run `waiting`, the same question never asked twice) and runs the same program again
//! from the start with the answers so far as its `answers`, each run a journaled call of
//! its own, so a resumed run repeats none of them. A check's program (`CallSite::Check`)
//! asks nobody: it is given the answers the user gave the run.

use std::sync::Arc;

use serde_json::Value;

use crate::engine::context::RunContext;
use crate::engine::executor::agent::StepLimits;
use crate::engine::executor::tool_call::{parse_arguments, run_tool, CallSite, ToolRun};
use crate::error::StoreError;
use crate::model::observations::Answered;
use crate::ports::llm::ToolCall;
use crate::ports::{ToolContext, Toolbox};
use crate::prompts;
use crate::tools::code::{ANSWERS, CODE_RUN};

/// Questions one program may ask before it is left stopped at the next.
const MAX_QUESTIONS: usize = 3;

/// Runs `call` (see [`run_tool`]); a program that stops at `input()` is answered and run
/// again, at most [`MAX_QUESTIONS`] times. The model reads the questions and answers, then
/// what the last run gave.
pub(crate) async fn run_answering(
    ctx: &RunContext,
    limits: &StepLimits,
    toolbox: &Arc<dyn Toolbox>,
    tool_ctx: &ToolContext,
    call: &ToolCall,
    journal_key: &str,
    site: CallSite,
) -> Result<ToolRun, StoreError> {
    let mut run = run_tool(ctx, limits, toolbox, tool_ctx, call, journal_key, site).await?;
    if call.name != CODE_RUN || run.asks.is_none() {
        return Ok(run);
    }
    let Ok(Value::Object(mut args)) = parse_arguments(&call.arguments) else {
        return Ok(run);
    };
    let given: Vec<String> = ctx
        .facts()
        .answered()
        .iter()
        .map(|a| a.answer.clone())
        .collect();
    let mut answers: Vec<String> = Vec::new();
    let mut asked: Vec<Answered> = Vec::new();
    while let Some(asks) = run.asks.clone() {
        if asked.len() == MAX_QUESTIONS {
            break;
        }
        let question = if asks.trim().is_empty() {
            prompts::program_question_unworded()
        } else {
            asks.trim().to_string()
        };
        let answer = match site {
            CallSite::Workspace => {
                let step = tool_ctx.step_id.as_deref().unwrap_or_default();
                match ctx
                    .ask_user(&format!("{journal_key}:input"), step, &question)
                    .await
                {
                    Ok(answer) => answer,
                    Err(e) => {
                        let why = e.recoverable()?;
                        run.text =
                            format!("{}\n{}", run.text, prompts::nobody_to_ask(&why.to_string()));
                        break;
                    }
                }
            }
            CallSite::Check => {
                let earlier = ctx.facts().earlier_answer(&question).map(str::to_string);
                match earlier.or_else(|| given.get(answers.len()).cloned()) {
                    Some(answer) => answer,
                    None => break,
                }
            }
        };
        answers.push(answer.clone());
        asked.push(Answered { question, answer });
        args.insert(ANSWERS.to_string(), Value::from(answers.clone()));
        let again = ToolCall {
            id: format!("{}-answered-{}", call.id, answers.len()),
            name: call.name.clone(),
            arguments: Value::Object(args.clone()).to_string(),
        };
        let key = format!("{journal_key}/answered-{}", answers.len());
        run = run_tool(ctx, limits, toolbox, tool_ctx, &again, &key, site).await?;
    }
    if !asked.is_empty() {
        run.text = format!("{}\n{}", prompts::program_answered(&asked), run.text);
    }
    Ok(run)
}
