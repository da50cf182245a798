//! The run loop.

pub mod builder;
pub(crate) mod checkpoints;
pub mod config;
pub(crate) mod context;
pub mod executor;
pub(crate) mod failure;
pub(crate) mod graph;
pub(crate) mod inputs;
pub(crate) mod journal;
pub(crate) mod json_formats;
pub mod lease;
pub mod runtime;
pub mod scheduler;
pub mod structured;
pub(crate) mod summary;
pub mod trace;
pub(crate) mod verification;
pub(crate) mod verify;
