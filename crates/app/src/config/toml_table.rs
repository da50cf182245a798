//! What the config file's table readers share (the top level in `file.rs`, `[mcp_servers]`,
//! `[providers]`, `[telemetry]`): a table's entries in the order of the file, and a problem
//! with the byte range it is about.

use std::borrow::Cow;

use toml::de::{DeTable, DeValue};
use toml::Spanned;

/// A table's keys and values, in the order of the file.
pub type Entries<'t, 'i> = Vec<(&'t Spanned<Cow<'i, str>>, &'t Spanned<DeValue<'i>>)>;

/// The entries of `table` in the order of the file.
pub fn entries<'t, 'i>(table: &'t DeTable<'i>) -> Entries<'t, 'i> {
    let mut entries: Vec<_> = table.iter().collect();
    entries.sort_by_key(|(k, _)| k.span().start);
    entries
}

/// A problem and where it is (a byte range of the file).
pub struct Problem {
    pub span: std::ops::Range<usize>,
    pub text: String,
}
