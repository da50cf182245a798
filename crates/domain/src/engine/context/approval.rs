//! The approval gate of a run's tool calls (docs/approvals.md): the run's
//! [`ApprovalPolicy`] judges each call; a call it refuses never runs (the model reads why);
//! a call it leaves to a person waits (status `waiting`) for their decision, which is
//! journaled (`approval_requested`, `approval_decided`), so a resumed run does not ask
//! again, and "always" holds for the rest of the run.

use serde_json::Value;

use super::RunContext;
use crate::error::StoreError;
use crate::model::approval::{ApprovalDecision, CallToJudge, Verdict};
use crate::model::event::EventKind;
use crate::ports::llm::ToolCall;
use crate::ports::ApprovalRequest;

/// Whether a tool call may run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Gate {
    Open,
    /// A person approved it (now, before, or "always"): its changes to the run's input
    /// files are theirs too (docs/security.md, "Input files").
    Approved,
    /// Refused: what the model reads instead of the tool's output.
    Closed(String),
}

impl RunContext {
    /// The gate of `call` (arguments `args`; `reads_only` as the toolbox says), journaled
    /// under the call's `journal_key`. Fails only when the journal cannot be written or the
    /// run is suspended while waiting (it then asks again when resumed).
    pub async fn approve(
        &self,
        step_id: &str,
        call: &ToolCall,
        args: &Value,
        reads_only: bool,
        journal_key: &str,
    ) -> Result<Gate, StoreError> {
        let judged = CallToJudge {
            tool: &call.name,
            arguments: args,
            reads_only,
        };
        match self.approvals.judge(&judged) {
            Verdict::Run => return Ok(Gate::Open),
            Verdict::Refuse(reason) => return Ok(Gate::Closed(reason)),
            Verdict::Ask => {}
        }
        if let Some(decision) = self.journal.approval(journal_key) {
            return Ok(gate_of(decision, None));
        }
        if self.is_always_approved(&call.name) {
            return Ok(Gate::Approved);
        }
        self.emit(EventKind::ApprovalRequested {
            step_id: step_id.to_string(),
            call_id: call.id.clone(),
            tool: call.name.clone(),
            arguments: call.arguments.clone(),
            journal_key: Some(journal_key.to_string()),
        })
        .await?;
        let request = ApprovalRequest {
            step_id: step_id.to_string(),
            call_id: call.id.clone(),
            tool: call.name.clone(),
            arguments: call.arguments.clone(),
        };
        let (decision, reason) = match self
            .wait_for_person(self.user.approve(&self.run_id, &request))
            .await?
        {
            Some(Ok(d)) => (d, None),
            Some(Err(e)) => (
                ApprovalDecision::Deny,
                Some(format!(
                    "`{}` needs a person's approval in this run, and none came: {e}",
                    call.name
                )),
            ),
            None => (
                ApprovalDecision::Deny,
                Some("the run was stopped while the call waited for approval".to_string()),
            ),
        };
        self.emit(EventKind::ApprovalDecided {
            step_id: step_id.to_string(),
            call_id: call.id.clone(),
            tool: call.name.clone(),
            decision,
            reason: reason.clone(),
            journal_key: Some(journal_key.to_string()),
        })
        .await?;
        if decision == ApprovalDecision::Always {
            if let Ok(mut always) = self.always_approved.lock() {
                always.insert(call.name.clone());
            }
        }
        Ok(gate_of(decision, reason))
    }

    /// Whether calls that act wait for a person (`--approval ask`).
    pub fn asks_for_approval(&self) -> bool {
        self.approvals.mode == crate::model::approval::ApprovalMode::Ask
    }

    fn is_always_approved(&self, tool: &str) -> bool {
        self.always_approved
            .lock()
            .is_ok_and(|always| always.contains(tool))
    }
}

fn gate_of(decision: ApprovalDecision, reason: Option<String>) -> Gate {
    if decision.approves() {
        return Gate::Approved;
    }
    Gate::Closed(reason.unwrap_or_else(|| {
        "a person refused this call; do not try it again, find another way or report that \
         the step cannot be done"
            .to_string()
    }))
}
