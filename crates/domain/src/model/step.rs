//! [`Step`]: one unit of work of a plan, its conditional edge ([`StepCondition`]), and a step
//! as a planner asks for it ([`StepSpec`]). A step's status and attempts are read here and
//! changed only by the plan's state machine (`model::plan`).

use serde::{Deserialize, Serialize};

use crate::model::status::StepStatus;

/// One unit of work in a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// Stable and unique within its plan; never reused after a step is removed.
    pub id: String,
    pub description: String,
    /// Routing tag such as `SEARCH` or `CODE`, parsed from a leading `[TAG]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default)]
    pub depends_on: Vec<String>,
    #[serde(default)]
    pub(in crate::model) status: StepStatus,
    #[serde(default)]
    pub result: Option<String>,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub notes: String,
    #[serde(default)]
    pub attachments: Vec<String>,
    /// How many times the step has been started.
    #[serde(default)]
    pub(in crate::model) attempts: u32,
    /// Another way to do the step, tried once when retries are used up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    /// A conditional edge: the step runs only if its upstream step's result matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<StepCondition>,
    /// A rollback edge: the step runs only if this target step fails (or is blocked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollback_of: Option<String>,
    /// The step was cut short by the run's cancellation, not ended by its own outcome: a
    /// resumed run opens it again (see [`Plan::interrupt`](crate::model::plan::Plan::interrupt)).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(in crate::model) interrupted: bool,
    /// The sub-goal the step belongs to (DAG plans).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
}

/// "Run only if step `step` completed with a result containing `contains`"
/// (case-insensitive). An empty `contains` only asks that the step completed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepCondition {
    pub step: String,
    #[serde(default)]
    pub contains: String,
}

impl StepCondition {
    pub fn is_met_by(&self, result: &str) -> bool {
        self.contains.trim().is_empty()
            || result
                .to_lowercase()
                .contains(&self.contains.trim().to_lowercase())
    }
}

impl Step {
    /// Where the step is in its life; it changes only through [`Plan::transition`](crate::model::plan::Plan::transition).
    pub fn status(&self) -> StepStatus {
        self.status
    }

    /// How many times the step has been started.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// Whether the run's cancellation cut the step short.
    pub fn interrupted(&self) -> bool {
        self.interrupted
    }

    /// A new step; a leading `[TAG]` in `text` becomes the step's `kind`.
    pub fn new(id: impl Into<String>, text: &str) -> Step {
        let (kind, description) = split_kind_tag(text);
        Step {
            id: id.into(),
            description,
            kind,
            depends_on: Vec::new(),
            status: StepStatus::NotStarted,
            result: None,
            error: None,
            notes: String::new(),
            attachments: Vec::new(),
            attempts: 0,
            fallback: None,
            condition: None,
            rollback_of: None,
            interrupted: false,
            group: None,
        }
    }

    /// Every step this one waits for: dependencies, the condition's step, the rollback target.
    pub fn upstream(&self) -> impl Iterator<Item = &str> {
        self.depends_on
            .iter()
            .map(String::as_str)
            .chain(self.condition.as_ref().map(|c| c.step.as_str()))
            .chain(self.rollback_of.as_deref())
    }

    /// The step as the model wrote it: `[KIND] description`.
    pub fn display_text(&self) -> String {
        match &self.kind {
            Some(k) => format!("[{k}] {}", self.description),
            None => self.description.clone(),
        }
    }
}

/// Splits a leading `[TAG]` (letters, digits, `_` or `-`) from a step text.
/// The tag is upper-cased; text without a tag has no kind.
pub fn split_kind_tag(text: &str) -> (Option<String>, String) {
    let trimmed = text.trim();
    if let Some(rest) = trimmed.strip_prefix('[') {
        if let Some(end) = rest.find(']') {
            let tag = &rest[..end];
            let valid = !tag.is_empty()
                && tag.len() <= 32
                && tag
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if valid {
                return (
                    Some(tag.to_ascii_uppercase()),
                    rest[end + 1..].trim().to_string(),
                );
            }
        }
    }
    (None, trimmed.to_string())
}

/// A step as requested by a planner: text (with an optional `[TAG]`), optional id and deps.
#[derive(Debug, Clone, PartialEq)]
pub struct StepSpec {
    pub id: Option<String>,
    pub text: String,
    pub depends_on: Vec<String>,
}

impl StepSpec {
    pub fn text(text: impl Into<String>) -> StepSpec {
        StepSpec {
            id: None,
            text: text.into(),
            depends_on: Vec::new(),
        }
    }
}
