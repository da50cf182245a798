//! What a run can be configured with: its planning [`Mode`], when plan-act revises
//! ([`Revise`]), how ready steps are released ([`Schedule`]), and every limit ([`RunConfig`]).
//! The names users type for the first three are theirs ([`Named`]).

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::engine::executor::agent::StepLimits;
use crate::engine::lease::LeaseConfig;
use crate::error::Error;
use crate::model::approval::ApprovalPolicy;
use crate::model::names::Named;

/// The planning style of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// One upfront plan through the `planning` tool, steps in order (docs/design.md, "The flow style").
    Flow,
    /// JSON plan, one step at a time, unfinished steps revised as results come (docs/design.md, "The plan-act style").
    PlanAct,
    /// 1-3 TODOs to start, more added as work reveals them (docs/design.md, "The todo style").
    Todo,
    /// Goal → sub-goals → actions with edges; independent actions in parallel (docs/design.md, "The dag style").
    Dag,
    /// Classify the task and pick direct, flow, dag or todo (docs/direct.md): the default.
    #[default]
    Auto,
    /// No planner: the task is one step, run by one executor until it calls
    /// `complete_step` (docs/direct.md).
    Direct,
}

impl Mode {
    pub const ALL: [Mode; 6] = [
        Mode::Flow,
        Mode::PlanAct,
        Mode::Todo,
        Mode::Dag,
        Mode::Auto,
        Mode::Direct,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Flow => "flow",
            Mode::PlanAct => "plan-act",
            Mode::Todo => "todo",
            Mode::Dag => "dag",
            Mode::Auto => "auto",
            Mode::Direct => "direct",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Named for Mode {
    const WHAT: &'static str = "mode";
    fn all() -> &'static [Mode] {
        &Mode::ALL
    }
    fn name(self) -> &'static str {
        self.as_str()
    }
    fn help(self) -> &'static str {
        match self {
            Mode::Flow => "One upfront plan through the `planning` tool, steps in order",
            Mode::PlanAct => {
                "A JSON plan, one step at a time, unfinished steps revised as results come in"
            }
            Mode::Todo => "Start with 1-3 TODOs and add more as the work reveals them",
            Mode::Dag => {
                "Goal, sub-goals and actions with edges; independent actions run in parallel"
            }
            Mode::Auto => {
                "Classify the task and pick direct, flow, dag or todo (rules first; docs/direct.md)"
            }
            Mode::Direct => {
                "No planner: the task is one step, done by one executor (docs/direct.md)"
            }
        }
    }
}

impl FromStr for Mode {
    type Err = Error;
    fn from_str(s: &str) -> Result<Mode, Error> {
        Mode::from_name(s).map_err(|e| Error::Config(e.to_string()))
    }
}

/// How executors act on the workspace (docs/code-actions.md): through whole programs
/// (`code_run`), through the shell and file tools, or both. Tools of other families (the
/// browser, web search, MCP servers', asking the user) are offered whatever this says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Actions {
    /// Programs only: `code_run` instead of `shell_exec` and the `file_*` tools.
    Code,
    /// The shell and file tools only, no `code_run`.
    Tools,
    /// Everything.
    #[default]
    Both,
}

impl Actions {
    /// Whether a tool of `family` is offered under this choice.
    pub fn offers(self, family: crate::model::tool_kind::ToolFamily) -> bool {
        use crate::model::tool_kind::ToolFamily as F;
        !matches!(
            (self, family),
            (Actions::Code, F::Shell | F::ShellSession | F::Files) | (Actions::Tools, F::Code)
        )
    }
}

impl fmt::Display for Actions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Named for Actions {
    const WHAT: &'static str = "actions";
    fn all() -> &'static [Actions] {
        &[Actions::Code, Actions::Tools, Actions::Both]
    }
    fn name(self) -> &'static str {
        match self {
            Actions::Code => "code",
            Actions::Tools => "tools",
            Actions::Both => "both",
        }
    }
    fn help(self) -> &'static str {
        match self {
            Actions::Code => "Act through whole programs (code_run), not the shell and file tools",
            Actions::Tools => "Act through the shell and file tools only",
            Actions::Both => "Programs and the shell and file tools",
        }
    }
}

/// When plan-act revises the plan after a successful step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Revise {
    /// Only when the executor flags `revise_plan` (failures always lead to a re-plan).
    #[default]
    OnFailure,
    /// After every completed step.
    EveryStep,
}

impl Named for Revise {
    const WHAT: &'static str = "revise policy";
    fn all() -> &'static [Revise] {
        &[Revise::OnFailure, Revise::EveryStep]
    }
    fn name(self) -> &'static str {
        match self {
            Revise::OnFailure => "on-failure",
            Revise::EveryStep => "every-step",
        }
    }
    fn help(self) -> &'static str {
        match self {
            Revise::OnFailure => {
                "Revise after a failure, or when the executor flags that the plan no longer fits"
            }
            Revise::EveryStep => "Revise after every completed step too",
        }
    }
}

/// The plan-size cap for a small (embedded) model: a few steps, not the grammar's 16.
pub const SMALL_MODEL_PLAN_STEPS: usize = 6;

/// The plan-size cap for a remote model, which can carry a long plan.
pub const LARGE_MODEL_PLAN_STEPS: usize = 30;

/// How the final summary is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SummaryStyle {
    /// From the recorded facts, with no LLM call, when the run had one step or every step
    /// succeeded with recorded tool outputs; else by an LLM call.
    #[default]
    Auto,
    /// Always from the recorded facts.
    Facts,
    /// Always by an LLM call (the planner, else the primary agent).
    Llm,
}

impl Named for SummaryStyle {
    const WHAT: &'static str = "summary style";
    fn all() -> &'static [SummaryStyle] {
        &[SummaryStyle::Auto, SummaryStyle::Facts, SummaryStyle::Llm]
    }
    fn name(self) -> &'static str {
        match self {
            SummaryStyle::Auto => "auto",
            SummaryStyle::Facts => "facts",
            SummaryStyle::Llm => "llm",
        }
    }
    fn help(self) -> &'static str {
        match self {
            SummaryStyle::Auto => {
                "From the recorded facts when they say everything (one step, or every step \
                 succeeded with recorded outputs), else by an LLM call"
            }
            SummaryStyle::Facts => "Always from the recorded facts (no LLM call)",
            SummaryStyle::Llm => "Always by an LLM call",
        }
    }
}

/// Knobs of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunConfig {
    pub mode: Mode,
    pub schedule: Schedule,
    /// Steps running at once in parallel styles (dag).
    pub parallelism: usize,
    pub limits: StepLimits,
    /// Retries of a step that failed, before its fallback and a re-plan.
    pub retries: u32,
    /// Backoff before retry n is `retry_delay × n`.
    pub retry_delay: Duration,
    /// Plan revisions (re-plans and plan-act revisions) per run.
    pub max_revisions: u32,
    pub revise: Revise,
    /// Cap of the todo style's list.
    pub max_todos: usize,
    /// The todo style stops after this many rounds without a completed TODO.
    pub todo_stall_rounds: u32,
    /// Ask a verifier LLM call to confirm each completed step.
    pub verify: bool,
    /// Stop the run cleanly once this many tokens (prompt + completion) are spent.
    pub max_tokens: Option<u64>,
    /// Planner turns (re-asks) before falling back to the default plan.
    pub planner_attempts: u32,
    /// Most steps a planner may put in a new plan (flow's narrowed `planning` schema, the
    /// plan-act and dag JSON schemas); a plan over it is cut to it, with an event. The app
    /// sets it by model: [`SMALL_MODEL_PLAN_STEPS`] for the embedded model, more for remote
    /// ones (`--max-plan-steps`).
    pub max_plan_steps: usize,
    /// How the final summary is written: from the recorded facts when they say everything,
    /// else by an LLM call (docs/direct.md, "The summary").
    pub summary: SummaryStyle,
    /// Offer each step the tools it needs (`tool_router`), not the whole toolbox.
    pub route_tools: bool,
    /// Who this process is to the store, and how long its leases last.
    pub lease: LeaseConfig,
    /// What tool calls may run without a person's approval (docs/approvals.md).
    pub approvals: ApprovalPolicy,
    /// Let the run change and delete the files that were in the workspace before it
    /// started without saying so first (docs/security.md, "Input files").
    pub allow_input_edits: bool,
    /// How executors act: programs, tools or both (docs/code-actions.md).
    pub actions: Actions,
    /// Globs of workspace files no call may change, declared or not (`--protect`,
    /// docs/security.md, "Input files").
    pub protect: Vec<String>,
    /// Check a completed run's answer by reproducing it independently (docs/verification.md);
    /// off: every run ends `verified: false`.
    pub verification: bool,
    /// What the run's spans say about the model, and whether they carry message content
    /// (docs/observability.md).
    pub trace: crate::engine::trace::TraceLabels,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            mode: Mode::default(),
            schedule: Schedule::EventDriven,
            parallelism: 4,
            limits: StepLimits::default(),
            retries: 3,
            retry_delay: Duration::from_secs(1),
            max_revisions: 5,
            revise: Revise::OnFailure,
            max_todos: 20,
            todo_stall_rounds: 3,
            verify: false,
            max_tokens: None,
            planner_attempts: 2,
            max_plan_steps: SMALL_MODEL_PLAN_STEPS,
            summary: SummaryStyle::default(),
            route_tools: true,
            lease: LeaseConfig::default(),
            approvals: ApprovalPolicy::default(),
            allow_input_edits: false,
            actions: Actions::default(),
            protect: Vec::new(),
            verification: true,
            trace: crate::engine::trace::TraceLabels::default(),
        }
    }
}

/// How ready steps are released.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Schedule {
    /// A step starts the moment its dependencies are done.
    #[default]
    EventDriven,
    /// The dag style's super-steps (docs/design.md): all ready steps start together; the next wave waits for the
    /// slowest step of this one.
    Superstep,
}

impl Named for Schedule {
    const WHAT: &'static str = "schedule";
    fn all() -> &'static [Schedule] {
        &[Schedule::EventDriven, Schedule::Superstep]
    }
    fn name(self) -> &'static str {
        match self {
            Schedule::EventDriven => "event",
            Schedule::Superstep => "superstep",
        }
    }
    fn help(self) -> &'static str {
        match self {
            Schedule::EventDriven => "A step starts the moment its dependencies are done",
            Schedule::Superstep => {
                "Waves: the next wave starts when the slowest step of this one ends"
            }
        }
    }
}
