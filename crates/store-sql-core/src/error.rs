//! [`RecordError`]: what goes wrong with the records themselves, in any SQL store.

/// A failure that comes from the records, not from the database or its driver. Each SQL
/// store's own error type wraps it; [`RecordError::kind`] is its port kind.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("run '{run_id}' already exists")]
    RunExists { run_id: String },
    #[error("run '{run_id}' does not exist")]
    UnknownRun { run_id: String },
    /// The event log of a run is gap-free: only `last seq + 1` is accepted.
    #[error(
        "event seq {got} of run '{run_id}' refused ({}): the next seq is {expected}",
        if got < expected { "duplicate" } else { "gap" }
    )]
    OutOfOrderEvent {
        run_id: String,
        expected: u64,
        got: u64,
    },
    #[error("{what}: invalid JSON: {source}")]
    Json {
        what: &'static str,
        source: serde_json::Error,
    },
    /// A stored value could not be turned back into a domain value.
    #[error("invalid stored {what}: {detail}")]
    Corrupt { what: &'static str, detail: String },
    /// A count above the largest signed 64-bit integer, the widest both stores keep.
    #[error("{what} = {value} does not fit a signed 64-bit integer")]
    OutOfRange { what: &'static str, value: u64 },
}

impl RecordError {
    /// `run_id` is not stored.
    pub fn unknown_run(run_id: &str) -> RecordError {
        RecordError::UnknownRun {
            run_id: run_id.to_string(),
        }
    }

    /// `run_id` is stored already.
    pub fn run_exists(run_id: &str) -> RecordError {
        RecordError::RunExists {
            run_id: run_id.to_string(),
        }
    }

    /// The port's kind for this failure (see [`domain::StoreError`]): a value that cannot
    /// be stored is `Unstorable` (never retried), one that cannot be read back `Corrupt`.
    pub fn kind(&self) -> fn(String) -> domain::StoreError {
        use domain::StoreError as Kind;
        match self {
            RecordError::UnknownRun { .. } => Kind::NotFound,
            RecordError::RunExists { .. } | RecordError::OutOfOrderEvent { .. } => Kind::Conflict,
            RecordError::Json { .. } | RecordError::Corrupt { .. } => Kind::Corrupt,
            RecordError::OutOfRange { .. } => Kind::Unstorable,
        }
    }
}
