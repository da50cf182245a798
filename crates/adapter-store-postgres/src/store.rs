//! [`PostgresStore`]: the handle and its pool, and its [`RunStore`] and [`WorkQueue`]
//! implementations.

use std::future::Future;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use deadpool_postgres::{
    Manager, ManagerConfig, Object, Pool, PoolError, RecyclingMethod, Runtime,
};
use domain::ports::{
    Change, ChangeWatch, LeaseClaim, LeaseOutcome, QueueWaiting, RunChanges, RunMailbox,
    RunMessage, RunRecord, RunStatus, RunStore, WorkQueue,
};
use domain::{Event, Plan, RunUsage, StoreError};
use tokio_postgres::config::Host;

use crate::error::Error;
use crate::listener::Listener;
use crate::{journal, leases, mailbox, migrations, runs, tls};

/// How many connections a [`PostgresStore`] keeps at most, unless told otherwise.
pub const DEFAULT_MAX_CONNECTIONS: usize = 16;

/// How long opening one connection may take (unless the URL sets `connect_timeout`), and how
/// long an operation waits for a free connection of the pool.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const WAIT_TIMEOUT: Duration = Duration::from_secs(30);

/// A [`RunStore`] and [`WorkQueue`] over one PostgreSQL database, through a pool of
/// connections. Cheap to clone; clones share the pool.
#[derive(Clone)]
pub struct PostgresStore {
    pool: Pool,
    /// The change feed: one LISTEN connection shared by the clones.
    listener: Arc<Listener>,
    /// The database as shown in messages: `postgres://user@host:port/name`, no password.
    database: String,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore")
            .field("database", &self.database)
            .finish_non_exhaustive()
    }
}

impl PostgresStore {
    /// Connects to the database at `url` (`postgres://user:password@host:port/name`, or
    /// the key=value form), checks that it accepts writes, and brings its schema up to
    /// [`SCHEMA_VERSION`](crate::SCHEMA_VERSION) in one transaction.
    ///
    /// TLS follows the URL's `sslmode` (`prefer` by default) and `sslrootcert` (see the
    /// crate's documentation); a refused server certificate is [`Error::Untrusted`].
    pub async fn open(url: &str) -> Result<PostgresStore, Error> {
        PostgresStore::open_with(url, DEFAULT_MAX_CONNECTIONS).await
    }

    /// As [`PostgresStore::open`], with at most `max_connections` connections.
    pub async fn open_with(url: &str, max_connections: usize) -> Result<PostgresStore, Error> {
        let url = tls::split(url);
        let mut config = tokio_postgres::Config::from_str(&url.url).map_err(Error::Url)?;
        // The pool and the LISTEN connection share it.
        let tls = tls::connector(config.get_ssl_mode(), url.root_cert.as_ref())?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("planwright");
        }
        let database = describe(&config);
        let listen_config = config.clone();
        let manager = Manager::from_config(
            config,
            tls.clone(),
            ManagerConfig {
                // A pooled connection is checked with an empty query before each use: one
                // the server cut (a restart, a terminated backend) is replaced at once
                // instead of failing the next operation. `Fast` only looks at the client's
                // own flag, which lags behind a connection closed a moment ago.
                recycling_method: RecyclingMethod::Verified,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(max_connections.max(1))
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(WAIT_TIMEOUT))
            .create_timeout(Some(CONNECT_TIMEOUT))
            .build()
            .map_err(|e| Error::Pool {
                database: database.clone(),
                detail: e.to_string(),
            })?;
        let mut client = checkout(&pool, &database).await?;
        refuse_read_only(&client, &database).await?;
        let version = migrations::migrate(&mut client, &database).await?;
        drop(client);
        // After the migrations: the triggers that notify exist.
        let listener = Listener::start(listen_config, tls, database.clone()).await;
        tracing::debug!(database = %database, schema_version = version, "opened run store");
        Ok(PostgresStore {
            pool,
            listener,
            database,
        })
    }

    /// The schema version recorded in the database.
    pub async fn schema_version(&self) -> Result<i64, Error> {
        migrations::schema_version(&self.connection().await?).await
    }

    /// The database, as shown in messages (no password).
    pub fn database(&self) -> &str {
        &self.database
    }

    async fn connection(&self) -> Result<Object, Error> {
        checkout(&self.pool, &self.database).await
    }

    /// Runs one operation; a failure becomes a [`StoreError`] naming the operation, the run
    /// and the database.
    async fn call<T>(
        &self,
        op: &'static str,
        run_id: Option<&str>,
        work: impl Future<Output = Result<T, Error>>,
    ) -> Result<T, StoreError> {
        work.await.map_err(|err| {
            let message = match run_id {
                Some(run_id) => {
                    format!("{op} for run '{run_id}' failed ({}): {err}", self.database)
                }
                None => format!("{op} failed ({}): {err}", self.database),
            };
            tracing::warn!(op, run_id, error = %err, "run store operation failed");
            err.kind()(message)
        })
    }
}

/// A connection of the pool (`database` as shown in messages).
async fn checkout(pool: &Pool, database: &str) -> Result<Object, Error> {
    pool.get().await.map_err(|e| {
        let database = database.to_string();
        match &e {
            PoolError::Backend(cause) => match tls::refused_certificate(cause) {
                Some(reason) => Error::Untrusted { database, reason },
                None => Error::Connect {
                    database,
                    detail: e.to_string(),
                },
            },
            _ => Error::Connect {
                database,
                detail: e.to_string(),
            },
        }
    })
}

/// A standby (read-only) server cannot hold runs: refused at open.
async fn refuse_read_only(client: &Object, database: &str) -> Result<(), Error> {
    let row = client
        .query_one("SHOW transaction_read_only", &[])
        .await
        .map_err(crate::error::sql("check that the database accepts writes"))?;
    let read_only: String = row
        .try_get(0)
        .map_err(crate::error::sql("check that the database accepts writes"))?;
    if read_only == "on" {
        return Err(Error::ReadOnly {
            database: database.to_string(),
        });
    }
    Ok(())
}

/// `postgres://user@host:port/name` from a parsed configuration, without the password.
fn describe(config: &tokio_postgres::Config) -> String {
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(name)) => name.clone(),
        Some(Host::Unix(path)) => path.display().to_string(),
        None => "localhost".to_string(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let user = config
        .get_user()
        .map(|u| format!("{u}@"))
        .unwrap_or_default();
    let name = config.get_dbname().unwrap_or("");
    format!("postgres://{user}{host}:{port}/{name}")
}

#[async_trait]
impl RunStore for PostgresStore {
    async fn create_run(&self, run: &RunRecord) -> Result<(), StoreError> {
        self.call("create_run", Some(&run.run_id), async {
            runs::insert_run(&self.connection().await?, run).await
        })
        .await
    }

    async fn update_run(&self, run: &RunRecord) -> Result<(), StoreError> {
        self.call("update_run", Some(&run.run_id), async {
            runs::update_run(&self.connection().await?, run).await
        })
        .await
    }

    async fn delete_run(&self, run_id: &str) -> Result<bool, StoreError> {
        self.call("delete_run", Some(run_id), async {
            runs::delete_run(&self.connection().await?, run_id).await
        })
        .await
    }

    async fn save_usage(&self, run_id: &str, usage: &RunUsage) -> Result<(), StoreError> {
        self.call("save_usage", Some(run_id), async {
            runs::save_usage(&self.connection().await?, run_id, usage).await
        })
        .await
    }

    async fn set_run_status(&self, run_id: &str, status: RunStatus) -> Result<(), StoreError> {
        self.call("set_run_status", Some(run_id), async {
            runs::set_run_status(&self.connection().await?, run_id, status).await
        })
        .await
    }

    async fn save_plan(&self, run_id: &str, plan: &Plan) -> Result<(), StoreError> {
        self.call("save_plan", Some(run_id), async {
            journal::save_plan(&mut self.connection().await?, run_id, plan).await
        })
        .await
    }

    async fn append_event(&self, event: &Event) -> Result<(), StoreError> {
        self.call("append_event", Some(&event.run_id), async {
            journal::append_event(&self.connection().await?, event).await
        })
        .await
    }

    async fn get_run(&self, run_id: &str) -> Result<Option<RunRecord>, StoreError> {
        self.call("get_run", Some(run_id), async {
            runs::get_run(&self.connection().await?, run_id).await
        })
        .await
    }

    async fn list_runs(&self) -> Result<Vec<RunRecord>, StoreError> {
        self.call("list_runs", None, async {
            runs::list_runs(&self.connection().await?).await
        })
        .await
    }

    async fn latest_plan(&self, run_id: &str) -> Result<Option<Plan>, StoreError> {
        self.call("latest_plan", Some(run_id), async {
            journal::latest_plan(&self.connection().await?, run_id).await
        })
        .await
    }

    async fn events(&self, run_id: &str, after_seq: u64) -> Result<Vec<Event>, StoreError> {
        self.call("events", Some(run_id), async {
            journal::events(&self.connection().await?, run_id, after_seq).await
        })
        .await
    }

    async fn acquire_lease(
        &self,
        run_id: &str,
        claim: &LeaseClaim,
    ) -> Result<LeaseOutcome, StoreError> {
        self.call("acquire_lease", Some(run_id), async {
            leases::acquire(&self.connection().await?, run_id, claim).await
        })
        .await
    }

    async fn renew_lease(
        &self,
        run_id: &str,
        owner: &str,
        until: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        self.call("renew_lease", Some(run_id), async {
            leases::renew(&self.connection().await?, run_id, owner, until).await
        })
        .await
    }

    async fn release_lease(&self, run_id: &str, owner: &str) -> Result<(), StoreError> {
        self.call("release_lease", Some(run_id), async {
            leases::release(&self.connection().await?, run_id, owner).await
        })
        .await
    }
}

#[async_trait]
impl WorkQueue for PostgresStore {
    async fn enqueue(&self, run: &RunRecord) -> Result<(), StoreError> {
        let run = store_sql::queue::queued(run);
        self.call("enqueue", Some(&run.run_id), async {
            runs::insert_run(&self.connection().await?, &run).await
        })
        .await
    }

    async fn claim(
        &self,
        owner: &str,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<Option<RunRecord>, StoreError> {
        self.call("claim", None, async {
            leases::claim(&mut self.connection().await?, owner, now, until).await
        })
        .await
    }

    async fn cancel_queued(
        &self,
        run_id: &str,
        error: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        self.call("cancel_queued", Some(run_id), async {
            leases::cancel_queued(&self.connection().await?, run_id, error, now).await
        })
        .await
    }

    async fn position(&self, run_id: &str) -> Result<Option<usize>, StoreError> {
        self.call("position", Some(run_id), async {
            leases::position(&self.connection().await?, run_id).await
        })
        .await
    }

    async fn waiting(&self) -> Result<QueueWaiting, StoreError> {
        self.call("waiting", None, async {
            leases::waiting(&self.connection().await?).await
        })
        .await
    }
}

#[async_trait]
impl RunMailbox for PostgresStore {
    async fn post(&self, run_id: &str, message: &RunMessage) -> Result<(), StoreError> {
        self.call("post run message", Some(run_id), async {
            mailbox::post(&self.connection().await?, run_id, message, Utc::now()).await
        })
        .await
    }

    async fn take(&self, run_id: &str, owner: &str) -> Result<Vec<RunMessage>, StoreError> {
        self.call("take run messages", Some(run_id), async {
            mailbox::take(&self.connection().await?, run_id, owner).await
        })
        .await
    }
}

impl RunChanges for PostgresStore {
    fn watch(&self, run_id: &str, change: Change) -> Box<dyn ChangeWatch> {
        self.listener.watch(run_id, change)
    }

    fn watch_queue(&self) -> Box<dyn ChangeWatch> {
        self.listener.watch_queue()
    }
}
