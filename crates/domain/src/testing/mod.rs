//! Test fakes of the ports, shared by every crate's tests so there is one of each
//! (docs/architecture.md, "Testing"): [`MemoryStore`] (re-exported from
//! [`crate::memory_store`], a real store: run store and work queue in memory, with real lease
//! semantics), [`ScriptedLlm`] and [`RoutedLlm`] (scripted LLM clients) with
//! the [`replies`] they give, [`EchoToolbox`], [`AnswersInOrder`] (a user answering from a list), [`NullStore`] (keeps nothing: for benchmarks), [`MemoryWorkspace`] (the workspace port, with tools that change it), and [`runs`] (a runtime over fakes, a
//! request, a run record).
//!
//! Compiled for the domain's own tests and, behind the `testing` cargo feature, for other
//! crates' tests (enabled in their `[dev-dependencies]` only). Like the rest of the domain it
//! does no file I/O, no HTTP and no database: everything is in memory.

pub mod llm;
pub mod null_store;
pub mod replies;
pub mod runs;
pub mod toolbox;
pub mod user;
pub mod workspace;

pub use self::llm::{step_of, RoutedLlm, ScriptedLlm};
pub use self::null_store::NullStore;
pub use self::toolbox::EchoToolbox;
pub use self::user::AnswersInOrder;
pub use self::workspace::{MemoryWorkspace, WorkspaceToolbox};
pub use crate::memory_store::{MemoryStore, StoreOp};
