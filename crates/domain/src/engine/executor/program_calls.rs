//! Tools in a program (docs/code-actions.md, "Tools in a program"): a program may call the
//! runtime, with `input()` (which asks the user, as `message_ask_user` does) or with one of
//! the step's other tools (the browser, web search, an MCP server's) called as a Python
//! function. The code tool stops such a program at the call, before it changed any file
//! (`ToolOutput::program_call`); the runtime makes the call (a question journaled with the
//! run `waiting`, the same question never asked twice; a tool call journaled as any other,
//! through the approvals) and runs the same program again from the start with the results
//! so far as its `results`, each run a journaled call of its own, so a resumed run repeats
//! none of them. A check's program (`CallSite::Check`) asks nobody: `input()` gets the
//! answers the user gave the run.

use serde_json::Value;

use crate::engine::context::RunContext;
use crate::engine::executor::router::family_of;
use crate::engine::executor::tool_call::{parse_arguments, CallSite, StepTools, ToolRun};
use crate::engine::executor::user_call::ask;
use crate::error::StoreError;
use crate::model::text::truncate_chars;
use crate::model::tool_kind::ToolFamily;
use crate::ports::llm::{ToolCall, ToolSchema};
use crate::ports::{ProgramCall, Toolbox};
use crate::prompts;
use crate::tools::builtin::{ASK_USER, COMPLETE_STEP};
use crate::tools::code::{
    CallResult, ProgramFunction, CODE, CODE_RUN, FUNCTIONS, MAX_CODE_BYTES, RESULTS,
};

/// Calls one program may make before it is left stopped at the next.
const MAX_CALLS: usize = 8;

impl StepTools<'_> {
    /// Runs `call` (see [`StepTools::run`]); a program is given `functions`, and one that stops
    /// at a call of the runtime has it made and runs again, at most [`MAX_CALLS`] times. The
    /// model reads what the program called and got, then what its last run gave.
    pub(crate) async fn run_program(
        &self,
        call: &ToolCall,
        journal_key: &str,
        functions: &[ProgramFunction],
    ) -> Result<ToolRun, StoreError> {
        let (ctx, tool_ctx, site) = (self.ctx, self.tool_ctx, self.site);
        let mut args = match parse_arguments(&call.arguments) {
            Ok(Value::Object(args)) if call.name == CODE_RUN => args,
            _ => return self.run(call, journal_key).await,
        };
        let mut first = call.clone();
        if !functions.is_empty() {
            args.insert(FUNCTIONS.to_string(), serde_json::json!(functions));
            first.arguments = Value::Object(args.clone()).to_string();
        }
        let mut run = self.run(&first, journal_key).await?;
        let mut results: Vec<CallResult> = Vec::new();
        let mut said: Vec<String> = Vec::new();
        let mut questions = 0;
        while let Some(pending) = run.program_call.clone() {
            if results.len() == MAX_CALLS {
                break;
            }
            let n = results.len() + 1;
            let result = if pending.tool == ASK_USER {
                let question = question_of(&pending);
                let answer = match site {
                    CallSite::Workspace => {
                        let step = tool_ctx.step_id.as_deref().unwrap_or_default();
                        let scope = format!("{journal_key}:input");
                        match ask(ctx, &scope, step, &question).await? {
                            Ok(answer) => answer,
                            Err(reply) => {
                                run.text = format!("{}\n{reply}", run.text);
                                break;
                            }
                        }
                    }
                    CallSite::Check => match given_answer(ctx, &question, questions) {
                        Some(answer) => answer,
                        None => break,
                    },
                };
                questions += 1;
                said.push(prompts::program_asked(&question, &answer));
                CallResult {
                    ok: true,
                    value: answer,
                }
            } else if functions.iter().any(|f| f.name == pending.tool) {
                let tool_call = ToolCall {
                    id: format!("{}-call-{n}", call.id),
                    name: pending.tool.clone(),
                    arguments: pending.arguments.to_string(),
                };
                let key = format!("{journal_key}/call-{n}");
                let got = self.run(&tool_call, &key).await?;
                said.push(prompts::program_called(
                    &pending.tool,
                    got.ok,
                    &truncate_chars(&got.text, 200),
                ));
                CallResult {
                    ok: got.ok,
                    value: got.text,
                }
            } else {
                let value = format!("no tool named {} can be called here", pending.tool);
                said.push(prompts::program_called(&pending.tool, false, &value));
                CallResult { ok: false, value }
            };
            results.push(result);
            // The program travels with its results as one argument of `bash -c`, which the
            // kernel caps: past the code's own cap, the calls stop here.
            let given = serde_json::to_string(&results).map_or(usize::MAX, |r| r.len());
            let code = args.get(CODE).and_then(Value::as_str).map_or(0, str::len);
            if given.saturating_add(code) > MAX_CODE_BYTES {
                said.push(prompts::program_calls_too_big(MAX_CODE_BYTES));
                run.program_call = None;
                break;
            }
            args.insert(RESULTS.to_string(), serde_json::json!(results));
            let again = ToolCall {
                id: format!("{}-run-{n}", call.id),
                name: call.name.clone(),
                arguments: Value::Object(args.clone()).to_string(),
            };
            let key = format!("{journal_key}/run-{n}");
            run = self.run(&again, &key).await?;
        }
        if !said.is_empty() {
            run.text = format!("{}\n{}", prompts::program_calls_made(&said), run.text);
        }
        Ok(run)
    }
}

/// The tools of `offered` a program may call as functions: those that do what a program
/// cannot (the browser, web search, an MCP server's or a custom tool), never the ways to act
/// on the workspace, to ask or to finish, which a program does itself.
pub(crate) fn functions_of(toolbox: &dyn Toolbox, offered: &[ToolSchema]) -> Vec<ProgramFunction> {
    offered
        .iter()
        .filter(|t| t.name != COMPLETE_STEP)
        .filter(|t| {
            matches!(
                family_of(toolbox, &t.name),
                ToolFamily::Browser | ToolFamily::WebSearch | ToolFamily::Other
            )
        })
        .filter_map(ProgramFunction::of)
        .collect()
}

/// What `input()` asked: its prompt, or a question saying it gave none.
fn question_of(call: &ProgramCall) -> String {
    match call.arguments["question"].as_str().map(str::trim) {
        Some(q) if !q.is_empty() => q.to_string(),
        _ => prompts::program_question_unworded(),
    }
}

/// For a check's program: the user's answer to the same question this run, else the run's
/// answers in order (`asked`: how many the program asked before).
fn given_answer(ctx: &RunContext, question: &str, asked: usize) -> Option<String> {
    let facts = ctx.facts();
    if let Some(answer) = facts.earlier_answer(question) {
        return Some(answer.to_string());
    }
    facts.answered().get(asked).map(|a| a.answer.clone())
}
