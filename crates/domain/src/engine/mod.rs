//! The run loop.

/// The sampling temperature of a call that must not be the greedy answer again: a retry,
/// the answer after a give-up sent back, a second check (docs/direct.md,
/// docs/verification.md). A greedy decoder shown the same prompt answers the same.
pub(crate) const SAMPLED_TEMPERATURE: f32 = 0.7;

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
