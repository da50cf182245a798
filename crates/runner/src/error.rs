//! The runner's error: what went wrong, sorted by whose fault it is, so that a front end
//! (the binary's exit code, the server's HTTP status) can answer each kind its own way.

/// Why the runner could not do what it was asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunnerError {
    /// Bad settings or an unusable environment (a missing model, a refused state folder).
    #[error("{0}")]
    Config(String),
    /// The run named does not exist.
    #[error("{0}")]
    NotFound(String),
    /// The work could not be carried out (a store failure).
    #[error("{0}")]
    Run(String),
}
