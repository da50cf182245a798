//! The binary's error: each kind maps to an exit code (0 the run completed, 1 the run failed,
//! 2 a usage or configuration error, 130 stopped by the user).

use runner::RunnerError;
use server::ServeError;

/// The app's error enum; each variant maps to an exit code.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// Bad usage or configuration: exit code 2.
    #[error("{0}")]
    Config(String),
    /// The run named does not exist: exit code 2, like other bad input.
    #[error("{0}")]
    NotFound(String),
    /// The run could not be carried out (store failure): exit code 1.
    #[error("{0}")]
    Run(String),
    /// Stopped by the user (a second Ctrl-C): exit code 130, like a shell.
    #[error("{0}")]
    Stopped(String),
}

impl AppError {
    pub fn exit_code(&self) -> u8 {
        match self {
            AppError::Config(_) | AppError::NotFound(_) => 2,
            AppError::Run(_) => 1,
            AppError::Stopped(_) => 130,
        }
    }

    /// The app error of a run that ended without an outcome.
    pub fn stopped(e: domain::Error, run_id: &str) -> AppError {
        match e {
            domain::Error::Suspended => AppError::Stopped(format!(
                "the run was stopped; `planwright resume {run_id}` goes on from where it stopped"
            )),
            other => AppError::Run(format!("the run could not go on: {other}")),
        }
    }
}

impl From<RunnerError> for AppError {
    fn from(e: RunnerError) -> AppError {
        match e {
            RunnerError::Config(m) => AppError::Config(m),
            RunnerError::NotFound(m) => AppError::NotFound(m),
            RunnerError::Run(m) => AppError::Run(m),
        }
    }
}

impl From<ServeError> for AppError {
    fn from(e: ServeError) -> AppError {
        match e {
            ServeError::Config(m) => AppError::Config(m),
            ServeError::Run(m) => AppError::Run(m),
        }
    }
}
