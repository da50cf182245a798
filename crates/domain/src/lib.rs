//! # domain
//!
//! Planwright's core: the plan model and step state machine ([`plan`]), the `planning` tool
//! ([`planning_tool`]) and the checks of model-written plans ([`plan_check`]), prompts
//! ([`prompts`]), the step executor ([`executor`]) with its tool router ([`tool_router`]) and
//! action classifier ([`step_kind`]), the planning
//! styles (flow, plan-act, todo, dag, [`auto`]) as strategies of one [`scheduler`], the run
//! orchestration ([`runtime`]) and the **port traits** ([`ports`]) through which it reaches
//! the world.
//!
//! This crate must not depend on any adapter crate, on HTTP (reqwest, axum), on a database
//! (rusqlite) or on a browser driver. It talks to LLMs, tools, storage, clocks and id
//! generators only through [`ports`]. Swapping a provider never touches this crate.

pub mod engine;
pub mod error;
pub mod model;
pub mod ports;
pub mod prompts;
pub mod run;
pub mod strategy;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
#[cfg(test)]
mod tests;
pub mod tools;

pub use engine::config::{
    Mode, Revise, RunConfig, Schedule, SummaryStyle, LARGE_MODEL_PLAN_STEPS, SMALL_MODEL_PLAN_STEPS,
};
pub use engine::executor::agent::{ExecutorAgent, StepLimits};
pub use engine::lease::{LeaseConfig, RunControl};
pub use engine::runtime::{RunOutcome, RunRequest, Runtime};
pub use error::{Error, LlmError, PlanError, StoreError, ToolError};
pub use model::event::{Event, EventKind, PlanSource, RunUsage};
pub use model::plan::{Plan, Step, StepStatus};
pub use ports::llm;
