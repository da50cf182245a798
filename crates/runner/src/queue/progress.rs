//! Where a run stands (`RunService::progress`), read cheaply from its record and latest
//! plan (not the event log): settled or not, steps settled of all steps, the step under way.
//! The MCP service's waiting reports it as progress notifications (docs/mcp.md).

use domain::ports::RunStatus;

use super::{Phase, QueueRunner};
use crate::liveness::Liveness;
use crate::service::{store_error, Caller, Progress, RunServiceError, Scope};

/// `run_id`'s progress, for `caller` (another client's run is unknown).
pub(crate) async fn progress(
    state: &QueueRunner,
    caller: &Caller,
    run_id: &str,
) -> Result<Progress, RunServiceError> {
    caller.require(Scope::Read)?;
    let run = state.store.get_run(run_id).await.map_err(store_error)?;
    let run = caller.visible(run, run_id)?;
    let liveness = Liveness::of(&run);
    // A run executed here waits when its question is pending here (the store may still say
    // `waiting` just after an answer); one executed elsewhere when the store says so.
    let local = state
        .with_registry(|r| r.runs.get(run_id).is_some_and(|e| e.phase == Phase::Active))
        .unwrap_or(false);
    let asks = if local {
        state.user.question(run_id).is_some() || state.user.approval(run_id).is_some()
    } else {
        run.status == RunStatus::Waiting
    };
    let settled = matches!(run.status, RunStatus::Completed | RunStatus::Failed)
        || liveness.is_interrupted()
        || asks
        || state.errored(run_id).is_some();
    let plan = state.store.latest_plan(run_id).await.map_err(store_error)?;
    let Some(plan) = plan else {
        let message = match run.status {
            RunStatus::Queued => "queued",
            _ => "planning",
        };
        return Ok(Progress {
            settled,
            done: 0,
            total: 0,
            message: message.to_string(),
        });
    };
    let steps = plan.steps();
    let done = steps.iter().filter(|s| s.status().is_terminal()).count();
    let current = steps
        .iter()
        .enumerate()
        .find(|(_, s)| !s.status().is_terminal());
    let message = match current {
        _ if settled => format!(
            "{}: {done} of {} steps settled",
            liveness.shown(),
            steps.len()
        ),
        Some((i, s)) => format!("step {} of {}: {}", i + 1, steps.len(), s.description),
        None => "summarising".to_string(),
    };
    Ok(Progress {
        settled,
        done,
        total: steps.len(),
        message,
    })
}
