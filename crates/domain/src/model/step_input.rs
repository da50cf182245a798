//! [`StepInput`]: what an executor is shown of the run for one step.

use crate::model::plan::{Plan, Step};
use crate::model::plan_text::render_plan_header_and_digest;
use crate::model::text::truncate_chars;

/// Everything an executor sees of the run: the task, a one-line-per-step digest, the step,
/// and the (truncated) results of what it depends on. Never the whole run's history.
#[derive(Debug, Clone, PartialEq)]
pub struct StepInput {
    pub step: Step,
    pub index: usize,
    pub digest: String,
    /// (label, result) of the step's dependencies.
    pub dependencies: Vec<(String, String)>,
}

impl StepInput {
    /// Builds the input of step `index`: explicit dependencies, or for a flat plan the
    /// step right before it; each dependency's result is cut to `max_dependency_chars`.
    pub fn new(plan: &Plan, index: usize, max_dependency_chars: usize) -> StepInput {
        let step = plan.steps[index].clone();
        let mut upstream: Vec<usize> = step.upstream().filter_map(|id| plan.index_of(id)).collect();
        if upstream.is_empty() && step.depends_on.is_empty() && index > 0 {
            upstream.push(index - 1);
        }
        let dependencies = upstream
            .into_iter()
            .filter_map(|i| {
                let s = &plan.steps[i];
                let text = s.result.as_deref().or(s.error.as_deref())?;
                Some((
                    format!("step {i} \"{}\" ({})", s.description, s.status),
                    truncate_chars(text, max_dependency_chars),
                ))
            })
            .collect();
        StepInput {
            step,
            index,
            digest: render_plan_header_and_digest(plan),
            dependencies,
        }
    }
}
