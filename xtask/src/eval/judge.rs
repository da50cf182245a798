//! The verdict on one task run's workspace: its protected inputs first (a changed one fails
//! the task whatever the checker says), then the task's checker, and which of the task's
//! outputs are missing or empty (docs/eval.md).

use std::path::Path;

use super::checks::{self, Verdict};
use super::inputs;
use super::tasks::Task;

/// What the workspace shows after a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Judgement {
    /// `Err` says why the task failed: the changed inputs, else the checker's reason.
    pub verdict: Verdict,
    /// Seeded files the task did not allow to change that changed, with how.
    pub changed_inputs: Vec<String>,
    /// The task's output files that are missing or empty.
    pub missing_outputs: Vec<String>,
}

pub(crate) fn judge(task: &Task, ws: &Path) -> Judgement {
    let changed_inputs = inputs::changed(ws, task.seed, task.may_change);
    let checked = (task.check)(ws);
    let verdict = if changed_inputs.is_empty() {
        checked
    } else {
        Err(format!(
            "{} ({})",
            changed_inputs.join(", "),
            match checked {
                Ok(()) => "the checker alone passed".to_string(),
                Err(why) => format!("checker: {why}"),
            }
        ))
    };
    Judgement {
        verdict,
        changed_inputs,
        missing_outputs: checks::missing_or_empty(ws, task.outputs),
    }
}
