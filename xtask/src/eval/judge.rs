//! The verdict on one instance's workspace after its run: its protected inputs first (a
//! changed one fails the task whatever the checks say), then its checks in order, and which
//! of its outputs are missing or empty (docs/eval.md).

use std::path::Path;

use super::checks::{self, Verdict};
use super::inputs;
use super::instance::Instance;

/// What the workspace shows after a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Judgement {
    /// `Err` says why the task failed: the changed inputs, else the first failing check.
    pub verdict: Verdict,
    /// Seeded files the task did not allow to change that changed, with how.
    pub changed_inputs: Vec<String>,
    /// The task's output files that are missing or empty.
    pub missing_outputs: Vec<String>,
}

/// Judges `ws`; `scratch` is a folder the checks may use (see `checks::evaluate`).
pub(crate) fn judge(instance: &Instance, ws: &Path, scratch: &Path) -> Judgement {
    let changed_inputs = inputs::changed(ws, &instance.seed, &instance.may_change);
    let checked = instance
        .checks
        .iter()
        .try_for_each(|c| checks::evaluate(c, ws, scratch));
    let _ = std::fs::remove_dir_all(scratch);
    let verdict = if changed_inputs.is_empty() {
        checked
    } else {
        Err(format!(
            "{} ({})",
            changed_inputs.join(", "),
            match checked {
                Ok(()) => "the checks alone passed".to_string(),
                Err(why) => format!("checks: {why}"),
            }
        ))
    };
    Judgement {
        verdict,
        changed_inputs,
        missing_outputs: checks::missing_or_empty(ws, &instance.outputs()),
    }
}
