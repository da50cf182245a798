//! Why `serve`, `worker`, `mcp serve` or `token` could not do what they were asked (the
//! binary maps each kind to its exit code); a request's failure is an `ApiError` instead.

use runner::RunnerError;

/// Why a server could not start or run, or a token command failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServeError {
    /// Bad settings or an unusable environment (an address in use, a refused folder).
    #[error("{0}")]
    Config(String),
    /// Something failed while serving (the MCP session could not start).
    #[error("{0}")]
    Run(String),
}

impl From<RunnerError> for ServeError {
    fn from(e: RunnerError) -> ServeError {
        match e {
            RunnerError::Config(m) | RunnerError::NotFound(m) => ServeError::Config(m),
            RunnerError::Run(m) => ServeError::Run(m),
        }
    }
}
