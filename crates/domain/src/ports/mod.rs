//! The port traits: everything the domain needs from the outside world.
//!
//! Adapters implement these (`adapter-openai` → [`LlmClient`], `adapter-tools-*` → [`Tool`],
//! `adapter-store-sqlite` → [`RunStore`], [`WorkQueue`], [`RunMailbox`], each LLM adapter →
//! [`ModelProvider`]); the runner wires them
//! together. Tests use the fakes of `crate::testing` or mock them with mockall.

pub mod changes;
pub mod checkpoints;
pub mod clock;
pub mod ids;
pub mod llm;
pub mod mailbox;
pub mod planning_style;
pub mod provider;
pub mod search;
pub mod sink;
pub mod store;
pub mod tool;
pub mod user;
pub mod workspace;

pub use self::changes::*;
pub use self::checkpoints::*;
pub use self::clock::*;
pub use self::ids::*;
#[cfg(test)]
pub use self::llm::MockLlmClient;
pub use self::llm::{LlmClient, LlmError};
pub use self::mailbox::*;
pub use self::provider::*;
pub use self::search::*;
pub use self::sink::*;
pub use self::store::*;
pub use self::tool::*;
pub use self::user::*;
pub use self::workspace::*;
