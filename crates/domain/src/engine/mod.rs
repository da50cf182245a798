//! The run loop.

pub(crate) mod context;
pub mod executor;
pub(crate) mod journal;
pub mod lease;
pub mod scheduler;
pub mod structured;
pub(crate) mod summary;
