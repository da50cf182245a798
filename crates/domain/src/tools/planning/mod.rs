//! The `planning` function, as OpenManus's `PlanningTool` exposes it to the model: commands
//! `create`, `update`, `list`, `get`, `set_active`, `mark_step`, `delete` with the parameters
//! `command`, `plan_id`, `title`, `steps`, `step_index`, `step_status`, `step_notes`.
//!
//! Every invalid call returns `Err(message)`: the message is meant for the model, which gets
//! it as the tool result and can correct itself. Nothing here panics on model input.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::model::plan::{Plan, StepSpec, StepStatus};
use crate::model::plan_check::check_step_texts;
use crate::model::plan_text::render_plan_text;

use self::arguments::{opt_str, parse_steps};

mod arguments;
mod schema;

pub const PLANNING: &str = "planning";

const COMMANDS: [&str; 7] = crate::model::plan_check::PLANNING_COMMANDS;

/// Plans held during planning, keyed by id, with one active plan.
#[derive(Debug, Clone)]
pub struct PlanningTool {
    plans: BTreeMap<String, Plan>,
    active: Option<String>,
    default_plan_id: String,
    goal: String,
    /// Most steps a `create` or `update` may list (`None`: no bound).
    max_steps: Option<usize>,
    /// How many steps a `create` listed when it was cut to `max_steps`.
    truncated_from: Option<usize>,
}

impl PlanningTool {
    /// `default_plan_id` names a plan created without `plan_id`; `goal` is the run's task.
    pub fn new(default_plan_id: impl Into<String>, goal: impl Into<String>) -> PlanningTool {
        PlanningTool {
            plans: BTreeMap::new(),
            active: None,
            default_plan_id: default_plan_id.into(),
            goal: goal.into(),
            max_steps: None,
            truncated_from: None,
        }
    }

    /// How many steps the last `create` listed, when there were more than the bound and
    /// only the first ones were kept.
    pub fn truncated_from(&self) -> Option<usize> {
        self.truncated_from
    }

    /// Bounds the number of steps a `create` or `update` may list: a `create` over the bound
    /// keeps the first ones ([`PlanningTool::truncated_from`]), an `update` is refused.
    pub fn with_max_steps(mut self, max_steps: usize) -> PlanningTool {
        self.max_steps = Some(max_steps);
        self
    }

    /// A tool holding `plan` as its active plan (for `update` during a re-plan).
    pub fn with_plan(plan: Plan) -> PlanningTool {
        let id = plan.id.clone();
        let goal = plan.goal.clone();
        let mut plans = BTreeMap::new();
        plans.insert(id.clone(), plan);
        PlanningTool {
            plans,
            active: Some(id.clone()),
            default_plan_id: id,
            goal,
            max_steps: None,
            truncated_from: None,
        }
    }

    pub fn plans(&self) -> impl Iterator<Item = &Plan> {
        self.plans.values()
    }

    pub fn active_plan(&self) -> Option<&Plan> {
        self.active.as_ref().and_then(|id| self.plans.get(id))
    }

    /// Takes the active plan out of the tool (the runner owns it from then on).
    pub fn take_active_plan(&mut self) -> Option<Plan> {
        let id = self.active.take()?;
        self.plans.remove(&id)
    }

    /// Runs one call given the raw JSON arguments text the model wrote.
    pub fn call(&mut self, arguments: &str) -> Result<String, String> {
        let args: Value = serde_json::from_str(arguments).map_err(|e| {
            format!("Error: arguments are not valid JSON ({e}). Send one JSON object.")
        })?;
        self.execute(&args)
    }

    pub fn execute(&mut self, args: &Value) -> Result<String, String> {
        let obj = args
            .as_object()
            .ok_or("Error: arguments must be a JSON object")?;
        let command = obj
            .get("command")
            .and_then(Value::as_str)
            .ok_or("Error: parameter `command` is required")?;
        let plan_id = opt_str(obj.get("plan_id"), "plan_id")?;
        match command {
            "create" => self.create(plan_id, obj),
            "update" => self.update(plan_id, obj),
            "list" => Ok(self.list()),
            "get" => {
                let id = self.resolve(plan_id)?;
                Ok(render_plan_text(&self.plans[&id]))
            }
            "set_active" => {
                let id = plan_id
                    .ok_or("Error: parameter `plan_id` is required for command: set_active")?;
                if !self.plans.contains_key(&id) {
                    return Err(format!("Error: no plan found with ID: {id}"));
                }
                self.active = Some(id.clone());
                Ok(format!(
                    "Plan '{id}' is now the active plan.\n\n{}",
                    render_plan_text(&self.plans[&id])
                ))
            }
            "mark_step" => self.mark_step(plan_id, obj),
            "delete" => {
                let id =
                    plan_id.ok_or("Error: parameter `plan_id` is required for command: delete")?;
                if self.plans.remove(&id).is_none() {
                    return Err(format!("Error: no plan found with ID: {id}"));
                }
                if self.active.as_deref() == Some(id.as_str()) {
                    self.active = None;
                }
                Ok(format!("Plan '{id}' has been deleted."))
            }
            other => Err(format!(
                "Error: unrecognized command: {other}. Allowed commands are: {}",
                COMMANDS.join(", ")
            )),
        }
    }

    fn create(
        &mut self,
        plan_id: Option<String>,
        obj: &serde_json::Map<String, Value>,
    ) -> Result<String, String> {
        let id = match plan_id {
            Some(id) => id,
            None => self.fresh_plan_id(),
        };
        if self.plans.contains_key(&id) {
            return Err(format!(
                "Error: a plan with ID '{id}' already exists. Use 'update' to modify existing plans."
            ));
        }
        // A missing or empty title is not worth a re-ask (weak models answer the same way
        // again): the plan is titled after the task's head instead.
        let title = opt_str(obj.get("title"), "title")?
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| crate::prompts::default_plan_title(&self.goal));
        let mut specs = parse_steps(obj.get("steps"))?.ok_or(
            "Error: parameter `steps` is missing; it must be a non-empty list of strings for \
             command: create",
        )?;
        // Every junk problem is reported, the bound is not: a longer list keeps its head.
        self.check(&specs, None)?;
        let listed = specs.len();
        if let Some(max) = self.max_steps.filter(|&max| listed > max) {
            specs.truncate(max);
        }
        self.truncated_from = (specs.len() < listed).then_some(listed);
        let plan = Plan::from_specs(id.clone(), title, self.goal.clone(), &specs)
            .map_err(|e| format!("Error: {e}"))?;
        let text = render_plan_text(&plan);
        self.plans.insert(id.clone(), plan);
        self.active = Some(id.clone());
        Ok(format!("Plan created successfully with ID: {id}\n\n{text}"))
    }

    fn update(
        &mut self,
        plan_id: Option<String>,
        obj: &serde_json::Map<String, Value>,
    ) -> Result<String, String> {
        let id = self.resolve(plan_id)?;
        let title = opt_str(obj.get("title"), "title")?;
        let specs = parse_steps(obj.get("steps"))?;
        if let Some(specs) = &specs {
            self.check(specs, self.max_steps)?;
        }
        let plan = self
            .plans
            .get_mut(&id)
            .ok_or_else(|| format!("Error: no plan found with ID: {id}"))?;
        if let Some(specs) = specs {
            plan.replace_steps(&specs)
                .map_err(|e| format!("Error: {e}"))?;
        } else if title.is_none() {
            return Err("Error: `update` needs `title` or `steps`".to_string());
        }
        if let Some(t) = title.filter(|t| !t.trim().is_empty()) {
            plan.title = t;
        }
        Ok(format!(
            "Plan updated successfully: {id}\n\n{}",
            render_plan_text(plan)
        ))
    }

    /// The junk checks of [`check_step_texts`], as one error listing every problem.
    fn check(&self, specs: &[StepSpec], max_steps: Option<usize>) -> Result<(), String> {
        let texts: Vec<String> = specs.iter().map(|s| s.text.clone()).collect();
        check_step_texts(&texts, max_steps).map_err(|problems| {
            format!(
                "Error: the steps were not accepted: {}",
                problems.join("; ")
            )
        })
    }

    fn list(&self) -> String {
        if self.plans.is_empty() {
            return "No plans available. Create a plan with the 'create' command.".to_string();
        }
        let mut out = String::from("Available plans:\n");
        for (id, plan) in &self.plans {
            let marker = if self.active.as_deref() == Some(id.as_str()) {
                " (active)"
            } else {
                ""
            };
            let c = plan.counts();
            out.push_str(&format!(
                "• {id}{marker}: {} - {}/{} steps completed\n",
                plan.title,
                c.completed,
                plan.steps().len()
            ));
        }
        out
    }

    fn mark_step(
        &mut self,
        plan_id: Option<String>,
        obj: &serde_json::Map<String, Value>,
    ) -> Result<String, String> {
        let id = self.resolve(plan_id)?;
        let index = match obj.get("step_index") {
            Some(v) => v
                .as_i64()
                .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
                .ok_or("Error: `step_index` must be an integer")?,
            None => {
                return Err(
                    "Error: parameter `step_index` is required for command: mark_step".into(),
                )
            }
        };
        let status = opt_str(obj.get("step_status"), "step_status")?
            .map(|s| {
                StepStatus::parse(&s).ok_or_else(|| {
                    format!(
                        "Error: invalid step_status: {s}. Valid statuses are: not_started, in_progress, completed, blocked, failed, skipped"
                    )
                })
            })
            .transpose()?;
        let notes = opt_str(obj.get("step_notes"), "step_notes")?;
        let plan = self
            .plans
            .get_mut(&id)
            .ok_or_else(|| format!("Error: no plan found with ID: {id}"))?;
        let n = plan.steps().len();
        let idx = usize::try_from(index)
            .ok()
            .filter(|i| *i < n)
            .ok_or_else(|| {
                format!(
                    "Error: invalid step_index: {index}. Valid indices range from 0 to {}.",
                    n.saturating_sub(1)
                )
            })?;
        if let Some(to) = status {
            let step_id = plan.steps()[idx].id.clone();
            move_step(plan, &step_id, to).map_err(|e| format!("Error: {e}"))?;
        }
        if let Some(notes) = notes {
            plan.steps_mut()[idx].notes = notes;
        }
        Ok(format!(
            "Step {idx} updated in plan '{id}'.\n\n{}",
            render_plan_text(plan)
        ))
    }

    fn resolve(&self, plan_id: Option<String>) -> Result<String, String> {
        let id = plan_id
            .or_else(|| self.active.clone())
            .ok_or("Error: no active plan. Please specify a plan_id or create a plan first.")?;
        if !self.plans.contains_key(&id) {
            return Err(format!("Error: no plan found with ID: {id}"));
        }
        Ok(id)
    }

    fn fresh_plan_id(&self) -> String {
        if !self.plans.contains_key(&self.default_plan_id) {
            return self.default_plan_id.clone();
        }
        (2..)
            .map(|n| format!("{}_{n}", self.default_plan_id))
            .find(|id| !self.plans.contains_key(id))
            .unwrap_or_default()
    }
}

/// Applies a status asked for by the model. A model often jumps straight from not_started to
/// completed (or blocked/failed); the step is then walked through in_progress, which keeps the
/// state machine's invariants. Any other illegal move is refused.
fn move_step(
    plan: &mut Plan,
    step_id: &str,
    to: StepStatus,
) -> Result<(), crate::error::PlanError> {
    let from = plan
        .step(step_id)
        .map(|s| s.status())
        .ok_or_else(|| crate::error::PlanError::UnknownStep(step_id.to_string()))?;
    if from == to {
        return Ok(());
    }
    if from == StepStatus::NotStarted
        && matches!(
            to,
            StepStatus::Completed | StepStatus::Failed | StepStatus::Blocked
        )
    {
        plan.transition(step_id, StepStatus::InProgress)?;
    }
    plan.transition(step_id, to).map(|_| ())
}

#[cfg(test)]
mod tests;
