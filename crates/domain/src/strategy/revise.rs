//! Revising the unfinished part of a plan (plan-act after a step, and re-plans in plan-act
//! and dag): finished steps and their ids are kept as they are; steps still to do are
//! replaced by the planner's list; ids it keeps must name unfinished steps; new steps get
//! fresh ids that never clash with old ones; the graph is validated before anything changes.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::engine::context::RunContext;
use crate::engine::runtime::Runtime;
use crate::engine::structured::ask_json;
use crate::error::Error;
use crate::model::event::EventKind;
use crate::model::plan::{Plan, Step, StepCondition, StepStatus};
use crate::ports::llm::{CallPurpose, ChatMessage};
use crate::prompts;
use crate::strategy::StepReport;

/// A step as a planner writes it in JSON.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct StepJson {
    #[serde(default, deserialize_with = "lenient_id")]
    pub id: Option<String>,
    #[serde(alias = "text", alias = "step")]
    pub description: String,
    #[serde(default, alias = "dependencies", deserialize_with = "lenient_ids")]
    pub depends_on: Vec<String>,
    #[serde(default)]
    pub fallback: Option<String>,
    #[serde(default)]
    pub condition: Option<StepCondition>,
    #[serde(default, deserialize_with = "lenient_id")]
    pub rollback_of: Option<String>,
}

fn id_of(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn lenient_id<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(Option::<Value>::deserialize(d)?.as_ref().and_then(id_of))
}

fn lenient_ids<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    Ok(match Option::<Value>::deserialize(d)? {
        Some(Value::Array(items)) => items.iter().filter_map(id_of).collect(),
        Some(v) => id_of(&v).into_iter().collect(),
        None => Vec::new(),
    })
}

/// A step is finished when the planner may not touch it.
fn is_finished(s: &Step, reopen: Option<&str>) -> bool {
    match s.status() {
        StepStatus::NotStarted => false,
        StepStatus::Failed | StepStatus::Blocked => Some(s.id.as_str()) != reopen,
        _ => true,
    }
}

/// The plan as the planner sees it during a revision.
pub(crate) fn plan_json(plan: &Plan) -> String {
    let steps: Vec<Value> = plan
        .steps()
        .iter()
        .map(|s| {
            let mut v = json!({
                "id": s.id,
                "description": s.description,
                "status": s.status(),
            });
            if !s.depends_on.is_empty() {
                v["depends_on"] = json!(s.depends_on);
            }
            if let Some(r) = s.result.as_deref().or(s.error.as_deref()) {
                v["result"] = json!(prompts::truncate_chars(r, 300));
            }
            v
        })
        .collect();
    json!({"title": plan.title, "goal": plan.goal, "steps": steps}).to_string()
}

/// Replaces the unfinished steps of `plan` by `specs`. `reopen` names a failed step the
/// planner may keep (it is then reset to not_started). Nothing changes on error.
pub(crate) fn apply_revision(
    plan: &mut Plan,
    specs: &[StepJson],
    reopen: Option<&str>,
) -> Result<(), String> {
    let mut next = plan.clone();
    let unfinished: Vec<&Step> = plan
        .steps()
        .iter()
        .filter(|s| !is_finished(s, reopen))
        .collect();
    let mut kept: Vec<Step> = plan
        .steps()
        .iter()
        .filter(|s| is_finished(s, reopen))
        .cloned()
        .collect();
    let mut seen = std::collections::HashSet::new();
    let mut reopened = Vec::new();
    for spec in specs {
        if spec.description.trim().is_empty() {
            return Err("a step has an empty description".to_string());
        }
        let step = match &spec.id {
            Some(id) => {
                if !seen.insert(id.clone()) {
                    return Err(format!("step id '{id}' appears twice"));
                }
                let Some(old) = unfinished.iter().find(|s| &s.id == id) else {
                    return Err(if plan.step(id).is_some() {
                        format!("step '{id}' is already finished and cannot be changed")
                    } else {
                        format!("unknown step id '{id}'")
                    });
                };
                let mut s = (*old).clone();
                let (kind, description) = crate::model::plan::split_kind_tag(&spec.description);
                s.description = description;
                s.kind = kind.or(s.kind);
                if matches!(s.status(), StepStatus::Failed | StepStatus::Blocked) {
                    reopened.push(s.id.clone());
                }
                s
            }
            None => Step::new(String::new(), &spec.description),
        };
        let mut step = step;
        if !spec.depends_on.is_empty() {
            step.depends_on = spec.depends_on.clone();
        }
        if spec.fallback.is_some() {
            step.fallback = spec.fallback.clone();
        }
        if spec.condition.is_some() {
            step.condition = spec.condition.clone();
        }
        if spec.rollback_of.is_some() {
            step.rollback_of = spec.rollback_of.clone();
        }
        kept.push(step);
    }
    next.set_steps(kept).map_err(|e| e.to_string())?;
    for id in reopened {
        next.reopen(&id).map_err(|e| e.to_string())?;
    }
    *plan = next;
    Ok(())
}

/// Asks `system`'s planner for a revision of the unfinished steps after `trigger`; one
/// re-ask when the answer cannot be applied. `Ok(None)` when nothing changed.
pub(crate) async fn revise_unfinished(
    ctx: &RunContext,
    rt: &Runtime,
    plan: &mut Plan,
    system: String,
    trigger: &str,
    reopen: Option<&str>,
) -> Result<Option<String>, Error> {
    let mut messages = vec![
        ChatMessage::system(system),
        ChatMessage::user(prompts::revise_plan(&ctx.task, &plan_json(plan), trigger)),
    ];
    for attempt in 0..2 {
        let answer = match ask_json(
            ctx,
            "revise",
            rt.planner_llm.as_ref(),
            CallPurpose::Plan,
            messages,
            None,
        )
        .await
        {
            Ok(a) => a,
            Err(e) => {
                let problem = e.recoverable()?;
                ctx.emit(EventKind::Error {
                    step_id: None,
                    message: format!("plan revision failed: {problem}"),
                })
                .await?;
                return Ok(None);
            }
        };
        let problem = match parse_steps(&answer.value) {
            Ok(specs) => match apply_revision(plan, &specs, reopen) {
                Ok(()) => return Ok(Some(format!("revised after {trigger}"))),
                Err(e) => e,
            },
            Err(e) => e,
        };
        if attempt == 1 {
            ctx.emit(EventKind::Error {
                step_id: None,
                message: format!("plan revision refused: {problem}"),
            })
            .await?;
            return Ok(None);
        }
        let valid: Vec<String> = plan
            .steps()
            .iter()
            .filter(|s| !is_finished(s, reopen))
            .map(|s| s.id.clone())
            .collect();
        messages = answer.transcript;
        messages.push(ChatMessage::user(prompts::revise_invalid(&problem, &valid)));
    }
    Ok(None)
}

/// `{"steps": [...]}` (or a bare list) as step specs.
/// Re-plans the unfinished steps after `failed` ended for good; `noun` names a step in the
/// trigger the planner reads ("step", "action"). The failed step may be kept and reopened.
pub(crate) async fn replan_after_failure(
    ctx: &RunContext,
    rt: &Runtime,
    plan: &mut Plan,
    system: String,
    noun: &str,
    failed: &StepReport,
) -> Result<Option<String>, Error> {
    let trigger = format!(
        "{noun} '{}' (\"{}\") FAILED: {}",
        failed.step_id,
        failed.description,
        prompts::truncate_chars(&failed.text, 600)
    );
    revise_unfinished(ctx, rt, plan, system, &trigger, Some(&failed.step_id)).await
}

pub(crate) fn parse_steps(v: &Value) -> Result<Vec<StepJson>, String> {
    let list = v.get("steps").unwrap_or(v);
    let items = list.as_array().ok_or("the answer has no `steps` list")?;
    items
        .iter()
        .enumerate()
        .map(|(i, item)| match item {
            Value::String(s) => Ok(StepJson {
                id: None,
                description: s.clone(),
                depends_on: Vec::new(),
                fallback: None,
                condition: None,
                rollback_of: None,
            }),
            other => serde_json::from_value::<StepJson>(other.clone())
                .map_err(|e| format!("step {i} is invalid: {e}")),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> Plan {
        let texts: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        let mut p = Plan::from_texts("p", "t", "g", &texts).expect("plan");
        p.transition("s1", StepStatus::InProgress).expect("legal");
        p.transition("s1", StepStatus::Completed).expect("legal");
        p.steps_mut()[0].result = Some("done a".into());
        p
    }

    fn specs(v: Value) -> Vec<StepJson> {
        parse_steps(&v).expect("valid specs")
    }

    #[test]
    fn completed_steps_and_ids_are_kept_and_new_ids_are_fresh() {
        let mut p = plan();
        apply_revision(
            &mut p,
            &specs(json!({"steps": [{"id": "s3", "description": "c, reworded"}, "new one"]})),
            None,
        )
        .expect("applies");
        let ids: Vec<&str> = p.steps().iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["s1", "s3", "s4"]);
        assert_eq!(p.steps()[0].status(), StepStatus::Completed);
        assert_eq!(p.steps()[1].description, "c, reworded");
        assert_eq!(p.version(), 2);
    }

    #[test]
    fn unknown_or_finished_ids_are_refused_and_nothing_changes() {
        let mut p = plan();
        let before = p.clone();
        let err = apply_revision(
            &mut p,
            &specs(json!({"steps": [{"id": "s9", "description": "x"}]})),
            None,
        )
        .expect_err("unknown id");
        assert!(err.contains("unknown step id 's9'"));
        let err = apply_revision(
            &mut p,
            &specs(json!({"steps": [{"id": "s1", "description": "x"}]})),
            None,
        )
        .expect_err("finished");
        assert!(err.contains("already finished"));
        let err = apply_revision(
            &mut p,
            &specs(json!({"steps": [{"id": "s2", "description": "x", "depends_on": ["s3"]}, {"id": "s3", "description": "y", "depends_on": ["s2"]}]})),
            None,
        )
        .expect_err("cycle");
        assert!(err.contains("cycle"), "{err}");
        assert_eq!(p, before);
    }

    #[test]
    fn a_reopened_failed_step_can_be_kept_and_is_reset() {
        let mut p = plan();
        p.transition("s2", StepStatus::InProgress).expect("legal");
        p.transition("s2", StepStatus::Failed).expect("legal");
        apply_revision(
            &mut p,
            &specs(json!([{"id": "s2", "description": "b again"}])),
            Some("s2"),
        )
        .expect("applies");
        assert_eq!(p.steps().len(), 2, "s3 dropped");
        assert_eq!(p.steps()[1].status(), StepStatus::NotStarted);
        // Without reopening, a failed step is finished history.
        let mut q = plan();
        q.transition("s2", StepStatus::InProgress).expect("legal");
        q.transition("s2", StepStatus::Failed).expect("legal");
        assert!(apply_revision(
            &mut q,
            &specs(json!([{"id": "s2", "description": "b"}])),
            None
        )
        .is_err());
    }
}
