//! Every prompt Planwright sends, in one place, by who reads it. Each is snapshot-tested
//! (tests.rs): a change to a prompt shows up as a snapshot diff in review.

mod executor;
mod planning;
mod styles;
mod summary;

pub use crate::model::text::truncate_chars;
pub use executor::*;
pub use planning::*;
pub use styles::*;
pub use summary::*;

#[cfg(test)]
mod tests;
