//! `message_notify_user` and `message_ask_user` inside a step's loop.

use crate::engine::context::RunContext;
use crate::engine::executor::tool_call::parse_arguments;
use crate::error::StoreError;
use crate::ports::llm::ToolCall;
use crate::prompts;
use crate::tools::builtin::{AskUserArgs, NotifyUserArgs, ASK_USER, NOTIFY_USER};

/// What a call to the user gives the step.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum UserCall {
    /// What the model reads (a delivery note or an argument error).
    Reply(String),
    /// The user's answer to `message_ask_user`, verbatim (possibly empty).
    Answered(String),
}

/// Handles a call to `message_notify_user` or `message_ask_user`.
pub(super) async fn talk_to_user(
    ctx: &RunContext,
    scope: &str,
    step_id: &str,
    call: &ToolCall,
    replayed: bool,
) -> Result<UserCall, StoreError> {
    let args = match parse_arguments(&call.arguments) {
        Ok(v) => v,
        Err(e) => return Ok(UserCall::Reply(format!("Error: {e}"))),
    };
    if call.name == NOTIFY_USER {
        return Ok(UserCall::Reply(
            match serde_json::from_value::<NotifyUserArgs>(args) {
                Ok(a) => {
                    if !replayed {
                        ctx.notify_user(step_id, &a.text).await?;
                    }
                    "Delivered to the user.".to_string()
                }
                Err(e) => format!("Error: invalid arguments for {NOTIFY_USER} ({e})"),
            },
        ));
    }
    let question = match serde_json::from_value::<AskUserArgs>(args) {
        Ok(a) if !a.question.trim().is_empty() => a.question,
        Ok(_) => return Ok(UserCall::Reply("Error: `question` is empty".to_string())),
        Err(e) => {
            return Ok(UserCall::Reply(format!(
                "Error: invalid arguments for {ASK_USER} ({e})"
            )))
        }
    };
    Ok(
        match ask(ctx, &format!("{scope}:ask"), step_id, &question).await? {
            Ok(answer) => UserCall::Answered(answer),
            Err(reply) => UserCall::Reply(reply),
        },
    )
}

/// Asks the user `question` (journaled under `scope`): the answer, or, when nobody can
/// answer now, what the model reads instead. Shared by `message_ask_user` and a program's
/// `input()` (`program_calls`).
pub(super) async fn ask(
    ctx: &RunContext,
    scope: &str,
    step_id: &str,
    question: &str,
) -> Result<Result<String, String>, StoreError> {
    match ctx.ask_user(scope, step_id, question).await {
        Ok(answer) => Ok(Ok(answer)),
        Err(e) => {
            let why = e.recoverable()?;
            let answered = ctx.facts().answered().to_vec();
            if answered.iter().any(|a| !a.answer.trim().is_empty()) {
                // The user answered before: the step can go on with that.
                return Ok(Err(prompts::user_not_asked_again(
                    &why.to_string(),
                    &answered,
                )));
            }
            // Nobody can answer: the model goes on with what it has (and says so, or gives
            // the step up, in its own words).
            Ok(Err(prompts::nobody_to_ask(&why.to_string())))
        }
    }
}
