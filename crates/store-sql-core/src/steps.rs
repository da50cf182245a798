//! The `steps` projection: the steps of a plan's newest version, one row each, for
//! querying (the plan's JSON in `plans` stays the whole truth).

use domain::{Plan, Step};

use crate::codec::{int_to_sql, to_json};
use crate::RecordError;

/// One row of `steps` (after `run_id, plan_id`), in the columns' order: `step_id,
/// position, description, kind, status, result, error, notes, attempts, depends_on,
/// attachments`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepRow<'a> {
    pub step_id: &'a str,
    pub position: i64,
    pub description: &'a str,
    pub kind: Option<&'a str>,
    pub status: &'static str,
    pub result: Option<&'a str>,
    pub error: Option<&'a str>,
    pub notes: &'a str,
    pub attempts: i64,
    /// JSON array of step ids.
    pub depends_on: String,
    /// JSON array of workspace-relative paths.
    pub attachments: String,
}

/// The ids of `plan`'s steps: the rows of its plan id not among them are deleted.
pub fn step_ids(plan: &Plan) -> Vec<&str> {
    plan.steps().iter().map(|s| s.id.as_str()).collect()
}

/// The rows of `plan`'s steps, in plan order.
pub fn step_rows(plan: &Plan) -> Result<Vec<StepRow<'_>>, RecordError> {
    plan.steps()
        .iter()
        .enumerate()
        .map(|(position, step)| step_row(position, step))
        .collect()
}

fn step_row(position: usize, step: &Step) -> Result<StepRow<'_>, RecordError> {
    let Step {
        id,
        description,
        kind,
        depends_on,
        result,
        error,
        notes,
        attachments,
        // Edges, fallbacks and the interruption mark are kept in the plan's JSON, not
        // projected into `steps`; status and attempts are read through the state machine.
        fallback: _,
        condition: _,
        rollback_of: _,
        group: _,
        ..
    } = step;
    Ok(StepRow {
        step_id: id,
        position: int_to_sql("step position", position as u64)?,
        description,
        kind: kind.as_deref(),
        status: step.status().as_str(),
        result: result.as_deref(),
        error: error.as_deref(),
        notes,
        attempts: i64::from(step.attempts()),
        depends_on: to_json("step depends_on", depends_on)?,
        attachments: to_json("step attachments", attachments)?,
    })
}

/// A newer-or-equal `version` of a plan replaces its rows; a late save of an older one
/// leaves the newest version's be (`newest`: the highest version stored before this save).
pub fn replaces_steps(newest: Option<i64>, version: i64) -> bool {
    newest.is_none_or(|newest| version >= newest)
}
