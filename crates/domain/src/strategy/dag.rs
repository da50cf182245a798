//! The **dag** style (docs/design.md, "The dag style"): the planner returns goal → sub-goals → actions with
//! `dependency`, `conditional` and `rollback` edges. Cycles, dangling references and duplicate
//! ids are refused with a re-ask to the planner. Ready actions run in parallel (up to the
//! concurrency limit), dispatched the moment their dependencies finish.

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::Value;

use crate::engine::context::RunContext;
use crate::engine::runtime::Runtime;
use crate::error::Error;
use crate::model::plan::{Plan, StepCondition};
use crate::ports::llm::ChatMessage;
use crate::prompts;
use crate::strategy::planner::{plan_from_json, plan_from_planner, PlanRequest};
use crate::strategy::response_schemas;
use crate::strategy::revise::{replan_after_failure, StepJson};
use crate::strategy::{InitialPlan, PlanningStrategy, Revisions, StepReport};

#[derive(Debug, Default)]
pub(crate) struct Dag;

#[derive(Debug, Deserialize)]
struct SubGoal {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    description: String,
    #[serde(default, alias = "steps")]
    actions: Vec<StepJson>,
}

/// An edge given as a separate list: `{from, to, type, condition?}`.
#[derive(Debug, Deserialize)]
struct Edge {
    from: Value,
    to: Value,
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    condition: Option<String>,
}

#[derive(Debug, Deserialize)]
struct DagJson {
    #[serde(default)]
    goal: String,
    #[serde(default, alias = "sub_goals")]
    subgoals: Vec<SubGoal>,
    /// Some planners return actions without sub-goals.
    #[serde(default)]
    actions: Vec<StepJson>,
    #[serde(default)]
    edges: Vec<Edge>,
}

fn id_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.trim().to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Turns the planner's DAG into a plan (sub-goals become step groups), or says why not.
fn build(task: &str, value: &Value) -> Result<Plan, String> {
    let dag: DagJson =
        serde_json::from_value(value.clone()).map_err(|e| format!("invalid shape: {e}"))?;
    let mut specs: Vec<StepJson> = dag.actions.clone();
    let mut groups: Vec<Option<String>> = vec![None; specs.len()];
    for g in &dag.subgoals {
        let gid = g.id.as_ref().and_then(id_text).or_else(|| {
            (!g.description.is_empty()).then(|| prompts::truncate_chars(&g.description, 40))
        });
        for a in &g.actions {
            specs.push(a.clone());
            groups.push(gid.clone());
        }
    }
    if specs.is_empty() {
        return Err("the plan has no actions".to_string());
    }
    if specs.iter().any(|s| s.id.is_none()) {
        return Err("every action needs an `id` so edges can name it".to_string());
    }
    for e in &dag.edges {
        let (Some(from), Some(to)) = (id_text(&e.from), id_text(&e.to)) else {
            return Err("an edge has no `from` or `to`".to_string());
        };
        let target = specs
            .iter_mut()
            .find(|s| s.id.as_deref() == Some(to.as_str()))
            .ok_or_else(|| format!("edge to unknown action '{to}'"))?;
        match e.kind.as_str() {
            "" | "dependency" => target.depends_on.push(from),
            "conditional" => {
                target.condition = Some(StepCondition {
                    step: from,
                    contains: e.condition.clone().unwrap_or_default(),
                })
            }
            "rollback" => target.rollback_of = Some(from),
            other => return Err(format!("unknown edge type '{other}'")),
        }
    }
    let title = if dag.goal.trim().is_empty() {
        prompts::default_plan_title(task)
    } else {
        prompts::truncate_chars(dag.goal.trim(), 80)
    };
    let mut plan = plan_from_json(task, &title, &dag.goal, None, &specs)?;
    for (step, group) in plan.steps_mut().iter_mut().zip(groups) {
        step.group = group;
    }
    Ok(plan)
}

#[async_trait]
impl PlanningStrategy for Dag {
    async fn initial_plan(&mut self, ctx: &RunContext, rt: &Runtime) -> Result<InitialPlan, Error> {
        let max = rt.config.max_plan_steps.max(1);
        let request = PlanRequest {
            planner: "the DAG planner",
            messages: vec![
                ChatMessage::system(prompts::dag_system()),
                ChatMessage::user(prompts::dag_create(&ctx.task, max)),
            ],
            schema: ("dag", response_schemas::dag(max)),
        };
        let build = |value: &Value| build(&ctx.task, value);
        plan_from_planner(ctx, rt, request, build, prompts::plan_invalid).await
    }

    fn parallel(&self) -> bool {
        true
    }

    fn stop_on_give_up(&self) -> bool {
        false
    }

    async fn replan(
        &mut self,
        ctx: &RunContext,
        rt: &Runtime,
        plan: &mut Plan,
        failed: &StepReport,
        revisions: &mut Revisions,
    ) -> Result<Option<String>, Error> {
        // A failure with a rollback edge is handled by the rollback, not by a re-plan.
        if plan
            .steps()
            .iter()
            .any(|s| s.rollback_of.as_deref() == Some(failed.step_id.as_str()))
            || !revisions.take()
        {
            return Ok(None);
        }
        replan_after_failure(ctx, rt, plan, prompts::dag_system(), "action", failed).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn subgoals_actions_and_edges_become_one_plan() {
        let plan = build(
            "t",
            &json!({
                "goal": "ship",
                "subgoals": [
                    {"id": "g1", "description": "build", "actions": [
                        {"id": "a1", "description": "compile"},
                        {"id": "a2", "description": "test", "depends_on": ["a1"]}
                    ]},
                    {"id": "g2", "description": "release", "actions": [
                        {"id": "a3", "description": "publish", "depends_on": ["a2"], "condition": {"step": "a2", "contains": "pass"}},
                        {"id": "a4", "description": "undo", "rollback_of": "a3"}
                    ]}
                ],
                "edges": [{"from": "a1", "to": "a4", "type": "dependency"}]
            }),
        )
        .expect("valid dag");
        assert_eq!(plan.steps().len(), 4);
        assert_eq!(plan.steps()[1].group.as_deref(), Some("g1"));
        assert_eq!(
            plan.steps()[2]
                .condition
                .as_ref()
                .map(|c| c.contains.as_str()),
            Some("pass")
        );
        assert_eq!(plan.steps()[3].rollback_of.as_deref(), Some("a3"));
        assert_eq!(plan.steps()[3].depends_on, vec!["a1".to_string()]);
    }

    #[test]
    fn cycles_dangling_edges_and_missing_ids_are_refused() {
        let cycle = build(
            "t",
            &json!({"actions": [
                {"id": "a", "description": "x", "depends_on": ["b"]},
                {"id": "b", "description": "y", "depends_on": ["a"]}
            ]}),
        )
        .expect_err("cycle");
        assert!(cycle.contains("cycle"), "{cycle}");
        let dangling = build(
            "t",
            &json!({"actions": [{"id": "a", "description": "x", "depends_on": ["zz"]}]}),
        )
        .expect_err("dangling");
        assert!(dangling.contains("unknown step 'zz'"), "{dangling}");
        let no_id = build("t", &json!({"actions": [{"description": "x"}]})).expect_err("no id");
        assert!(no_id.contains("needs an `id`"));
        let dup = build(
            "t",
            &json!({"actions": [{"id": "a", "description": "x"}, {"id": "a", "description": "y"}]}),
        )
        .expect_err("dup");
        assert!(dup.contains("appears twice"));
    }
}
