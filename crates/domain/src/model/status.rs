//! [`StepStatus`] and its transition table: the step state machine (docs/architecture.md,
//! "Step states"). Every status change of a step goes through [`Plan::transition`](crate::model::plan::Plan::transition),
//! which consults [`StepStatus::can_transition_to`].

use std::fmt;

use serde::{Deserialize, Serialize};

/// Where a step is in its life.
///
/// ```text
/// not_started ─▶ in_progress ─▶ completed | failed | blocked
/// failed ─▶ not_started (retry)        blocked ─▶ not_started
/// not_started | in_progress ─▶ skipped
/// not_started ─▶ blocked (a dependency failed or was blocked)
/// skipped ─▶ not_started (a resumed run reopens what its cancellation skipped)
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    #[default]
    NotStarted,
    InProgress,
    Completed,
    Failed,
    Blocked,
    Skipped,
}

impl StepStatus {
    pub const ALL: [StepStatus; 6] = [
        StepStatus::NotStarted,
        StepStatus::InProgress,
        StepStatus::Completed,
        StepStatus::Failed,
        StepStatus::Blocked,
        StepStatus::Skipped,
    ];

    /// The marker shown in plan text.
    pub fn marker(self) -> &'static str {
        match self {
            StepStatus::NotStarted => "[ ]",
            StepStatus::InProgress => "[→]",
            StepStatus::Completed => "[✓]",
            StepStatus::Blocked => "[!]",
            StepStatus::Failed => "[✗]",
            StepStatus::Skipped => "[-]",
        }
    }

    /// The wire name (`not_started`, `in_progress`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            StepStatus::NotStarted => "not_started",
            StepStatus::InProgress => "in_progress",
            StepStatus::Completed => "completed",
            StepStatus::Failed => "failed",
            StepStatus::Blocked => "blocked",
            StepStatus::Skipped => "skipped",
        }
    }

    pub fn parse(s: &str) -> Option<StepStatus> {
        StepStatus::ALL.into_iter().find(|st| st.as_str() == s)
    }

    /// True once the step will not run again without an explicit retry.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            StepStatus::Completed | StepStatus::Failed | StepStatus::Blocked | StepStatus::Skipped
        )
    }

    /// The legal moves of the state machine.
    pub fn can_transition_to(self, to: StepStatus) -> bool {
        use StepStatus::*;
        matches!(
            (self, to),
            (NotStarted, InProgress)
                | (InProgress, Completed)
                | (InProgress, Failed)
                | (InProgress, Blocked)
                | (Failed, NotStarted)
                | (Blocked, NotStarted)
                | (NotStarted, Skipped)
                | (InProgress, Skipped)
                | (NotStarted, Blocked)
                | (Skipped, NotStarted)
        )
    }
}

impl fmt::Display for StepStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
