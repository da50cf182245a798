//! One reproduction of a run's answer (docs/verification.md): a scratch copy of the
//! workspace as the run found it, a program the model writes from the task and that copy
//! alone (not the run's transcript), run there through the approval gate; what it left.

use std::path::PathBuf;

use super::produced::{in_scratch, Seeded};
use crate::engine::config::Actions;
use crate::engine::context::RunContext;
use crate::engine::executor::program_calls::functions_of;
use crate::engine::executor::router::{family_of, route_tools, RouteQuery};
use crate::engine::executor::tool_call::{CallSite, StepTools};
use crate::engine::executor::workspace_view::look;
use crate::engine::failure::CallProblem;
use crate::engine::runtime::Runtime;
use crate::error::Error;
use crate::model::inputs::RecordedInput;
use crate::model::observations::{holds_program, program, same_program};
use crate::model::verification::Produced;
use crate::model::workspace_view::ViewBudget;
use crate::ports::llm::{CallPurpose, ChatMessage, ChatRequest, ToolChoice};
use crate::ports::{ScratchFile, ToolContext};
use crate::prompts;
use crate::tools::code::CODE_RUN;

/// Programs one reproduction may write: the first, and one fix after it failed.
const PROGRAMS: u32 = 2;

/// The sampling temperature of a reproduction: the first reads the task greedily, a second
/// one (after a disagreement) samples, so that it is not the first again.
fn temperature(round: u32) -> Option<f32> {
    (round > 1).then_some(crate::engine::SAMPLED_TEMPERATURE)
}

/// How a reproduction went.
pub(super) enum Reproduction {
    Done(Produced),
    /// Its program was one the run itself ran (a model decoding greedily, shown the same
    /// task and workspace, writes the same program): not run, it would check nothing.
    Copied,
    /// It produced nothing to compare: why.
    Failed(String),
}

/// Reproduces the task in scratch folder `check-ROUND` seeded with `inputs`, for the run's
/// last step `step_id`.
pub(super) async fn reproduce(
    ctx: &RunContext,
    rt: &Runtime,
    step_id: &str,
    round: u32,
    inputs: &[RecordedInput],
) -> Result<Reproduction, Error> {
    let Some(port) = ctx.inputs.port.clone() else {
        return Ok(Reproduction::Failed(
            "the workspace cannot be read".to_string(),
        ));
    };
    let Some(agent) = rt.executors.first() else {
        return Ok(Reproduction::Failed("no executor".to_string()));
    };
    let Some(code) = agent
        .toolbox
        .schemas()
        .into_iter()
        .find(|s| s.name == CODE_RUN)
    else {
        return Ok(Reproduction::Failed(format!(
            "no `{CODE_RUN}` tool to run a check program"
        )));
    };
    let files: Vec<ScratchFile> = inputs
        .iter()
        .map(|i| ScratchFile {
            path: i.path.clone(),
            from_copy: i.copied,
        })
        .collect();
    let scratch: PathBuf = match port
        .scratch(
            &ctx.run_id,
            &ctx.workspace,
            &format!("check-{round}"),
            &files,
        )
        .await
    {
        Ok(dir) => dir,
        Err(e) => {
            return Ok(Reproduction::Failed(format!(
                "no scratch copy of the workspace: {e}"
            )))
        }
    };
    let Some(view) = look(&port, &scratch, ViewBudget::default()).await else {
        return Ok(Reproduction::Failed(
            "the scratch copy cannot be read".to_string(),
        ));
    };
    let seeded: Vec<Seeded> = inputs
        .iter()
        .map(|i| Seeded {
            path: i.path.clone(),
            digest: i.digest.clone(),
        })
        .collect();
    // The tools a program may call, routed by the task as a step's are (the browser for a
    // task naming a web page).
    let toolbox = agent.toolbox.as_ref();
    let routed = route_tools(
        &RouteQuery {
            kind: None,
            step: "",
            task: &ctx.task,
            actions: Actions::Code,
        },
        &toolbox.schemas(),
        |name| family_of(toolbox, name),
    );
    let functions = functions_of(toolbox, &routed);
    let mut check = prompts::check_prompt(&ctx.task, &view, ctx.facts().answered(), round);
    if let Some(text) = prompts::program_functions(&functions) {
        check.push_str("\n\n");
        check.push_str(&text);
    }
    let mut messages = vec![
        ChatMessage::system(prompts::executor_system(
            &agent.name,
            &agent.description,
            Actions::Code,
        )),
        ChatMessage::user(check),
    ];
    let tool_ctx = ToolContext {
        workspace: scratch.clone(),
        ..ctx.tool_context(None)
    };
    let scope = format!("check:{step_id}:{round}");
    // The run's own programs, before this check adds its own.
    let run_programs: Vec<String> = ctx.facts().programs().to_vec();
    for _ in 0..PROGRAMS {
        let mut request = ChatRequest::new(CallPurpose::Other, messages.clone()).with_tools(
            vec![code.clone()],
            ToolChoice::Function(CODE_RUN.to_string()),
        );
        request.temperature = temperature(round);
        let reply = match ctx
            .chat_replayable(&scope, agent.llm.as_ref(), request, Some(step_id))
            .await
        {
            Ok(r) => r,
            Err(e) => {
                return Ok(Reproduction::Failed(match e.recoverable()? {
                    CallProblem::Cancelled => "the run was cancelled".to_string(),
                    CallProblem::Llm(e) => format!("the model failed: {e}"),
                }))
            }
        };
        let Some(call) = reply
            .response
            .tool_calls
            .iter()
            .find(|c| c.name == CODE_RUN)
            .cloned()
        else {
            return Ok(Reproduction::Failed(
                "the check wrote no program".to_string(),
            ));
        };
        let copied = program(&call.arguments).is_some_and(|code| {
            run_programs
                .iter()
                .any(|p| same_program(p, &code) || holds_program(&code, p))
        });
        if copied {
            return Ok(Reproduction::Copied);
        }
        let key = format!("{}/{}", reply.key, call.id);
        let tools = StepTools {
            ctx,
            limits: &rt.config.limits,
            toolbox: &agent.toolbox,
            tool_ctx: &tool_ctx,
            site: CallSite::Check,
        };
        let run = tools.run_program(&call, &key, &functions).await?;
        if run.ok {
            // Its answer: what it gave `final_answer`, else what it printed.
            let printed = run.final_answer.or(run.stdout).unwrap_or_default();
            return Ok(match in_scratch(&port, &scratch, &seeded, &printed).await {
                Some(p) => Reproduction::Done(p),
                None => Reproduction::Failed("the scratch copy cannot be read".to_string()),
            });
        }
        messages.push(ChatMessage::from_reply(&reply.response));
        for other in &reply.response.tool_calls {
            let text = if other.id == call.id {
                run.text.clone()
            } else {
                "Not executed: one program at a time.".to_string()
            };
            messages.push(ChatMessage::tool_result(&other.id, text));
        }
        messages.push(ChatMessage::user(prompts::check_program_failed()));
    }
    Ok(Reproduction::Failed(format!(
        "the check's program failed {PROGRAMS} times"
    )))
}
