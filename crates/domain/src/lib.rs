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

pub mod auto;
mod dag;
pub mod error;
pub mod event;
pub mod executor;
mod flow;
mod journal;
pub mod lease;
pub mod llm;
pub mod plan;
mod plan_act;
pub mod plan_check;
pub mod plan_text;
pub mod planning_tool;
pub mod ports;
pub mod prompts;
pub mod response_schemas;
mod revise;
mod run;
pub mod runtime;
#[cfg(test)]
mod runtime_tests;
pub mod scheduler;
pub mod step_kind;
pub mod structured;
#[cfg(test)]
mod styles_tests;
mod summary;
mod todo;
pub mod tool_args;
pub mod tool_router;
pub mod tools;

pub use error::{Error, LlmError, PlanError, StoreError, ToolError};
pub use event::{Event, EventKind, PlanSource, RunUsage};
pub use executor::{ExecutorAgent, StepLimits};
pub use lease::{LeaseConfig, RunControl};
pub use plan::{Plan, Step, StepStatus};
pub use runtime::{Mode, Revise, RunConfig, RunOutcome, RunRequest, Runtime};
pub use scheduler::Schedule;
