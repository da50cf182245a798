//! How one attempt of a step ends.

/// How a step attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StepEnd {
    /// `complete_step` with success=true.
    Completed {
        result: String,
        revise_plan: bool,
        /// Files the attempt's tool calls produced (workspace-relative).
        attachments: Vec<String>,
    },
    /// `complete_step` with success=false, the turn limit, or a stuck loop.
    Failed(String),
    /// The LLM could not be reached or answered an error: worth another attempt.
    Errored(String),
    Cancelled,
}

/// Why a success claim is refused once when every tool call of the attempt failed.
pub const CLAIMED_AFTER_FAILURES: &str = "claimed success although every tool call failed";

/// Why a step fails when the user answered its question with nothing, twice.
pub const EMPTY_ANSWERS: &str = "the user gave no answer (asked twice)";
