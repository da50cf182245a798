//! Why a server is not running.

use std::time::Duration;

use thiserror::Error;

/// Why a server could not start, or stopped; kept in its status.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum StartError {
    #[error("cannot start `{command}`: {reason}")]
    Spawn { command: String, reason: String },
    #[error("exited during startup ({status}){stderr}")]
    Exited { status: String, stderr: String },
    #[error("did not answer `initialize` within {0:?}")]
    InitializeTimeout(Duration),
    #[error("initialize failed: {0}")]
    Initialize(String),
    #[error("tools/list failed: {0}")]
    ListTools(String),
    #[error("cannot build its HTTP client: {0}")]
    HttpClient(String),
    #[error("bearer token variable `{var}` is not set")]
    MissingToken { var: String },
    #[error("crashed again after its one restart")]
    Crashed,
}
