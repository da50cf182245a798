//! # domain
//!
//! Planwright's core: the plan model and step state machine ([`model::plan`]), the `planning`
//! tool ([`tools::planning`]) and the checks of model-written plans ([`model::plan_check`]),
//! prompts ([`prompts`]), the step executor ([`engine::executor`]) with its tool router
//! ([`engine::executor::router`]) and the workspace view of a step's first prompt
//! (`engine::executor::workspace_view`), the planning styles (flow, plan-act, todo, dag, direct, [`strategy::auto`]) as strategies of one
//! [`engine::scheduler`], the run orchestration ([`Runtime`], [`run`]) and the **port traits**
//! ([`ports`]) through which it reaches the world.
//!
//! This crate must not depend on any adapter crate, on HTTP (reqwest, axum), on a database
//! (rusqlite) or on a browser driver. It talks to LLMs, tools, storage, clocks and id
//! generators only through [`ports`]. Swapping a provider never touches this crate.
//!
//! ## Embedding it
//!
//! [`Runtime::builder`] takes the one thing without a default, an [`LlmClient`]; everything
//! else defaults (the system clock, [`ports::TimeRandomIds`], no live listener, nobody to
//! ask, a [`MemoryStore`], [`RunConfig::default`]). Here the model is written on the spot and
//! always ends its step; a real program passes adapter-openai's `OpenAiClient`,
//! adapter-llama's embedded model, or its own. More in the crate's `examples/` (a custom
//! tool, a custom LLM provider, the in-memory store) and adapter-store-sqlite's (a run on
//! SQLite, its events streamed).
//!
//! ```
//! use std::sync::Arc;
//!
//! use domain::llm::{ChatRequest, ChatResponse, ToolCall};
//! use domain::{async_trait, CancellationToken, LlmClient, LlmError, Mode, RunConfig};
//! use domain::{RunRequest, RunStatus, Runtime};
//!
//! /// A model that ends every step at once, saying hello.
//! struct Hello;
//!
//! #[async_trait]
//! impl LlmClient for Hello {
//!     async fn chat(&self, _request: ChatRequest) -> Result<ChatResponse, LlmError> {
//!         Ok(ChatResponse {
//!             tool_calls: vec![ToolCall {
//!                 id: "call_1".into(),
//!                 name: "complete_step".into(),
//!                 arguments: r#"{"success": true, "result": "Hello!"}"#.into(),
//!             }],
//!             ..ChatResponse::default()
//!         })
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), domain::Error> {
//! let runtime = Runtime::builder(Arc::new(Hello))
//!     .config(RunConfig { mode: Mode::Direct, ..RunConfig::default() })
//!     .build();
//! let request = RunRequest {
//!     run_id: runtime.new_run_id(),
//!     task: "Say hello".into(),
//!     workspace: std::env::temp_dir(),
//! };
//! let outcome = runtime.run(request, CancellationToken::new()).await?;
//! assert_eq!(outcome.status, RunStatus::Completed);
//! assert!(outcome.summary.contains("Hello!"), "{}", outcome.summary);
//! # Ok(())
//! # }
//! ```

pub mod engine;
pub mod error;
pub mod memory_store;
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

pub use async_trait::async_trait;
pub use engine::builder::RuntimeBuilder;
pub use engine::config::{
    Actions, Mode, Revise, RunConfig, Schedule, SummaryStyle, LARGE_MODEL_PLAN_STEPS,
    SMALL_MODEL_PLAN_STEPS,
};
pub use engine::executor::agent::{ExecutorAgent, Nudges, StepLimits};
pub use engine::lease::{LeaseConfig, RunControl};
pub use engine::runtime::{RunOutcome, RunRequest, Runtime};
pub use error::{Error, LlmError, PlanError, StoreError, ToolError};
pub use memory_store::MemoryStore;
pub use model::event::{Event, EventKind, PlanSource, RunUsage};
pub use model::plan::{Plan, Step, StepStatus};
pub use ports::llm;
pub use ports::planning_style::{InitialPlan, PlanningStyle, StepReport, StyleRequest};
pub use ports::{
    EventSink, LlmClient, RunStatus, RunStore, Tool, ToolContext, ToolOutput, Toolbox,
};
pub use tokio_util::sync::CancellationToken;
pub use tools::builtin::ToolSet;
