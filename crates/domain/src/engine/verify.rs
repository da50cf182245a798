//! The optional verifier: a second look by the planner's model at a result an executor
//! claims, before the step counts as completed (`RunConfig::verify`).

use crate::engine::context::RunContext;
use crate::engine::runtime::Runtime;
use crate::engine::structured::ask_json;
use crate::error::Error;
use crate::model::event::EventKind;
use crate::model::plan::Plan;
use crate::ports::llm::{CallPurpose, ChatMessage};
use crate::prompts;

/// The optional verifier: `Some(reason)` when it rejects the claimed result.
pub(crate) async fn verify(
    ctx: &RunContext,
    rt: &Runtime,
    plan: &Plan,
    index: usize,
    result: &str,
) -> Result<Option<String>, Error> {
    if !rt.config.verify {
        return Ok(None);
    }
    let step = &plan.steps()[index];
    let messages = vec![
        ChatMessage::system(prompts::verify_system()),
        ChatMessage::user(prompts::verify_step(
            &ctx.task,
            &step.display_text(),
            &prompts::truncate_chars(result, 2000),
        )),
    ];
    let scope = format!(
        "verify:{}:{}",
        plan.steps()[index].id,
        plan.steps()[index].attempts()
    );
    let verdict = ask_json(
        ctx,
        &scope,
        rt.planner_llm.as_ref(),
        CallPurpose::Other,
        messages,
        Some(&step.id),
    )
    .await;
    let (ok, reason) = match verdict {
        Ok(answer) => (
            answer.value["ok"].as_bool().unwrap_or(true),
            answer.value["reason"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        ),
        Err(e) => (
            true,
            format!(
                "verifier unavailable ({}); result accepted",
                e.recoverable()?
            ),
        ),
    };
    ctx.emit(EventKind::StepVerified {
        step_id: step.id.clone(),
        ok,
        reason: reason.clone(),
    })
    .await?;
    Ok((!ok).then(|| format!("the verifier rejected the result: {reason}")))
}
