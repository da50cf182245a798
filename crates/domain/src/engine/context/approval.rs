//! The approval gate of a run's tool calls (docs/approvals.md): the run's
//! [`ApprovalPolicy`] judges each call; a call it refuses never runs (the model reads why);
//! a call it leaves to a person waits (status `waiting`) for their decision, which is
//! journaled (`approval_requested`, `approval_decided`), so a resumed run does not ask
//! again, and "always" holds for the rest of the run. The gate remembers what the calls it
//! let through wrote, so a script the run wrote is judged by its content when it is run.

use serde_json::Value;

use super::RunContext;
use crate::error::StoreError;
use crate::model::approval::{record_writes, ApprovalDecision, CallToJudge, Verdict, WrittenFiles};
use crate::model::event::EventKind;
use crate::model::tool_kind::{ToolEffect, ToolFamily};
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
    /// The gate of `call` (arguments `args`; its tool's family and effect as the toolbox
    /// says), journaled under the call's `journal_key`. Fails only when the journal cannot be
    /// written or the run is suspended while waiting (it then asks again when resumed).
    pub async fn approve(
        &self,
        step_id: &str,
        call: &ToolCall,
        args: &Value,
        tool: (ToolFamily, ToolEffect),
        journal_key: &str,
    ) -> Result<Gate, StoreError> {
        let gate = self.decide(step_id, call, args, tool, journal_key).await?;
        if matches!(gate, Gate::Open | Gate::Approved) {
            let workspace = self.workspace.to_str();
            self.with_written(|written| record_writes(&call.name, args, workspace, written));
        }
        Ok(gate)
    }

    /// The call as the policy sees it.
    fn judged<'a>(
        &'a self,
        call: &'a ToolCall,
        args: &'a Value,
        (family, effect): (ToolFamily, ToolEffect),
        written: &'a WrittenFiles,
    ) -> CallToJudge<'a> {
        CallToJudge {
            tool: &call.name,
            arguments: args,
            effect,
            family,
            workspace: self.workspace.to_str(),
            written,
        }
    }

    /// Runs `f` on what the run wrote so far (nothing known if the lock was poisoned).
    fn with_written<T>(&self, f: impl FnOnce(&mut WrittenFiles) -> T) -> T {
        match self.written.lock() {
            Ok(mut written) => f(&mut written),
            Err(_) => f(&mut WrittenFiles::default()),
        }
    }

    async fn decide(
        &self,
        step_id: &str,
        call: &ToolCall,
        args: &Value,
        tool: (ToolFamily, ToolEffect),
        journal_key: &str,
    ) -> Result<Gate, StoreError> {
        let verdict = self.with_written(|written| {
            self.approvals
                .judge(&self.judged(call, args, tool, written))
        });
        let unsure = match verdict {
            Verdict::Run => return Ok(Gate::Open),
            Verdict::Refuse(reason) => return Ok(Gate::Closed(reason)),
            Verdict::Ask => None,
            Verdict::Unsure(why) => {
                tracing::info!(tool = %call.name, %why, "asking: the rules cannot judge this call");
                Some(why)
            }
        };
        if let Some(decision) = self.journal.approval(journal_key) {
            return Ok(gate_of(decision, None));
        }
        if unsure.is_none() && self.is_always_approved(&call.name) {
            return Ok(Gate::Approved);
        }
        self.emit(EventKind::ApprovalRequested {
            step_id: step_id.to_string(),
            call_id: call.id.clone(),
            tool: call.name.clone(),
            arguments: call.arguments.clone(),
            journal_key: Some(journal_key.to_string()),
            reason: unsure.clone(),
        })
        .await?;
        let request = ApprovalRequest {
            step_id: step_id.to_string(),
            call_id: call.id.clone(),
            tool: call.name.clone(),
            arguments: call.arguments.clone(),
            reason: unsure.clone(),
        };
        let (decision, reason) = match self
            .wait_for_person(
                crate::engine::trace::Wait::Approval,
                self.user.approve(&self.run_id, &request),
            )
            .await?
        {
            Some(Ok(d)) => (d, None),
            Some(Err(e)) => (
                ApprovalDecision::Deny,
                Some(match &unsure {
                    None => format!(
                        "`{}` needs a person's approval in this run, and none came: {e}",
                        call.name
                    ),
                    Some(why) => format!(
                        "`{}` needs a person's approval ({why}), and none came: {e}. Do \
                         not try to get around the rule; write the command plainly or \
                         report that the step cannot be done",
                        call.name
                    ),
                }),
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
