//! The crate's one error type.

/// Everything that can go wrong opening or using a [`PostgresStore`](crate::PostgresStore).
///
/// Through the [`RunStore`](domain::ports::RunStore) port these become
/// [`domain::StoreError`]s whose message also names the operation, the run and the database.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("invalid PostgreSQL URL: {0}")]
    Url(tokio_postgres::Error),
    #[error("cannot build the connection pool for {database}: {detail}")]
    Pool { database: String, detail: String },
    /// No connection could be had from the pool (the server is down, refuses us, or every
    /// connection is busy for too long).
    #[error("cannot connect to {database}: {detail}")]
    Connect { database: String, detail: String },
    /// The server's TLS certificate was refused (`reason`: rustls's word for it).
    #[error(
        "the TLS certificate of {database} is not trusted ({reason}): with sslmode=require it \
         must chain to a CA of this system or to the one named by sslrootcert=/path/ca.pem in \
         the URL, and name the host connected to"
    )]
    Untrusted { database: String, reason: String },
    /// The CA file named by the URL's `sslrootcert` cannot be used.
    #[error("cannot use the CA certificate {} (sslrootcert): {detail}", path.display())]
    RootCert {
        path: std::path::PathBuf,
        detail: String,
    },
    #[error("cannot set up TLS: {detail}")]
    TlsSetup { detail: String },
    #[error("{database} is read-only (a standby?): the run store needs to write")]
    ReadOnly { database: String },
    #[error("migration {number} of {database} failed: {source}")]
    Migration {
        database: String,
        number: u32,
        source: tokio_postgres::Error,
    },
    #[error(
        "{database} has schema version {found}, newer than version {supported} known to this \
         build; use a newer Planwright or another database"
    )]
    SchemaTooNew {
        database: String,
        found: i64,
        supported: u32,
    },
    /// A statement failed; `context` says which.
    #[error("{context}: {}", describe(source))]
    Sql {
        context: &'static str,
        source: tokio_postgres::Error,
    },
    #[error("{what}: invalid JSON: {source}")]
    Json {
        what: &'static str,
        source: serde_json::Error,
    },
    /// A stored value could not be turned back into a domain value.
    #[error("invalid stored {what}: {detail}")]
    Corrupt { what: &'static str, detail: String },
    #[error("{what} = {value} does not fit a PostgreSQL bigint")]
    OutOfRange { what: &'static str, value: u64 },
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
    /// Another writer appended the same `seq` at the same moment (the primary key refused
    /// the second one).
    #[error(
        "event seq {got} of run '{run_id}' refused (duplicate): another writer stored it first"
    )]
    DuplicateEvent { run_id: String, got: u64 },
}

/// The server's message with its SQLSTATE, or the client's (I/O, closed connection).
fn describe(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} (SQLSTATE {})", db.message(), db.code().code()),
        None => e.to_string(),
    }
}

impl Error {
    /// The port's kind for this failure (see [`domain::StoreError`]).
    pub fn kind(&self) -> fn(String) -> domain::StoreError {
        use domain::StoreError as Kind;
        match self {
            Error::UnknownRun { .. } => Kind::NotFound,
            Error::RunExists { .. }
            | Error::OutOfOrderEvent { .. }
            | Error::DuplicateEvent { .. } => Kind::Conflict,
            Error::SchemaTooNew { .. }
            | Error::Json { .. }
            | Error::Corrupt { .. }
            | Error::OutOfRange { .. } => Kind::Corrupt,
            Error::Sql { source, .. } if is_constraint(source) => Kind::Conflict,
            Error::Url(_)
            | Error::Pool { .. }
            | Error::Connect { .. }
            | Error::Untrusted { .. }
            | Error::RootCert { .. }
            | Error::TlsSetup { .. }
            | Error::ReadOnly { .. }
            | Error::Migration { .. }
            | Error::Sql { .. } => Kind::Unavailable,
        }
    }
}

/// An integrity constraint refused the write (SQLSTATE class 23: unique, foreign key, check).
pub(crate) fn is_constraint(e: &tokio_postgres::Error) -> bool {
    e.code().is_some_and(|c| c.code().starts_with("23"))
}

/// Wraps a driver error with what was being done.
pub(crate) fn sql(context: &'static str) -> impl FnOnce(tokio_postgres::Error) -> Error {
    move |source| Error::Sql { context, source }
}
