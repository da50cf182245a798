//! What a [`RunService`](crate::service::RunService) operation answers when it cannot do
//! what was asked: [`RunServiceError`], by kind; each front end maps it its own way (the
//! server's HTTP statuses, its MCP tool errors).

/// Why a run operation could not do what was asked; the HTTP API turns each kind into a
/// status, the MCP service into a tool error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunServiceError {
    /// The request itself is wrong (an empty task, an unknown mode or model).
    #[error("{0}")]
    BadRequest(String),
    /// The caller lacks the scope the operation needs.
    #[error("{0}")]
    Forbidden(String),
    /// No such run, or not one the caller may see.
    #[error("{0}")]
    NotFound(String),
    /// The run is not in a state that allows it (ended, not waiting on this).
    #[error("{0}")]
    Conflict(String),
    /// The store is down for now: retry later.
    #[error("{0}")]
    Unavailable(String),
    /// Something failed on this side; the log says why.
    #[error("{0}")]
    Internal(String),
}

/// A store failure as a caller sees it: its kind, never the store's own message, which
/// names the database (user, host, port, name); that goes to the log only.
pub fn store_error(e: domain::StoreError) -> RunServiceError {
    use domain::StoreError as Kind;
    tracing::error!(error = %e, "store failure");
    match e {
        Kind::Unavailable(_) => {
            RunServiceError::Unavailable("the run store is unavailable for now; retry later".into())
        }
        Kind::Unstorable(_) => {
            RunServiceError::BadRequest("the run store cannot keep a value of this request".into())
        }
        Kind::NotFound(_) => RunServiceError::NotFound("the run store has no such record".into()),
        Kind::Conflict(_) => {
            RunServiceError::Conflict("the request conflicts with what the run store holds".into())
        }
        Kind::Corrupt(_) | Kind::Suspended(_) => {
            RunServiceError::Internal("the run store failed; the server's log says why".into())
        }
    }
}

/// The answer for a run that does not exist, or that the caller may not see.
pub fn unknown_run(run_id: &str) -> RunServiceError {
    RunServiceError::NotFound(format!("no run with id '{run_id}'"))
}
