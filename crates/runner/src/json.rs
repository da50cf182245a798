//! The JSON shapes of runs shared by the front ends: the CLI's `--json` output and the HTTP
//! API's and MCP server's answers (docs/api.md). One source, so that they cannot drift.

use domain::model::event::{Event, EventKind, RunUsage};
use domain::model::plan::Plan;
use domain::ports::{Restored, RunRecord, WorkspaceDiff};
use domain::RunOutcome;
use serde_json::{json, Value};

use crate::liveness::Liveness;

/// A run's token usage.
pub fn usage_json(u: &RunUsage) -> Value {
    json!({
        "llm_calls": u.llm_calls,
        "prompt_tokens": u.prompt_tokens,
        "completion_tokens": u.completion_tokens,
        "cached_prompt_tokens": u.cached_prompt_tokens,
    })
}

fn plan_json(plan: &Plan) -> Value {
    json!({
        "id": plan.id,
        "title": plan.title,
        "steps": plan.steps().iter().map(|s| json!({
            "id": s.id,
            "description": s.description,
            "kind": s.kind,
            "status": s.status(),
            "result": s.result,
            "error": s.error,
        })).collect::<Vec<_>>(),
    })
}

/// The one JSON object `run --json` prints.
pub fn outcome_json(outcome: &RunOutcome, workspace: &str) -> Value {
    json!({
        "run_id": outcome.run_id,
        "status": outcome.status,
        "summary": outcome.summary,
        "error": outcome.error,
        "workspace": workspace,
        "plan": plan_json(&outcome.plan),
        "usage": usage_json(&outcome.usage),
        // Seen in the workspace: created, changed, deleted, moved, restored (docs/security.md).
        "files": outcome.files,
        // An independent reproduction agreed with the answer (docs/verification.md).
        "verified": outcome.verification.verified,
        "verification": outcome.verification.detail,
    })
}

/// `run` without `--json`: the summary, and the reason when the run failed.
pub fn runs_list_json(runs: &[RunRecord]) -> Value {
    Value::Array(
        runs.iter()
            .map(|r| {
                json!({
                    "run_id": r.run_id,
                    "status": Liveness::of(r).shown(),
                    "task": r.task,
                    "created_at": r.created_at.to_rfc3339(),
                })
            })
            .collect(),
    )
}

/// Tool calls of a run, paired by call id, in order.
pub fn tool_calls(events: &[Event]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for e in events {
        match &e.kind {
            EventKind::ToolCalling {
                step_id,
                call_id,
                tool,
                arguments,
                ..
            } => out.push(json!({
                "step_id": step_id,
                "call_id": call_id,
                "tool": tool,
                "arguments": arguments,
                "ok": null,
                "output": null,
            })),
            EventKind::ToolCalled {
                call_id,
                ok,
                output,
                ..
            } => {
                if let Some(v) = out
                    .iter_mut()
                    .rev()
                    .find(|v| v["call_id"] == json!(call_id))
                {
                    v["ok"] = json!(ok);
                    v["output"] = json!(output);
                }
            }
            _ => {}
        }
    }
    out
}

/// Whether a run's answer was verified, from its events: the last check's verdict and what
/// it said, when the run completed (docs/verification.md).
pub fn verification_json(events: &[Event]) -> (bool, Option<String>) {
    let verified = events.iter().rev().find_map(|e| match &e.kind {
        EventKind::RunCompleted { verified, .. } => Some(*verified),
        _ => None,
    });
    let detail = events.iter().rev().find_map(|e| match &e.kind {
        EventKind::AnswerChecked { detail, .. } => Some(detail.clone()),
        _ => None,
    });
    (verified.unwrap_or(false), detail)
}

pub fn run_show_json(run: &RunRecord, plan: Option<&Plan>, events: &[Event]) -> Value {
    let (verified, verification) = verification_json(events);
    json!({
        "run_id": run.run_id,
        "status": Liveness::of(run).shown(),
        "task": run.task,
        "mode": run.mode,
        "workspace": run.workspace,
        "created_at": run.created_at.to_rfc3339(),
        "finished_at": run.finished_at.map(|t| t.to_rfc3339()),
        "summary": run.summary,
        "error": run.error,
        "usage": usage_json(&run.usage),
        "verified": verified,
        "verification": verification,
        "plan": plan.map(plan_json),
        "tool_calls": tool_calls(events),
        "events": events.len(),
    })
}

/// `runs diff --json`, `GET /v1/runs/{id}/diff` and the MCP `run_diff` tool: what the run
/// (or step `step`) changed, file by file (docs/checkpoints.md).
pub fn diff_json(run_id: &str, step: Option<u32>, diff: &WorkspaceDiff) -> Value {
    json!({
        "run_id": run_id,
        "step": step,
        "from": diff.from,
        "to": diff.to,
        "files": diff.files,
    })
}

/// `runs undo --json`, `POST /v1/runs/{id}/undo` and the MCP `run_undo` tool: what the undo
/// wrote back and removed, and the checkpoint that undoes it.
pub fn undo_json(run_id: &str, restored: &Restored) -> Value {
    json!({
        "run_id": run_id,
        "undo_checkpoint": restored.before.id,
        "written": restored.written,
        "removed": restored.removed,
        "forced": restored.forced,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_json_usage_object_carries_cached_tokens() {
        let u = RunUsage {
            llm_calls: 2,
            prompt_tokens: 30,
            completion_tokens: 4,
            cached_prompt_tokens: 16,
        };
        assert_eq!(
            usage_json(&u),
            json!({"llm_calls": 2, "prompt_tokens": 30, "completion_tokens": 4, "cached_prompt_tokens": 16})
        );
    }
}
