//! Answers checked by running them (docs/verification.md). When the run's last open step
//! claims success, the optional LLM verifier looks at the claim first (`verify.rs`); then an
//! independent reproduction checks the answer: a program the model writes from the task and
//! the workspace as the run found it (not from the run's transcript), run in a scratch copy
//! of that workspace, whose files and printed answer are compared with what the run left
//! (`model::verification::compare`). A run ends `verified` only when its answer came from
//! executed actions and a reproduction agreed.
//!
//! A check program that is one the run itself ran (a model decoding greedily writes the same
//! program from the same task and workspace) is not run: it would agree whatever the answer,
//! and the run ends unverified ("nothing independent checked the answer"). A sampled program
//! asked for instead was tried and agreed with every wrong answer it met (docs/eval.md).
//!
//! A disagreement gets a second reproduction, sampled: if it agrees with the first one, both
//! disagree with the run, and the step is tried again once with what they found; anything
//! else ends unverified (a second that agrees with the run splits the checks: one for, one
//! against). Every check is an `answer_checked` event; the run's `verified` is the last
//! one's verdict.

mod produced;
mod reproduce;

use std::collections::HashSet;

use self::produced::by_run;
use self::reproduce::{reproduce, Reproduction};
use crate::engine::context::RunContext;
use crate::engine::runtime::Runtime;
use crate::engine::verify::verify;
use crate::error::Error;
use crate::model::event::EventKind;
use crate::model::plan::Plan;
use crate::model::verification::{compare, Agreement, CheckVerdict, Produced, Verification};

/// Why the result `result` claimed for step `index` is not accepted (the optional verifier,
/// then, for the run's last open step, the check of the answer); `None` when it is.
/// `busy`: steps running besides this one.
pub(crate) async fn check_then_verify(
    ctx: &RunContext,
    rt: &Runtime,
    plan: &Plan,
    index: usize,
    result: &str,
    busy: &HashSet<String>,
) -> Result<Option<String>, Error> {
    if let Some(why) = verify(ctx, rt, plan, index, result).await? {
        return Ok(Some(why));
    }
    let step_id = &plan.steps()[index].id;
    // Another step running is not done, whatever its recorded status.
    if !plan.only_open_step(index) || busy.iter().any(|b| b != step_id) {
        return Ok(None);
    }
    // A disagreement may try the step again only while it has retries left.
    let can_retry = plan.steps()[index].attempts() <= rt.config.retries;
    check_answer(ctx, rt, step_id, result, can_retry).await
}

/// The check of the run's answer when its last step claims `result`.
async fn check_answer(
    ctx: &RunContext,
    rt: &Runtime,
    step_id: &str,
    result: &str,
    can_retry: bool,
) -> Result<Option<String>, Error> {
    if !rt.config.verification {
        return not_run(ctx, step_id, "checking answers is switched off").await;
    }
    let Some(port) = ctx.inputs.port.clone() else {
        // No workspace port (a library's own tools): nothing can be reproduced; said in the
        // summary and the outcome, not journaled on every run.
        ctx.set_check(Verification {
            verified: false,
            detail: "the runtime has no workspace to check the answer in".to_string(),
        });
        return Ok(None);
    };
    let Some(inputs) = crate::engine::inputs::recorded_inputs(ctx).await else {
        return not_run(ctx, step_id, "the run's inputs were not recorded").await;
    };
    if ctx.facts().calls_that_worked() == 0 {
        return not_run(
            ctx,
            step_id,
            "no action was executed: the answer was typed, not computed",
        )
        .await;
    }
    let changes = crate::engine::inputs::finish(ctx).await;
    if let Some(path) = inputs
        .iter()
        .filter(|i| !i.copied)
        .map(|i| &i.path)
        .find(|p| changes.changed.contains(p) || changes.deleted.contains(p))
    {
        let why = format!("{path} changed and was too big to keep a copy of");
        return not_run(ctx, step_id, &why).await;
    }
    let run = by_run(&port, &ctx.workspace, &changes, result).await;
    let first = match reproduce(ctx, rt, step_id, 1, &inputs).await? {
        Reproduction::Done(p) => p,
        // The same program again checks nothing. A sampled one instead agreed with the wrong
        // answers it was tried on (the same model shares the misreading): the run stays
        // unverified, said plainly.
        Reproduction::Copied => {
            let why = "the check wrote the run's own program again: nothing independent \
                       checked the answer";
            return record(ctx, step_id, CheckVerdict::Undecided, false, why.into()).await;
        }
        Reproduction::Failed(why) => {
            return record(ctx, step_id, CheckVerdict::Undecided, false, why).await;
        }
    };
    match compare(&run, &first) {
        Agreement::Agree { compared } => {
            let detail = format!("an independent program reproduced {}", compared.join(", "));
            record(ctx, step_id, CheckVerdict::Agree, true, detail).await
        }
        Agreement::Undecided { why } => {
            record(ctx, step_id, CheckVerdict::Undecided, false, why).await
        }
        Agreement::Disagree { why } => {
            let retry = can_retry && !ctx.checks().retried;
            let touched: Vec<String> = changes
                .changed
                .iter()
                .chain(&changes.deleted)
                .cloned()
                .collect();
            let sides = (&run, &first, touched.as_slice());
            second_look(ctx, rt, step_id, sides, why, &inputs, retry).await
        }
    }
}

/// After a first disagreement: a second reproduction decides. `retry`: the step may be
/// tried again when both reproductions agree with each other against the run. Whenever
/// they do, the inputs the run changed or deleted (`touched`) that neither reproduction
/// changed are put back: before the retry, so that it starts from the user's files as they
/// were, or as the run ends unverified.
async fn second_look(
    ctx: &RunContext,
    rt: &Runtime,
    step_id: &str,
    (run, first, touched): (&Produced, &Produced, &[String]),
    why: String,
    inputs: &[crate::model::inputs::RecordedInput],
    retry: bool,
) -> Result<Option<String>, Error> {
    let second = match reproduce(ctx, rt, step_id, 2, inputs).await? {
        Reproduction::Done(p) => p,
        Reproduction::Copied => {
            let detail =
                format!("a check disagreed ({why}); a second wrote the run's own program again");
            return record(ctx, step_id, CheckVerdict::Disagree, false, detail).await;
        }
        Reproduction::Failed(reason) => {
            let detail = format!("a check disagreed ({why}); a second could not run ({reason})");
            return record(ctx, step_id, CheckVerdict::Disagree, false, detail).await;
        }
    };
    // One check for the run and one against it is no check: on the eval's held-out tasks
    // every run a sampled second program agreed with after the first disagreed was wrong
    // (the same model shares the run's misreading; docs/eval.md).
    if let Agreement::Agree { compared } = compare(run, &second) {
        let detail = format!(
            "the checks split: a first program disagreed ({why}), a second reproduced {}",
            compared.join(", ")
        );
        return record(ctx, step_id, CheckVerdict::Disagree, false, detail).await;
    }
    let checks_agree = matches!(compare(first, &second), Agreement::Agree { .. });
    if !checks_agree {
        let detail = format!("two checks disagreed with the run and with each other: {why}");
        return record(ctx, step_id, CheckVerdict::Disagree, false, detail).await;
    }
    // Two programs that agree with each other and left an existing file alone are the
    // evidence that the task did not ask to change it: it is put back, before a retry and
    // when the run ends unverified alike (the user's files come first).
    let left_alone: Vec<String> = touched
        .iter()
        .filter(|p| !changed_by(first, p) && !changed_by(&second, p))
        .cloned()
        .collect();
    if retry {
        ctx.note_check_retry();
        let detail =
            format!("two independent programs agree with each other, not with the run: {why}");
        record(ctx, step_id, CheckVerdict::Disagree, false, detail).await?;
        let put_back =
            crate::engine::inputs::put_back(ctx, Some(step_id), CHECK_TOOL, &left_alone).await?;
        return Ok(Some(crate::prompts::check_disagreed(&why, &put_back)));
    }
    let put_back =
        crate::engine::inputs::put_back(ctx, Some(step_id), CHECK_TOOL, &left_alone).await?;
    let mut detail = format!("two independent programs still disagree with the run: {why}");
    if !put_back.is_empty() {
        detail.push_str(&format!(
            "; put back {}, which neither program changed",
            put_back.join(", ")
        ));
    }
    record(ctx, step_id, CheckVerdict::Disagree, false, detail).await
}

/// Who put an input back, as `input_protected` events name it.
const CHECK_TOOL: &str = "(the check of the answer)";

/// Whether a reproduction changed or removed `path`.
fn changed_by(p: &Produced, path: &str) -> bool {
    p.written.contains_key(path) || p.gone.contains(path)
}

/// Records a check that could not run; the step's claim stands, unverified.
async fn not_run(ctx: &RunContext, step_id: &str, why: &str) -> Result<Option<String>, Error> {
    record(ctx, step_id, CheckVerdict::NotRun, false, why.to_string()).await
}

/// Journals a check (`answer_checked`) and keeps its verdict; the step's claim stands.
async fn record(
    ctx: &RunContext,
    step_id: &str,
    verdict: CheckVerdict,
    verified: bool,
    detail: String,
) -> Result<Option<String>, Error> {
    ctx.emit(EventKind::AnswerChecked {
        step_id: step_id.to_string(),
        verdict,
        detail: detail.clone(),
    })
    .await?;
    ctx.set_check(Verification { verified, detail });
    Ok(None)
}
