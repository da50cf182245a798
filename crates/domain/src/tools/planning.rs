//! The `planning` function, as OpenManus's `PlanningTool` exposes it to the model: commands
//! `create`, `update`, `list`, `get`, `set_active`, `mark_step`, `delete` with the parameters
//! `command`, `plan_id`, `title`, `steps`, `step_index`, `step_status`, `step_notes`.
//!
//! Every invalid call returns `Err(message)`: the message is meant for the model, which gets
//! it as the tool result and can correct itself. Nothing here panics on model input.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::model::plan::{Plan, StepSpec, StepStatus};
use crate::model::plan_check::{check_step_texts, STEP_MAX_CHARS, STEP_MIN_CHARS, TITLE_MAX_CHARS};
use crate::model::plan_text::render_plan_text;
use crate::ports::llm::ToolSchema;

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
        }
    }

    /// Bounds the number of steps a `create` or `update` may list.
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
        }
    }

    pub fn schema() -> ToolSchema {
        ToolSchema {
            name: PLANNING.to_string(),
            description: "A planning tool that allows the agent to create and manage plans for \
                          solving complex tasks. The tool provides functionality for creating \
                          plans, updating plan steps, and tracking progress."
                .to_string(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "command": {
                        "description": "The command to execute. Available commands: create, update, list, get, set_active, mark_step, delete.",
                        "enum": COMMANDS,
                        "type": "string"
                    },
                    "plan_id": {
                        "description": "Unique identifier for the plan. Required for update, set_active, and delete commands. Optional for create (one is generated), get and mark_step (uses the active plan if not specified).",
                        "type": "string"
                    },
                    "title": {
                        "description": "Title for the plan. Required for create command, optional for update command.",
                        "type": "string"
                    },
                    "steps": {
                        "description": "List of plan steps. Required for create command, optional for update command. A step may start with a [KIND] tag.",
                        "type": "array",
                        "items": {"type": "string"}
                    },
                    "step_index": {
                        "description": "Index of the step to update (0-based). Required for mark_step command.",
                        "type": "integer"
                    },
                    "step_status": {
                        "description": "Status to set for a step. Used with mark_step command.",
                        "enum": ["not_started", "in_progress", "completed", "blocked", "failed", "skipped"],
                        "type": "string"
                    },
                    "step_notes": {
                        "description": "Additional notes for a step. Optional for mark_step command.",
                        "type": "string"
                    }
                },
                "required": ["command"],
                "additionalProperties": false
            }),
        }
    }

    /// The `planning` function narrowed to `create` (same name: the tool name is a
    /// contract): `command` can only be `create`, `title` (1..80 chars) and 1..`max_steps`
    /// steps (3..200 chars each) are required. A grammar-constrained model cannot leave them
    /// out, and a server that honours `required` will not either.
    pub fn create_schema(max_steps: usize) -> ToolSchema {
        Self::narrowed(
            "create",
            max_steps,
            "Create the plan: a short title and the steps.",
        )
    }

    /// The `planning` function narrowed to `update` of the active plan, as
    /// [`PlanningTool::create_schema`] is to `create`; `max_steps` counts the whole new list.
    pub fn update_schema(max_steps: usize) -> ToolSchema {
        Self::narrowed(
            "update",
            max_steps,
            "Replace the plan's steps with the full new list (completed steps kept as they are).",
        )
    }

    fn narrowed(command: &str, max_steps: usize, description: &str) -> ToolSchema {
        ToolSchema {
            name: PLANNING.to_string(),
            description: description.to_string(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "command": {"type": "string", "enum": [command]},
                    "title": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": TITLE_MAX_CHARS,
                        "description": "a short title of the plan"
                    },
                    "steps": {
                        "type": "array",
                        "minItems": 1,
                        "maxItems": max_steps.max(1),
                        "items": {"type": "string", "minLength": STEP_MIN_CHARS, "maxLength": STEP_MAX_CHARS},
                        "description": "each step one concrete action, in order"
                    }
                },
                "required": ["command", "title", "steps"],
                "additionalProperties": false
            }),
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
        let specs = parse_steps(obj.get("steps"))?.ok_or(
            "Error: parameter `steps` is missing; it must be a non-empty list of strings for \
             command: create",
        )?;
        self.check(&specs)?;
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
            self.check(specs)?;
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
    fn check(&self, specs: &[StepSpec]) -> Result<(), String> {
        let texts: Vec<String> = specs.iter().map(|s| s.text.clone()).collect();
        check_step_texts(&texts, self.max_steps).map_err(|problems| {
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

fn opt_str(v: Option<&Value>, name: &str) -> Result<Option<String>, String> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(Value::Number(n)) => Ok(Some(n.to_string())),
        Some(other) => Err(format!(
            "Error: parameter `{name}` must be a string, got {other}"
        )),
    }
}

/// `steps` as strings (OpenManus) or, leniently, objects `{id?, description|text, depends_on?}`.
fn parse_steps(v: Option<&Value>) -> Result<Option<Vec<StepSpec>>, String> {
    let items = match v {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Array(items)) => items,
        // Some models send the list as a JSON string.
        Some(Value::String(s)) => {
            return match serde_json::from_str::<Value>(s) {
                Ok(inner @ Value::Array(_)) => parse_steps(Some(&inner)),
                _ => Err("Error: parameter `steps` must be a list of strings".to_string()),
            }
        }
        Some(_) => return Err("Error: parameter `steps` must be a list of strings".to_string()),
    };
    if items.is_empty() {
        return Err("Error: parameter `steps` must not be empty".to_string());
    }
    let mut specs = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let spec = match item {
            Value::String(s) => StepSpec::text(s.clone()),
            Value::Object(o) => {
                let text = o
                    .get("description")
                    .or_else(|| o.get("text"))
                    .or_else(|| o.get("step"))
                    .and_then(Value::as_str)
                    .ok_or_else(|| format!("Error: step {i} has no `description`"))?;
                let text = match o.get("kind").and_then(Value::as_str) {
                    Some(k) if !text.trim_start().starts_with('[') => format!("[{k}] {text}"),
                    _ => text.to_string(),
                };
                let depends_on = match o.get("depends_on") {
                    Some(Value::Array(ds)) => ds
                        .iter()
                        .map(|d| match d {
                            Value::String(s) => Ok(s.clone()),
                            Value::Number(n) => Ok(n.to_string()),
                            _ => Err(format!("Error: step {i} has an invalid dependency")),
                        })
                        .collect::<Result<Vec<_>, _>>()?,
                    _ => Vec::new(),
                };
                StepSpec {
                    id: o.get("id").and_then(|v| match v {
                        Value::String(s) => Some(s.clone()),
                        Value::Number(n) => Some(n.to_string()),
                        _ => None,
                    }),
                    text,
                    depends_on,
                }
            }
            _ => return Err(format!("Error: step {i} must be a string")),
        };
        if spec.text.trim().is_empty() {
            return Err(format!("Error: step {i} is empty"));
        }
        specs.push(spec);
    }
    Ok(Some(specs))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool_with_plan() -> PlanningTool {
        let mut t = PlanningTool::new("plan_1", "goal");
        t.execute(&json!({"command": "create", "title": "T", "steps": ["a", "[CODE] b", "c"]}))
            .expect("create succeeds");
        t
    }

    #[test]
    fn create_sets_the_active_plan_and_returns_its_text() {
        let mut t = PlanningTool::new("plan_1", "goal");
        let out = t
            .execute(&json!({"command": "create", "title": "T", "steps": ["a", "b"]}))
            .expect("create succeeds");
        assert!(out.starts_with("Plan created successfully with ID: plan_1"));
        assert!(out.contains("0. [ ] a"));
        let plan = t.active_plan().expect("active plan");
        assert_eq!(plan.steps().len(), 2);
        assert_eq!(plan.goal, "goal");
    }

    #[test]
    fn create_validates_its_parameters() {
        let mut t = PlanningTool::new("plan_1", "goal");
        for (args, needle) in [
            (json!({"title": "T"}), "`command` is required"),
            (
                json!({"command": "create", "title": "T"}),
                "`steps` is missing",
            ),
            (
                json!({"command": "create", "title": "T", "steps": []}),
                "must not be empty",
            ),
            (
                json!({"command": "create", "title": "T", "steps": ["a", 3]}),
                "step 1 must be a string",
            ),
            (
                json!({"command": "create", "title": "T", "steps": [{"id": "x", "description": "a"}, {"id": "x", "description": "b"}]}),
                "duplicate step id 'x'",
            ),
            (
                json!({"command": "explode"}),
                "unrecognized command: explode",
            ),
            (json!([1, 2]), "must be a JSON object"),
        ] {
            let err = t.execute(&args).expect_err("invalid call");
            assert!(err.contains(needle), "{err:?} should mention {needle:?}");
        }
        assert!(t
            .call("{not json")
            .expect_err("bad json")
            .contains("not valid JSON"));
        assert!(t.active_plan().is_none());
    }

    #[test]
    fn duplicate_plan_ids_are_refused() {
        let mut t = tool_with_plan();
        let err = t
            .execute(
                &json!({"command": "create", "plan_id": "plan_1", "title": "T", "steps": ["a"]}),
            )
            .expect_err("duplicate id");
        assert!(err.contains("already exists"));
    }

    #[test]
    fn mark_step_checks_bounds_and_status() {
        let mut t = tool_with_plan();
        let err = t
            .execute(&json!({"command": "mark_step", "step_index": 3, "step_status": "completed"}))
            .expect_err("out of range");
        assert!(err.contains("Valid indices range from 0 to 2"), "{err}");
        let err = t
            .execute(&json!({"command": "mark_step", "step_index": -1}))
            .expect_err("negative");
        assert!(err.contains("invalid step_index: -1"));
        let err = t
            .execute(&json!({"command": "mark_step", "step_index": 0, "step_status": "done"}))
            .expect_err("bad status");
        assert!(err.contains("invalid step_status: done"));
        let out = t
            .execute(&json!({"command": "mark_step", "step_index": 0, "step_status": "completed", "step_notes": "n"}))
            .expect("walks through in_progress");
        assert!(out.contains("0. [✓] a"));
        assert!(out.contains("Notes: n"));
        let err = t
            .execute(
                &json!({"command": "mark_step", "step_index": 0, "step_status": "in_progress"}),
            )
            .expect_err("completed -> in_progress is illegal");
        assert!(
            err.contains("cannot move from completed to in_progress"),
            "{err}"
        );
    }

    #[test]
    fn update_keeps_status_and_notes_of_unchanged_steps() {
        let mut t = tool_with_plan();
        t.execute(&json!({"command": "mark_step", "step_index": 0, "step_status": "completed", "step_notes": "kept"}))
            .expect("mark");
        t.execute(&json!({"command": "update", "steps": ["a", "new", "c"], "title": "T2"}))
            .expect("update");
        let p = t.active_plan().expect("active");
        assert_eq!(p.title, "T2");
        assert_eq!(p.steps()[0].status(), StepStatus::Completed);
        assert_eq!(p.steps()[0].notes, "kept");
        assert_eq!(p.steps()[1].status(), StepStatus::NotStarted);
        assert_eq!(p.steps()[1].id, "s4");
        assert_eq!(p.steps()[2].id, "s3");
        assert_eq!(p.version(), 2);
    }

    #[test]
    fn list_get_set_active_delete() {
        let mut t = tool_with_plan();
        t.execute(&json!({"command": "create", "plan_id": "other", "title": "O", "steps": ["x"]}))
            .expect("second plan");
        let list = t.execute(&json!({"command": "list"})).expect("list");
        assert!(
            list.contains("• other (active): O - 0/1 steps completed"),
            "{list}"
        );
        assert!(list.contains("• plan_1: T - 0/3 steps completed"));
        t.execute(&json!({"command": "set_active", "plan_id": "plan_1"}))
            .expect("set_active");
        assert!(t
            .execute(&json!({"command": "get"}))
            .expect("get")
            .contains("(ID: plan_1)"));
        assert!(t
            .execute(&json!({"command": "set_active", "plan_id": "nope"}))
            .expect_err("unknown")
            .contains("no plan found with ID: nope"));
        t.execute(&json!({"command": "delete", "plan_id": "plan_1"}))
            .expect("delete");
        assert!(t.active_plan().is_none());
        assert!(t
            .execute(&json!({"command": "get"}))
            .expect_err("no active")
            .contains("no active plan"));
    }

    #[test]
    fn a_missing_title_defaults_to_the_task_head() {
        let mut t = PlanningTool::new("plan_1", "write hello.txt");
        t.execute(&json!({"command": "create", "steps": ["Write hello.txt"]}))
            .expect("created without a title");
        assert_eq!(
            t.active_plan().expect("active").title,
            "Plan for: write hello.txt"
        );
    }

    #[test]
    fn create_and_update_refuse_junk_steps_beyond_the_bound() {
        let mut t = PlanningTool::new("plan_1", "goal").with_max_steps(3);
        let err = t
            .execute(&json!({"command": "create", "title": "T", "steps": ["1", "2", "create", "Write x", "Write x"]}))
            .expect_err("junk");
        assert!(err.contains("5 steps, at most 3"), "{err}");
        assert!(
            err.contains("steps 0 (\"1\"), 1 (\"2\") are only a number"),
            "{err}"
        );
        assert!(err.contains("step 2 (\"create\") is a command"), "{err}");
        assert!(err.contains("step 4 repeats step 3"), "{err}");
        assert!(t.active_plan().is_none());
        t.execute(&json!({"command": "create", "title": "T", "steps": ["Write x", "Read x"]}))
            .expect("valid");
        let err = t
            .execute(&json!({"command": "update", "steps": ["Write x", "Write x"]}))
            .expect_err("duplicate in update");
        assert!(err.contains("step 1 repeats step 0"), "{err}");
    }

    #[test]
    fn narrowed_schemas_snapshot() {
        insta::assert_json_snapshot!(
            "narrowed_schemas",
            json!({
                "create": PlanningTool::create_schema(6).parameters,
                "update": PlanningTool::update_schema(8).parameters,
            })
        );
    }

    #[test]
    fn schema_snapshot() {
        insta::assert_json_snapshot!(PlanningTool::schema().parameters);
    }

    mod fuzz {
        use proptest::prelude::*;

        use super::*;

        /// JSON values shaped like what models send the planning tool: its argument names,
        /// any types, nesting.
        fn arb_args() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::from),
                any::<i64>().prop_map(Value::from),
                any::<f64>().prop_map(
                    |f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
                ),
                prop_oneof![
                    Just("create".to_string()),
                    Just("update".to_string()),
                    Just("mark_step".to_string()),
                    Just("get".to_string()),
                    Just("delete".to_string()),
                    Just("plan_1".to_string()),
                    Just("completed".to_string()),
                    "\\PC{0,30}",
                ]
                .prop_map(Value::from),
            ];
            let value = leaf.prop_recursive(3, 40, 6, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
                    prop::collection::btree_map("[a-z_]{1,12}", inner, 0..5)
                        .prop_map(|m| Value::Object(m.into_iter().collect())),
                ]
            });
            let key = prop_oneof![
                Just("command".to_string()),
                Just("plan_id".to_string()),
                Just("title".to_string()),
                Just("steps".to_string()),
                Just("step_index".to_string()),
                Just("step_status".to_string()),
                Just("step_notes".to_string()),
                "[a-z_]{1,10}",
            ];
            prop::collection::btree_map(key, value, 0..7)
                .prop_map(|m| Value::Object(m.into_iter().collect()))
        }

        proptest! {
            /// Any arguments, in any order of calls, get an answer (a result or an error for
            /// the model), never a panic; a plan the tool holds always stays valid.
            #[test]
            fn fuzz_any_arguments_never_panic(calls in prop::collection::vec(arb_args(), 1..6)) {
                let mut tool = PlanningTool::new("plan_1", "goal").with_max_steps(6);
                for args in &calls {
                    let _ = tool.execute(args);
                    if let Some(plan) = tool.active_plan() {
                        prop_assert!(!plan.steps().is_empty());
                    }
                }
            }

            /// Raw text as the model's arguments string (broken JSON included).
            #[test]
            fn fuzz_any_argument_text_never_panics(text in "\\PC{0,200}") {
                let mut tool = PlanningTool::new("plan_1", "goal");
                let _ = tool.call(&text);
            }
        }
    }
}
