//! The crate's one error type.

use store_sql::RecordError;

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
    /// A record refused or unreadable, whatever the database (shared with the SQLite
    /// store: an unknown or existing run, an event out of order, a bad stored value).
    #[error(transparent)]
    Record(#[from] RecordError),
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
            Error::Record(e) => e.kind(),
            Error::DuplicateEvent { .. } => Kind::Conflict,
            Error::SchemaTooNew { .. } => Kind::Corrupt,
            Error::Sql { source, .. } => match sqlstate_class(source) {
                SqlStateClass::Outage => Kind::Unavailable,
                SqlStateClass::Constraint => Kind::Conflict,
                SqlStateClass::Data => Kind::Unstorable,
                SqlStateClass::Other => Kind::Corrupt,
            },
            Error::Url(_)
            | Error::Pool { .. }
            | Error::Connect { .. }
            | Error::Untrusted { .. }
            | Error::RootCert { .. }
            | Error::TlsSetup { .. }
            | Error::ReadOnly { .. }
            | Error::Migration { .. } => Kind::Unavailable,
        }
    }
}

/// What a failed statement's SQLSTATE says about retrying it (PostgreSQL's appendix A).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SqlStateClass {
    /// The connection or the server, not the statement: a closed connection (no SQLSTATE),
    /// class 08 (connection exception), 53 (insufficient resources), 57 (operator
    /// intervention: shutdown, cancelled), 58 (system error), 40 (serialization failure,
    /// deadlock), `55P03` (lock not available) and `25006` (read-only transaction: a
    /// standby). Retrying later may work.
    Outage,
    /// Class 23, an integrity constraint.
    Constraint,
    /// Class 22, a data exception: the value itself cannot be stored (a NUL in text,
    /// `22021`; a number out of range). Retrying never works.
    Data,
    /// Anything else the server refused (a missing table, a privilege): not an outage.
    Other,
}

/// The class of a driver error by its SQLSTATE.
pub(crate) fn sqlstate_class(e: &tokio_postgres::Error) -> SqlStateClass {
    class_of(e.code().map(|c| c.code()))
}

/// The class of a SQLSTATE; none (the client's own failure: I/O, a closed connection) is an
/// outage.
fn class_of(code: Option<&str>) -> SqlStateClass {
    let Some(code) = code else {
        return SqlStateClass::Outage;
    };
    match code.get(..2).unwrap_or("") {
        "08" | "53" | "57" | "58" | "40" => SqlStateClass::Outage,
        _ if code == "55P03" || code == "25006" => SqlStateClass::Outage,
        "23" => SqlStateClass::Constraint,
        "22" => SqlStateClass::Data,
        _ => SqlStateClass::Other,
    }
}

/// Wraps a driver error with what was being done.
pub(crate) fn sql(context: &'static str) -> impl FnOnce(tokio_postgres::Error) -> Error {
    move |source| Error::Sql { context, source }
}

#[cfg(test)]
mod tests {
    use super::{class_of, SqlStateClass as C};

    /// Issue 29: a NUL in text (22021) was taken for an outage and the run was retried
    /// without end; only connection-level failures are outages.
    #[test]
    fn only_connection_level_failures_are_outages() {
        for (code, class) in [
            (None, C::Outage),
            (Some("08006"), C::Outage),
            (Some("57P01"), C::Outage),
            (Some("53300"), C::Outage),
            (Some("40001"), C::Outage),
            (Some("55P03"), C::Outage),
            (Some("25006"), C::Outage),
            (Some("22021"), C::Data),
            (Some("22P05"), C::Data),
            (Some("22003"), C::Data),
            (Some("23505"), C::Constraint),
            (Some("42P01"), C::Other),
            (Some("P0001"), C::Other),
        ] {
            assert_eq!(class_of(code), class, "{code:?}");
        }
    }
}
