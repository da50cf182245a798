//! Everything that happens in a run, as an append-only log of [`Event`]s.
//!
//! Each event carries its run id, a gap-free sequence number (starting at 1) and a
//! timestamp. The same values are written to the [`RunStore`](crate::ports::RunStore) and
//! published to [`EventSink`](crate::ports::EventSink)s (the CLI's live view, later SSE).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::model::plan::{Plan, StepStatus};
use crate::ports::llm::{CallPurpose, ChatResponse, Usage};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub run_id: String,
    pub seq: u64,
    pub at: DateTime<Utc>,
    #[serde(flatten)]
    pub kind: EventKind,
}

/// Where a plan came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanSource {
    /// The planner LLM made it through the `planning` tool.
    Llm,
    /// The planner failed; the runtime used its default three-step plan.
    Default,
    /// No planner (direct mode): the task itself is the one step.
    Task,
}

/// Token and call counts of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunUsage {
    pub llm_calls: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// The part of `prompt_tokens` served from a cache (see [`crate::ports::llm::Usage`]).
    #[serde(default)]
    pub cached_prompt_tokens: u64,
}

impl RunUsage {
    /// Counts one LLM call that used `usage`.
    pub fn add(&mut self, usage: &Usage) {
        self.llm_calls += 1;
        self.prompt_tokens += usage.prompt_tokens;
        self.completion_tokens += usage.completion_tokens;
        self.cached_prompt_tokens += usage.cached_prompt_tokens;
    }
}

/// What the runtime did about a step that did not succeed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AdaptAction {
    /// Run the step again after a backoff.
    Retry,
    /// Run the step's fallback instead.
    Fallback,
    /// Ask the planner to revise the remaining steps.
    Replan,
    /// Give up on the step; what depends on it is blocked.
    GiveUp,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventKind {
    RunStarted {
        task: String,
        mode: String,
        workspace: String,
    },
    PlanCreated {
        plan: Plan,
        source: PlanSource,
        /// Why the default plan was used, when it was.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    PlanUpdated {
        plan: Plan,
        reason: String,
    },
    StepStarted {
        step_id: String,
        index: usize,
        description: String,
        executor: String,
        attempt: u32,
    },
    StepCompleted {
        step_id: String,
        result: String,
    },
    /// The step ended `failed` or `blocked` (see `status`).
    StepFailed {
        step_id: String,
        status: StepStatus,
        error: String,
        will_retry: bool,
    },
    StepSkipped {
        step_id: String,
        reason: String,
    },
    /// `auto` picked a planning style.
    ModeChosen {
        mode: String,
        /// simple | complex | emergent
        class: String,
        /// rules | llm | fallback
        by: String,
        reason: String,
    },
    /// A branch of the adapt loop was taken for a step that did not succeed.
    StepAdapted {
        step_id: String,
        action: AdaptAction,
        detail: String,
    },
    /// The verifier checked a step's claimed result.
    StepVerified {
        step_id: String,
        ok: bool,
        reason: String,
    },
    /// The executor was nudged: stuck in a loop, or a tool kept failing.
    Nudge {
        step_id: String,
        reason: String,
    },
    /// Written before the tool runs (journal: started).
    ToolCalling {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        step_id: Option<String>,
        call_id: String,
        tool: String,
        arguments: String,
        /// Unique within the run: the LLM call's key and the call id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        journal_key: Option<String>,
    },
    /// Written after the tool ran (journal: finished).
    ToolCalled {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        step_id: Option<String>,
        call_id: String,
        tool: String,
        ok: bool,
        output: String,
        duration_ms: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        journal_key: Option<String>,
    },
    LlmCalled {
        purpose: CallPurpose,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        step_id: Option<String>,
        ok: bool,
        prompt_tokens: u64,
        completion_tokens: u64,
        /// The part of `prompt_tokens` served from a cache; absent in logs written before it
        /// was recorded.
        #[serde(default)]
        cached_prompt_tokens: u64,
        duration_ms: u64,
        /// Stable key of the call site (`exec:s2:1#3`): a resumed run reuses the response.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        key: Option<String>,
        /// Hash of the request; a resumed run reuses the response only for the same request.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_hash: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        response: Option<ChatResponse>,
    },
    /// `planwright resume` picked the run up again after the event with `after_seq`.
    RunResumed {
        after_seq: u64,
        /// Tool calls that had started but not finished when the run stopped.
        interrupted_calls: Vec<String>,
    },
    /// `message_notify_user`: the agent told the user something.
    UserNotified {
        step_id: String,
        text: String,
    },
    /// `message_ask_user`: the run waits for the user's answer.
    WaitingForUser {
        step_id: String,
        question: String,
    },
    /// The user's answer to `message_ask_user`, or why there was none.
    UserReplied {
        step_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        answer: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        journal_key: Option<String>,
    },
    /// A tool call waits for a person's approval (`--approval ask`; docs/approvals.md).
    ApprovalRequested {
        step_id: String,
        call_id: String,
        tool: String,
        arguments: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        journal_key: Option<String>,
        /// Why the rules could not judge the call themselves (`Verdict::Unsure`: a command
        /// not understood, a script not seen); absent when the mode simply asks.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// What the person decided, or why nobody could (then `decision` is `deny`).
    ApprovalDecided {
        step_id: String,
        call_id: String,
        tool: String,
        decision: crate::model::approval::ApprovalDecision,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        journal_key: Option<String>,
    },
    /// Text the model wrote for the user (not a tool call).
    Message {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        step_id: Option<String>,
        text: String,
    },
    /// Something went wrong and was handled; the run goes on.
    Error {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        step_id: Option<String>,
        message: String,
    },
    /// The files in the workspace when the run started (its inputs), what the task lets
    /// the run do to each, and the outputs the task names (docs/security.md, "Input files").
    InputsRecorded {
        inputs: Vec<crate::model::inputs::RecordedInput>,
        outputs: Vec<String>,
        /// The workspace held more files than are recorded; the rest are not protected.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        truncated: bool,
    },
    /// A tool call changed (or tried to change) an input the run may not change.
    InputProtected {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        step_id: Option<String>,
        tool: String,
        path: String,
        action: crate::model::inputs::InputAction,
    },
    /// The workspace was checkpointed (docs/checkpoints.md): before an attempt of a step,
    /// or (no `step_id`) when the run ended.
    CheckpointTaken {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        step_id: Option<String>,
        /// The step's attempt (1, 2, ...); absent for the run's end.
        #[serde(default, skip_serializing_if = "is_zero")]
        attempt: u32,
        checkpoint: crate::model::checkpoints::CheckpointId,
        /// Files and links recorded.
        files: u64,
        /// Bytes this checkpoint added to the store.
        stored_bytes: u64,
        /// Paths whose content was not kept, and why.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        left_out: Vec<crate::model::checkpoints::LeftOut>,
        /// The store could not keep everything: an undo to it refuses.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        incomplete: bool,
    },
    /// An independent reproduction of the run's answer was compared with it
    /// (docs/verification.md), when the run's last open step claimed success.
    /// What an attempt of a step was shown of the workspace in its first prompt
    /// (docs/code-actions.md); a resumed attempt is shown the same, so that its journaled
    /// LLM calls are recognised and their tool calls not run again.
    WorkspaceShown {
        step_id: String,
        attempt: u32,
        view: crate::model::workspace_view::WorkspaceView,
    },
    AnswerChecked {
        step_id: String,
        verdict: crate::model::verification::CheckVerdict,
        detail: String,
    },
    RunCompleted {
        summary: String,
        usage: RunUsage,
        /// An independent reproduction agreed with what the run's executed actions produced
        /// (docs/verification.md); false in logs written before it was recorded.
        #[serde(default)]
        verified: bool,
    },
    RunFailed {
        reason: String,
        summary: String,
        usage: RunUsage,
        /// The run was cancelled by its caller (not stopped by a failure or a limit): it can
        /// be resumed.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        cancelled: bool,
    },
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl EventKind {
    /// The snake_case name used as the `type` tag.
    pub fn name(&self) -> &'static str {
        match self {
            EventKind::RunStarted { .. } => "run_started",
            EventKind::PlanCreated { .. } => "plan_created",
            EventKind::PlanUpdated { .. } => "plan_updated",
            EventKind::StepStarted { .. } => "step_started",
            EventKind::StepCompleted { .. } => "step_completed",
            EventKind::StepFailed { .. } => "step_failed",
            EventKind::StepSkipped { .. } => "step_skipped",
            EventKind::ModeChosen { .. } => "mode_chosen",
            EventKind::StepAdapted { .. } => "step_adapted",
            EventKind::StepVerified { .. } => "step_verified",
            EventKind::Nudge { .. } => "nudge",
            EventKind::ToolCalling { .. } => "tool_calling",
            EventKind::ToolCalled { .. } => "tool_called",
            EventKind::LlmCalled { .. } => "llm_called",
            EventKind::RunResumed { .. } => "run_resumed",
            EventKind::UserNotified { .. } => "user_notified",
            EventKind::WaitingForUser { .. } => "waiting_for_user",
            EventKind::UserReplied { .. } => "user_replied",
            EventKind::ApprovalRequested { .. } => "approval_requested",
            EventKind::ApprovalDecided { .. } => "approval_decided",
            EventKind::Message { .. } => "message",
            EventKind::Error { .. } => "error",
            EventKind::InputsRecorded { .. } => "inputs_recorded",
            EventKind::InputProtected { .. } => "input_protected",
            EventKind::CheckpointTaken { .. } => "checkpoint_taken",
            EventKind::WorkspaceShown { .. } => "workspace_shown",
            EventKind::AnswerChecked { .. } => "answer_checked",
            EventKind::RunCompleted { .. } => "run_completed",
            EventKind::RunFailed { .. } => "run_failed",
        }
    }

    /// True for the last event a run writes.
    pub fn is_final(&self) -> bool {
        matches!(
            self,
            EventKind::RunCompleted { .. } | EventKind::RunFailed { .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_serialize_flat_with_a_type_tag_and_round_trip() {
        let ev = Event {
            run_id: "run_1".into(),
            seq: 7,
            at: DateTime::parse_from_rfc3339("2026-01-02T03:04:05Z")
                .expect("valid time")
                .with_timezone(&Utc),
            kind: EventKind::StepCompleted {
                step_id: "s1".into(),
                result: "ok".into(),
            },
        };
        let json = serde_json::to_value(&ev).expect("serializes");
        assert_eq!(json["type"], "step_completed");
        assert_eq!(json["seq"], 7);
        assert_eq!(json["step_id"], "s1");
        let back: Event = serde_json::from_value(json).expect("deserializes");
        assert_eq!(back, ev);
        assert_eq!(ev.kind.name(), "step_completed");
    }
}
