//! [`StepInput`]: what an executor is shown of the run for one step.

use crate::model::observations::RunFacts;
use crate::model::plan::{Plan, Step, StepStatus};
use crate::model::plan_text::render_plan_header_and_digest;
use crate::model::text::truncate_chars;

/// An earlier step as a later one sees it: its result and what its tools really did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EarlierStep {
    /// `step 0 "Ask the user" (completed)`.
    pub label: String,
    /// The model's own result text (or the error), cut.
    pub result: String,
    /// The recorded facts (docs/direct.md, "Observations"), one line each.
    pub facts: Vec<String>,
}

/// How much of the run a step is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputBudget {
    /// Characters of each dependency's result.
    pub result_chars: usize,
    /// Characters of all earlier steps together (results and facts).
    pub total_chars: usize,
}

/// Everything an executor sees of the run: the task, a one-line-per-step digest, the step,
/// and the earlier steps it builds on (dependencies first, then earlier steps whose tools
/// recorded facts, within a budget). Never the whole run's history.
#[derive(Debug, Clone, PartialEq)]
pub struct StepInput {
    pub step: Step,
    pub index: usize,
    pub digest: String,
    pub earlier: Vec<EarlierStep>,
    /// The plan's only step is the task itself (direct mode): no plan to show.
    pub whole_task: bool,
    /// For a retry: what the step's earlier attempts' tools really did (the user's answers,
    /// files written), one line each, so a retry does not ask or write again blind.
    pub own: Vec<String>,
    /// For a retry: why the last attempt's answer was not accepted, when that is evidence
    /// the model can act on (a check of the answer, the verifier). `None` when the last
    /// attempt ended otherwise (the model gave up, a loop, the model's reply could not be
    /// read): the retry then starts from the step alone (docs/direct.md, "Retries").
    pub rejection: Option<String>,
    /// Every other step of the plan is completed or skipped: this step's success is the
    /// run's, so its loop checks the task's outputs before accepting it.
    pub last_open: bool,
}

impl StepInput {
    /// Builds the input of step `index`: its explicit dependencies, or for a flat plan the
    /// step right before it, then the other earlier steps that recorded facts (the user's
    /// answers, files written), most recent first, until `budget.total_chars` is spent.
    pub fn new(plan: &Plan, index: usize, facts: &RunFacts, budget: InputBudget) -> StepInput {
        let step = plan.steps[index].clone();
        let mut upstream: Vec<usize> = step.upstream().filter_map(|id| plan.index_of(id)).collect();
        if upstream.is_empty() && step.depends_on.is_empty() && index > 0 {
            upstream.push(index - 1);
        }
        let others = (0..index)
            .rev()
            .filter(|i| !upstream.contains(i))
            .filter(|&i| {
                matches!(
                    plan.steps[i].status,
                    StepStatus::Completed | StepStatus::Failed
                )
            })
            .filter(|&i| {
                let f = facts.step(&plan.steps[i].id);
                !f.answers.is_empty() || !f.files.is_empty()
            })
            .collect::<Vec<_>>();
        let mut spent = 0;
        let mut earlier = Vec::new();
        for (n, i) in upstream.iter().chain(others.iter()).enumerate() {
            let s = &plan.steps[*i];
            let step_facts = facts.step(&s.id);
            let text = s.result.as_deref().or(s.error.as_deref());
            if text.is_none() && step_facts.is_empty() {
                continue;
            }
            // Steps that are not dependencies show their facts, and a short result.
            let result_chars = if n < upstream.len() {
                budget.result_chars
            } else {
                budget.result_chars / 4
            };
            let entry = EarlierStep {
                label: format!("step {i} \"{}\" ({})", s.description, s.status),
                result: truncate_chars(text.unwrap_or("(no result)"), result_chars),
                facts: step_facts.lines(),
            };
            let size = entry.label.len()
                + entry.result.len()
                + entry.facts.iter().map(String::len).sum::<usize>();
            if spent + size > budget.total_chars && !earlier.is_empty() {
                break;
            }
            spent += size;
            earlier.push(entry);
        }
        let own = if step.attempts() > 1 {
            facts.step(&step.id).lines()
        } else {
            Vec::new()
        };
        StepInput {
            // Set by the scheduler, which knows how the last attempt ended.
            rejection: None,
            last_open: plan.only_open_step(index),
            whole_task: plan.steps.len() == 1 && step.description.trim() == plan.goal.trim(),
            own,
            step,
            index,
            digest: render_plan_header_and_digest(plan),
            earlier,
        }
    }
}
