//! [`ExecutorAgent`]: who executes steps (an LLM, a toolbox, the step kinds it serves), and
//! the [`StepLimits`] of one step's tool loop.

use std::sync::Arc;
use std::time::Duration;

use crate::ports::{LlmClient, Toolbox};

/// An agent that executes steps: its LLM, its tools, and the step kinds it serves.
#[derive(Clone)]
pub struct ExecutorAgent {
    pub name: String,
    pub description: String,
    /// Step tags (`CODE`, `SEARCH`, ...) routed to this agent; matched case-insensitively.
    pub kinds: Vec<String>,
    pub llm: Arc<dyn LlmClient>,
    pub toolbox: Arc<dyn Toolbox>,
}

impl std::fmt::Debug for ExecutorAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecutorAgent")
            .field("name", &self.name)
            .field("kinds", &self.kinds)
            .finish_non_exhaustive()
    }
}

impl ExecutorAgent {
    pub fn serves(&self, kind: &str) -> bool {
        self.kinds.iter().any(|k| k.eq_ignore_ascii_case(kind))
            || self.name.eq_ignore_ascii_case(kind)
    }
}

/// The runtime's own nudges inside a step's loop (docs/direct.md, "Bad input"), all in
/// one place and each switchable: none reads a word of the task or of a tool's output, so
/// they work the same in every language; a library that wants the model left alone turns
/// them off with [`Nudges::none`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Nudges {
    /// A success claimed before any call of the attempt worked is refused once.
    pub claim_before_acting: bool,
    /// The same call, output or text over and over gets one nudge, then ends the attempt.
    pub loops: bool,
    /// A tool failing twice in a row gets a hint to try another way.
    pub failing_tool: bool,
    /// A step finished with a file its calls wrote left empty is sent back once to look.
    pub empty_outputs: bool,
    /// A step finished with a file its calls wrote that holds what it held when the run
    /// started (rewritten, nothing changed) is sent back once to look.
    pub unchanged_outputs: bool,
}

impl Nudges {
    /// No nudge at all: the model's own answers decide.
    pub fn none() -> Nudges {
        Nudges {
            claim_before_acting: false,
            loops: false,
            failing_tool: false,
            empty_outputs: false,
            unchanged_outputs: false,
        }
    }
}

/// The default: loops and failing tools nudged; a claim before acting is not (a capable
/// model may answer at once; the runner turns it on for the embedded model, which otherwise
/// types answers it should compute).
impl Default for Nudges {
    fn default() -> Self {
        Nudges {
            claim_before_acting: false,
            loops: true,
            failing_tool: true,
            empty_outputs: true,
            unchanged_outputs: true,
        }
    }
}

/// Limits of one step's tool loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepLimits {
    /// LLM turns per step; the budget starts afresh for every step.
    pub max_turns: u32,
    /// Tool output beyond this many bytes is cut (head and tail kept) before the model sees it.
    pub max_observation_bytes: usize,
    /// Characters of each dependency's result shown to a step.
    pub max_dependency_chars: usize,
    /// Characters of everything a step is shown of earlier steps (results and facts).
    pub max_earlier_chars: usize,
    /// Wall time of one attempt of a step, checked before each LLM turn (a tool call and an
    /// LLM call have their own time limits); `None`: no limit.
    pub max_step_time: Option<Duration>,
    /// Tool calls run from one model answer; the rest get "not executed" results.
    pub max_calls_per_reply: usize,
    /// The runtime's nudges inside the loop.
    pub nudges: Nudges,
}

impl Default for StepLimits {
    fn default() -> Self {
        StepLimits {
            max_turns: 20,
            max_observation_bytes: 16 * 1024,
            max_dependency_chars: 1200,
            max_earlier_chars: 2400,
            max_step_time: Some(Duration::from_secs(30 * 60)),
            max_calls_per_reply: 16,
            nudges: Nudges::default(),
        }
    }
}
