//! [`SqliteStore`]: the handle, and its [`RunStore`] implementation.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use domain::ports::{
    Change, ChangeWatch, LeaseClaim, LeaseOutcome, QueueWaiting, RunChanges, RunMailbox,
    RunMessage, RunRecord, RunStatus, RunStore, TimerWatch, WorkQueue,
};
use domain::{Event, Plan, RunUsage, StoreError};
use rusqlite::Connection;

use crate::connection::{open_connection_with, Durability};
use crate::error::Error;
use crate::{leases, mailbox, migrations, queries};

/// A [`RunStore`] over one SQLite file. Cheap to clone; clones share one connection.
#[derive(Clone)]
pub struct SqliteStore {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    conn: Mutex<Connection>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.inner.path)
            .finish_non_exhaustive()
    }
}

impl SqliteStore {
    /// Opens (creating it and its missing parent folders if needed) the database at `path`,
    /// sets the connection's pragmas and brings the schema up to
    /// [`SCHEMA_VERSION`](crate::SCHEMA_VERSION).
    ///
    /// Blocking: call it at startup, or from `spawn_blocking`.
    pub fn open(path: impl AsRef<Path>) -> Result<SqliteStore, Error> {
        SqliteStore::open_with(path, Durability::default())
    }

    /// As [`SqliteStore::open`], choosing how hard each commit is pushed to disk.
    pub fn open_with(path: impl AsRef<Path>, durability: Durability) -> Result<SqliteStore, Error> {
        let path = path.as_ref().to_path_buf();
        let mut conn = open_connection_with(&path, durability)?;
        migrations::refuse_foreign(&conn, &path)?;
        let version = migrations::migrate(&mut conn, &path)?;
        tracing::debug!(path = %path.display(), schema_version = version, "opened run store");
        Ok(SqliteStore {
            inner: Arc::new(Inner {
                path,
                conn: Mutex::new(conn),
            }),
        })
    }

    /// The schema version recorded in the file (`PRAGMA user_version`). Blocking, but quick.
    pub fn schema_version(&self) -> Result<u32, Error> {
        migrations::user_version(&self.inner.lock(), &self.inner.path)
    }

    /// The database file this store was opened on.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Runs `f` on the connection in a blocking task; failures become a [`StoreError`]
    /// naming the operation, the run and the file.
    async fn call<T, F>(
        &self,
        op: &'static str,
        run_id: Option<&str>,
        f: F,
    ) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, Error> + Send + 'static,
    {
        let inner = Arc::clone(&self.inner);
        let outcome = tokio::task::spawn_blocking(move || f(&mut inner.lock()))
            .await
            .map_err(Error::from)
            .and_then(|r| r);
        outcome.map_err(|err| {
            let message = match run_id {
                Some(run_id) => format!(
                    "{op} for run '{run_id}' failed ({}): {err}",
                    self.inner.path.display()
                ),
                None => format!("{op} failed ({}): {err}", self.inner.path.display()),
            };
            tracing::warn!(op, run_id, error = %err, "run store operation failed");
            err.kind()(message)
        })
    }
}

impl Inner {
    /// The connection. A panic while holding the lock cannot leave a transaction half-done
    /// (dropping a rusqlite `Transaction` rolls it back), so a poisoned lock is recovered.
    fn lock(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|poisoned: PoisonError<_>| {
            tracing::warn!(path = %self.path.display(), "recovering the store connection after a panic");
            poisoned.into_inner()
        })
    }
}

#[async_trait]
impl RunStore for SqliteStore {
    async fn create_run(&self, run: &RunRecord) -> Result<(), StoreError> {
        let run = run.clone();
        let run_id = run.run_id.clone();
        self.call("create_run", Some(&run_id), move |conn| {
            queries::insert_run(conn, &run)
        })
        .await
    }

    async fn update_run(&self, run: &RunRecord) -> Result<(), StoreError> {
        let run = run.clone();
        let run_id = run.run_id.clone();
        self.call("update_run", Some(&run_id), move |conn| {
            queries::update_run(conn, &run)
        })
        .await
    }

    async fn delete_run(&self, run_id: &str) -> Result<bool, StoreError> {
        let id = run_id.to_string();
        self.call("delete_run", Some(run_id), move |conn| {
            queries::delete_run(conn, &id)
        })
        .await
    }

    async fn save_usage(&self, run_id: &str, usage: &RunUsage) -> Result<(), StoreError> {
        let id = run_id.to_string();
        let usage = *usage;
        self.call("save_usage", Some(run_id), move |conn| {
            queries::save_usage(conn, &id, &usage)
        })
        .await
    }

    async fn set_run_status(&self, run_id: &str, status: RunStatus) -> Result<(), StoreError> {
        let id = run_id.to_string();
        self.call("set_run_status", Some(run_id), move |conn| {
            queries::set_run_status(conn, &id, status)
        })
        .await
    }

    async fn save_plan(&self, run_id: &str, plan: &Plan) -> Result<(), StoreError> {
        let plan = plan.clone();
        let id = run_id.to_string();
        self.call("save_plan", Some(run_id), move |conn| {
            queries::save_plan(conn, &id, &plan)
        })
        .await
    }

    async fn append_event(&self, event: &Event) -> Result<(), StoreError> {
        let event = event.clone();
        let run_id = event.run_id.clone();
        self.call("append_event", Some(&run_id), move |conn| {
            queries::append_event(conn, &event)
        })
        .await
    }

    async fn get_run(&self, run_id: &str) -> Result<Option<RunRecord>, StoreError> {
        let id = run_id.to_string();
        self.call("get_run", Some(run_id), move |conn| {
            queries::get_run(conn, &id)
        })
        .await
    }

    async fn list_runs(&self) -> Result<Vec<RunRecord>, StoreError> {
        self.call("list_runs", None, |conn| queries::list_runs(conn))
            .await
    }

    async fn latest_plan(&self, run_id: &str) -> Result<Option<Plan>, StoreError> {
        let id = run_id.to_string();
        self.call("latest_plan", Some(run_id), move |conn| {
            queries::latest_plan(conn, &id)
        })
        .await
    }

    async fn events(&self, run_id: &str, after_seq: u64) -> Result<Vec<Event>, StoreError> {
        let id = run_id.to_string();
        self.call("events", Some(run_id), move |conn| {
            queries::events(conn, &id, after_seq)
        })
        .await
    }

    async fn acquire_lease(
        &self,
        run_id: &str,
        claim: &LeaseClaim,
    ) -> Result<LeaseOutcome, StoreError> {
        let id = run_id.to_string();
        let claim = claim.clone();
        self.call("acquire_lease", Some(run_id), move |conn| {
            leases::acquire(conn, &id, &claim)
        })
        .await
    }

    async fn renew_lease(
        &self,
        run_id: &str,
        owner: &str,
        until: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let (id, owner) = (run_id.to_string(), owner.to_string());
        self.call("renew_lease", Some(run_id), move |conn| {
            leases::renew(conn, &id, &owner, until)
        })
        .await
    }

    async fn release_lease(&self, run_id: &str, owner: &str) -> Result<(), StoreError> {
        let (id, owner) = (run_id.to_string(), owner.to_string());
        self.call("release_lease", Some(run_id), move |conn| {
            leases::release(conn, &id, &owner)
        })
        .await
    }
}

#[async_trait]
impl WorkQueue for SqliteStore {
    async fn enqueue(&self, run: &RunRecord) -> Result<(), StoreError> {
        let run = store_sql::queue::queued(run);
        let run_id = run.run_id.clone();
        self.call("enqueue", Some(&run_id), move |conn| {
            queries::insert_run(conn, &run)
        })
        .await
    }

    async fn claim(
        &self,
        owner: &str,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<Option<RunRecord>, StoreError> {
        let owner = owner.to_string();
        self.call("claim", None, move |conn| {
            leases::claim(conn, &owner, now, until)
        })
        .await
    }

    async fn cancel_queued(
        &self,
        run_id: &str,
        error: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let (id, error) = (run_id.to_string(), error.to_string());
        self.call("cancel_queued", Some(run_id), move |conn| {
            leases::cancel_queued(conn, &id, &error, now)
        })
        .await
    }

    async fn position(&self, run_id: &str) -> Result<Option<usize>, StoreError> {
        let id = run_id.to_string();
        self.call("position", Some(run_id), move |conn| {
            leases::position(conn, &id)
        })
        .await
    }

    async fn waiting(&self) -> Result<QueueWaiting, StoreError> {
        self.call("waiting", None, |conn| leases::waiting(conn))
            .await
    }
}

#[async_trait]
impl RunMailbox for SqliteStore {
    async fn post(&self, run_id: &str, message: &RunMessage) -> Result<(), StoreError> {
        let (id, message, now) = (run_id.to_string(), message.clone(), Utc::now());
        self.call("post run message", Some(run_id), move |conn| {
            mailbox::post(conn, &id, &message, now)
        })
        .await
    }

    async fn take(&self, run_id: &str, owner: &str) -> Result<Vec<RunMessage>, StoreError> {
        let (id, owner) = (run_id.to_string(), owner.to_string());
        self.call("take run messages", Some(run_id), move |conn| {
            mailbox::take(conn, &id, &owner)
        })
        .await
    }
}

/// SQLite cannot tell other processes what was written: watches only time out, and
/// followers read the file on a timer.
impl RunChanges for SqliteStore {
    fn watch(&self, _run_id: &str, _change: Change) -> Box<dyn ChangeWatch> {
        Box::new(TimerWatch)
    }

    fn watch_queue(&self) -> Box<dyn ChangeWatch> {
        Box::new(TimerWatch)
    }
}
