//! A task family: a generator of instances of one kind of everyday job (docs/eval.md,
//! "Families"), with its name, category and a description in general words.

use super::instance::{Category, Instance};
use super::rng::Rng;

/// One family of generated tasks.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Family {
    /// Lower-case, `snake_case`; names the instances (`csv_extract-03`).
    pub name: &'static str,
    pub category: Category,
    /// The language its tasks are written in (`en`, `fr`, `es`).
    pub language: &'static str,
    /// What it asks, in general words (the docs' families table; no instance text).
    pub about: &'static str,
    /// Makes one instance from the random stream (deterministic: the same stream, the
    /// same instance).
    pub generate: fn(&mut Rng) -> Instance,
}
