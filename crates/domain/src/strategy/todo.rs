//! The **todo** style (docs/design.md, "The todo style"): start with 1-3
//! TODOs with dependencies; after each TODO the LLM may add, modify, block or close TODOs.
//! At most `max_todos` items; at 80% of the cap the LLM is asked to merge or close items.
//! An update that would create a dependency cycle is refused whole. A TODO whose dependency
//! is blocked becomes blocked too (the scheduler never force-runs an unready TODO: same
//! section). The run stops after `stall_rounds` rounds without a completed TODO.

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::Value;

use crate::engine::context::RunContext;
use crate::engine::runtime::Runtime;
use crate::engine::structured::ask_json;
use crate::error::Error;
use crate::model::event::EventKind;
use crate::model::plan::{Plan, Step, StepStatus};
use crate::ports::llm::{CallPurpose, ChatMessage};
use crate::prompts;
use crate::strategy::planner::{plan_from_planner, PlanRequest};
use crate::strategy::response_schemas;
use crate::strategy::{InitialPlan, PlanningStrategy, Revisions, StepReport};

/// Most TODOs the initial list may have.
const MAX_INITIAL: usize = 3;

#[derive(Debug, Default)]
pub(crate) struct Todo {
    /// Rounds in a row without a completed TODO.
    stalled: u32,
    stall_limit: u32,
}

impl Todo {
    pub fn new(stall_limit: u32) -> Todo {
        Todo {
            stalled: 0,
            stall_limit: stall_limit.max(1),
        }
    }
}

#[derive(Debug, Deserialize)]
struct NewTodo {
    #[serde(alias = "text")]
    description: String,
    #[serde(default, alias = "depends_on")]
    dependencies: Vec<Value>,
}

#[derive(Debug, Deserialize)]
struct ModifyTodo {
    id: Value,
    #[serde(default)]
    description: Option<String>,
    #[serde(default, alias = "depends_on")]
    dependencies: Option<Vec<Value>>,
}

#[derive(Debug, Deserialize)]
struct IdReason {
    id: Value,
    #[serde(default)]
    reason: String,
}

#[derive(Debug, Deserialize)]
struct Update {
    #[serde(default)]
    needs_update: bool,
    #[serde(default)]
    reason: String,
    #[serde(default)]
    new_todos: Vec<NewTodo>,
    #[serde(default)]
    modify_todos: Vec<ModifyTodo>,
    #[serde(default)]
    blocked_todos: Vec<IdReason>,
    #[serde(default)]
    close_todos: Vec<IdReason>,
}

/// A TODO id as the model may write it: "s3", 3 or "3" all name step `s3`.
fn todo_id(v: &Value) -> Option<String> {
    match v {
        Value::Number(n) => n.as_u64().map(|n| format!("s{n}")),
        Value::String(s) => {
            let s = s.trim();
            if s.chars().all(|c| c.is_ascii_digit()) && !s.is_empty() {
                Some(format!("s{s}"))
            } else {
                Some(s.to_string())
            }
        }
        _ => None,
    }
}

fn todo_list(plan: &Plan) -> String {
    plan.steps()
        .iter()
        .map(|s| {
            let deps = if s.depends_on.is_empty() {
                String::new()
            } else {
                format!(" (after {})", s.depends_on.join(", "))
            };
            let result = s
                .result
                .as_deref()
                .or(s.error.as_deref())
                .map(|r| format!(" — {}", prompts::truncate_chars(r, 160)))
                .unwrap_or_default();
            format!(
                "{} {} {}{deps}{result}\n",
                s.id,
                s.status().marker(),
                s.description
            )
        })
        .collect()
}

/// Applies an update to a copy of the plan; the copy replaces the plan only if valid.
fn apply_update(
    plan: &Plan,
    update: &Update,
    max_todos: usize,
) -> Result<(Plan, Vec<String>), String> {
    let mut next = plan.clone();
    let mut notes = Vec::new();
    let mut added = Vec::new();
    let pending = |p: &Plan, id: &str| -> Result<usize, String> {
        let i = p
            .index_of(id)
            .ok_or_else(|| format!("unknown TODO '{id}'"))?;
        if p.steps()[i].status() != StepStatus::NotStarted {
            return Err(format!("TODO '{id}' has already started and cannot change"));
        }
        Ok(i)
    };
    for m in &update.modify_todos {
        let id = todo_id(&m.id).ok_or("a modified TODO has no id")?;
        let i = pending(&next, &id)?;
        if let Some(d) = m.description.as_ref().filter(|d| !d.trim().is_empty()) {
            next.steps_mut()[i].description = d.trim().to_string();
        }
        if let Some(deps) = &m.dependencies {
            next.steps_mut()[i].depends_on = deps.iter().filter_map(todo_id).collect();
        }
    }
    for b in &update.blocked_todos {
        let id = todo_id(&b.id).ok_or("a blocked TODO has no id")?;
        let i = pending(&next, &id)?;
        next.transition(&id, StepStatus::Blocked)
            .map_err(|e| e.to_string())?;
        next.steps_mut()[i].error = Some(if b.reason.trim().is_empty() {
            "blocked by the planner".to_string()
        } else {
            b.reason.clone()
        });
    }
    for c in &update.close_todos {
        let id = todo_id(&c.id).ok_or("a closed TODO has no id")?;
        let i = pending(&next, &id)?;
        next.transition(&id, StepStatus::Skipped)
            .map_err(|e| e.to_string())?;
        next.steps_mut()[i].error = Some(format!("closed: {}", c.reason));
    }
    for t in &update.new_todos {
        if t.description.trim().is_empty() {
            continue;
        }
        if next.steps().len() + added.len() >= max_todos {
            notes.push(format!(
                "TODO \"{}\" not added: the list is at its limit of {max_todos}",
                t.description
            ));
            continue;
        }
        let mut step = Step::new(String::new(), &t.description);
        step.depends_on = t.dependencies.iter().filter_map(todo_id).collect();
        added.push(step);
    }
    let mut steps = next.steps().to_vec();
    steps.extend(added);
    next.set_steps(steps).map_err(|e| e.to_string())?;
    Ok((next, notes))
}

/// The planner's first TODOs (at most [`MAX_INITIAL`]) as a plan, or why they are not one.
fn initial_list(task: &str, value: &Value) -> Result<Plan, String> {
    let list = value.get("todos").unwrap_or(value);
    let todos: Vec<NewTodo> = serde_json::from_value(list.clone())
        .map_err(|e| format!("the TODO list was invalid: {e}"))?;
    let todos: Vec<&NewTodo> = todos
        .iter()
        .filter(|t| !t.description.trim().is_empty())
        .take(MAX_INITIAL)
        .collect();
    if todos.is_empty() {
        return Err("the TODO list was empty".to_string());
    }
    let mut plan = Plan::new(
        "plan_1",
        format!("TODO: {}", prompts::truncate_chars(task, 60)),
        task,
    );
    let steps = todos
        .iter()
        .map(|t| {
            let mut step = Step::new(String::new(), &t.description);
            // Initial dependencies are 1-based positions (or ids) within this list.
            step.depends_on = t.dependencies.iter().filter_map(todo_id).collect();
            step
        })
        .collect();
    plan.add_steps(steps)
        .map_err(|e| format!("the TODO list was invalid: {e}"))?;
    Ok(plan)
}

#[async_trait]
impl PlanningStrategy for Todo {
    async fn initial_plan(&mut self, ctx: &RunContext, rt: &Runtime) -> Result<InitialPlan, Error> {
        let request = PlanRequest {
            planner: "the TODO planner",
            messages: vec![
                ChatMessage::system(prompts::todo_system()),
                ChatMessage::user(prompts::todo_init(&ctx.task)),
            ],
            schema: ("todos", response_schemas::todo_init()),
        };
        let build = |value: &Value| initial_list(&ctx.task, value);
        plan_from_planner(ctx, rt, request, build, prompts::plan_invalid).await
    }

    fn stop_on_give_up(&self) -> bool {
        false
    }

    async fn after_step(
        &mut self,
        ctx: &RunContext,
        rt: &Runtime,
        plan: &mut Plan,
        report: &StepReport,
        _revisions: &mut Revisions,
    ) -> Result<Option<String>, Error> {
        self.stalled = if report.success { 0 } else { self.stalled + 1 };
        let max = rt.config.max_todos.max(1);
        let messages = vec![
            ChatMessage::system(prompts::todo_system()),
            ChatMessage::user(prompts::todo_update(
                &ctx.task,
                &prompts::truncate_chars(&report.text, 500),
                &todo_list(plan),
                plan.steps().len(),
                max,
            )),
        ];
        let answer = match ask_json(
            ctx,
            "todo-update",
            rt.planner_llm.as_ref(),
            CallPurpose::Plan,
            messages,
            Some(&report.step_id),
        )
        .await
        {
            Ok(a) => a,
            Err(e) => {
                let problem = e.recoverable()?;
                ctx.emit(EventKind::Error {
                    step_id: Some(report.step_id.clone()),
                    message: format!("TODO update failed: {problem}"),
                })
                .await?;
                return Ok(None);
            }
        };
        let update: Update = match serde_json::from_value(answer.value) {
            Ok(u) => u,
            Err(e) => {
                ctx.emit(EventKind::Error {
                    step_id: Some(report.step_id.clone()),
                    message: format!("TODO update ignored: invalid shape ({e})"),
                })
                .await?;
                return Ok(None);
            }
        };
        let touches = !update.new_todos.is_empty()
            || !update.modify_todos.is_empty()
            || !update.blocked_todos.is_empty()
            || !update.close_todos.is_empty();
        if !update.needs_update && !touches {
            return Ok(None);
        }
        match apply_update(plan, &update, max) {
            Ok((next, notes)) => {
                *plan = next;
                for note in notes {
                    ctx.emit(EventKind::Error {
                        step_id: None,
                        message: note,
                    })
                    .await?;
                }
                let reason = if update.reason.trim().is_empty() {
                    "TODO list updated".to_string()
                } else {
                    update.reason
                };
                Ok(Some(reason))
            }
            Err(e) => {
                ctx.emit(EventKind::Error {
                    step_id: Some(report.step_id.clone()),
                    message: format!("TODO update refused: {e}"),
                })
                .await?;
                Ok(None)
            }
        }
    }

    fn should_stop(&self) -> Option<String> {
        (self.stalled >= self.stall_limit).then(|| {
            format!(
                "no TODO was completed in the last {} rounds",
                self.stall_limit
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn plan() -> Plan {
        let texts: Vec<String> = ["a", "b"].iter().map(|s| s.to_string()).collect();
        Plan::from_texts("p", "t", "g", &texts).expect("plan")
    }

    fn update(v: Value) -> Update {
        serde_json::from_value(v).expect("update shape")
    }

    #[test]
    fn updates_add_modify_block_and_close() {
        let p = plan();
        let (next, notes) = apply_update(
            &p,
            &update(json!({
                "needs_update": true,
                "new_todos": [{"description": "c", "dependencies": ["s1"]}],
                "modify_todos": [{"id": 2, "description": "b2"}],
                "blocked_todos": [],
                "close_todos": []
            })),
            20,
        )
        .expect("valid");
        assert!(notes.is_empty());
        assert_eq!(next.steps()[1].description, "b2");
        assert_eq!(next.steps()[2].id, "s3");
        assert_eq!(next.steps()[2].depends_on, vec!["s1".to_string()]);
        let (next, _) = apply_update(
            &next,
            &update(json!({"blocked_todos": [{"id": "s2", "reason": "no access"}], "close_todos": [{"id": "3", "reason": "dup"}]})),
            20,
        )
        .expect("valid");
        assert_eq!(next.steps()[1].status(), StepStatus::Blocked);
        assert_eq!(next.steps()[2].status(), StepStatus::Skipped);
    }

    #[test]
    fn cycles_and_unknown_ids_are_refused() {
        let p = plan();
        let err = apply_update(
            &p,
            &update(json!({"modify_todos": [{"id": "s1", "dependencies": ["s2"]}, {"id": "s2", "dependencies": ["s1"]}]})),
            20,
        )
        .expect_err("cycle");
        assert!(err.contains("cycle"), "{err}");
        let err = apply_update(&p, &update(json!({"blocked_todos": [{"id": "s9"}]})), 20)
            .expect_err("unknown");
        assert!(err.contains("unknown TODO 's9'"));
    }

    #[test]
    fn the_cap_is_enforced() {
        let p = plan();
        let (next, notes) = apply_update(
            &p,
            &update(json!({"new_todos": [{"description": "c"}, {"description": "d"}]})),
            3,
        )
        .expect("valid");
        assert_eq!(next.steps().len(), 3);
        assert_eq!(notes.len(), 1);
        assert!(notes[0].contains("limit of 3"));
    }
}
