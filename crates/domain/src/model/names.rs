//! The names users type for closed choices: the domain's planning modes, schedules, revise
//! policies, approval modes, summary styles, and the runner's providers, sandboxes, search
//! providers and tool protocols. Each is listed once, by its type's [`Named`] implementation
//! (every value, its name, its help line), and the app's command line, config files, HTTP
//! API, MCP tools and stored queued runs all parse and list them from there
//! (docs/architecture.md, "Names"): a new value is added here and nowhere else.

use thiserror::Error;

/// A closed set of values, each with the one name users type and stores keep.
pub trait Named: Sized + Copy + PartialEq + Send + Sync + 'static {
    /// What the values are, as an error names them ("mode").
    const WHAT: &'static str;

    /// Every value, in the order they are listed.
    fn all() -> &'static [Self];

    /// The value's name.
    fn name(self) -> &'static str;

    /// One line on the value, for `--help`; empty when there is none.
    fn help(self) -> &'static str {
        ""
    }

    /// Other names the value is also known by (`llama.cpp` for `llamacpp`): accepted,
    /// never listed nor stored.
    fn aliases(self) -> &'static [&'static str] {
        &[]
    }

    /// Every name, in the order of [`Named::all`].
    fn names() -> Vec<&'static str> {
        Self::all().iter().map(|v| v.name()).collect()
    }

    /// The value named exactly `text` (its name or one of its aliases).
    fn from_name(text: &str) -> Result<Self, UnknownName> {
        Self::all()
            .iter()
            .copied()
            .find(|v| v.name() == text || v.aliases().contains(&text))
            .ok_or_else(|| UnknownName {
                what: Self::WHAT,
                given: text.to_string(),
                available: Self::names().join(", "),
            })
    }
}

/// A name that is none of a [`Named`] type's.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unknown {what} '{given}' (available: {available})")]
pub struct UnknownName {
    /// What was asked for ("mode").
    pub what: &'static str,
    /// The name given.
    pub given: String,
    /// Every name, comma-separated.
    pub available: String,
}
