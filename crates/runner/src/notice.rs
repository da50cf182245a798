//! Notices for the person running Planwright (the sandbox fallback warning, the embedded
//! model picked for want of an endpoint): the runner writes nothing to the terminal itself,
//! so a front end installs where notices go ([`set_writer`]; the binary writes them on
//! stderr, warnings unless `-q`). Without a writer they are logged.

use std::sync::OnceLock;

/// How much a notice matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// A choice made for the user that they must know of (the embedded model picked for
    /// want of an endpoint): said even to a quiet front end.
    Choice,
    /// Something the user should act on or silence (no sandbox); a quiet front end drops it.
    Warning,
}

/// Where notices go.
pub type Writer = fn(Level, &str);

static WRITER: OnceLock<Writer> = OnceLock::new();

/// Sets where this process's notices go (once; later calls are ignored).
pub fn set_writer(writer: Writer) {
    let _ = WRITER.set(writer);
}

/// Says `text` to the user.
pub fn say(level: Level, text: &str) {
    match WRITER.get() {
        Some(writer) => writer(level, text),
        None => match level {
            Level::Choice => tracing::info!("{text}"),
            Level::Warning => tracing::warn!("{text}"),
        },
    }
}
