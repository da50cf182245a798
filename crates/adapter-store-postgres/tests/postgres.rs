//! What only the PostgreSQL store does: its schema and migrations, bad databases, separate
//! pools racing (as separate worker processes would), the tables as written. The
//! store-agnostic cases are in `tests/conformance.rs` (crates/store-conformance).

use adapter_store_postgres::{Error, PostgresStore, SCHEMA_VERSION};
use domain::ports::{LeaseOutcome, RunStore, WorkQueue};
use domain::StoreError;
use store_conformance::fixtures::{claim, message, plan, queued, running_run, time};
use store_conformance::pg_cluster;

/// A raw connection to `url`, for writing what the store never would.
async fn raw(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("connect");
    tokio::spawn(connection);
    client
}

#[tokio::test]
async fn a_fresh_database_ends_at_the_current_schema_and_reopening_is_a_no_op() {
    if !pg_cluster::available() {
        return;
    }
    let url = pg_cluster::fresh_database().await;
    let store = PostgresStore::open(&url).await.expect("open");
    assert_eq!(
        store.schema_version().await.expect("version"),
        i64::from(SCHEMA_VERSION)
    );
    store
        .create_run(&running_run("r", 0))
        .await
        .expect("create");
    let again = PostgresStore::open(&url).await.expect("reopen");
    assert_eq!(
        again.get_run("r").await.expect("get"),
        Some(running_run("r", 0))
    );
    assert!(
        store
            .database()
            .starts_with("postgres://postgres@127.0.0.1:"),
        "{}",
        store.database()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn several_processes_opening_a_fresh_database_at_once_migrate_it_once() {
    if !pg_cluster::available() {
        return;
    }
    let url = pg_cluster::fresh_database().await;
    let opens = (0..6).map(|_| {
        let url = url.clone();
        tokio::spawn(async move { PostgresStore::open_with(&url, 2).await })
    });
    for opened in futures_util::future::join_all(opens).await {
        opened.expect("task").expect("every open succeeds");
    }
    let client = raw(&url).await;
    let rows = client
        .query("SELECT version FROM planwright_schema", &[])
        .await
        .expect("read version");
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].get::<_, i32>(0), SCHEMA_VERSION as i32);
}

#[tokio::test]
async fn a_database_of_a_newer_schema_is_refused_clearly() {
    if !pg_cluster::available() {
        return;
    }
    let url = pg_cluster::fresh_database().await;
    PostgresStore::open(&url).await.expect("open");
    raw(&url)
        .await
        .execute("UPDATE planwright_schema SET version = 99", &[])
        .await
        .expect("bump");
    let err = PostgresStore::open(&url).await.expect_err("too new");
    assert!(
        matches!(err, Error::SchemaTooNew { found: 99, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("newer than version"), "{err}");
    assert!(matches!(err.kind()(String::new()), StoreError::Corrupt(_)));
}

#[tokio::test]
async fn an_unreachable_server_or_a_missing_database_is_unavailable() {
    if !pg_cluster::available() {
        return;
    }
    let cluster = tokio::task::spawn_blocking(pg_cluster::cluster)
        .await
        .expect("cluster");
    let missing = PostgresStore::open(&cluster.url("no_such_database"))
        .await
        .expect_err("no such database");
    assert!(matches!(missing, Error::Connect { .. }), "{missing:?}");
    assert!(
        missing.to_string().contains("no_such_database"),
        "{missing}"
    );
    assert!(matches!(
        missing.kind()(String::new()),
        StoreError::Unavailable(_)
    ));

    // A port nothing listens on (taken from the OS, then closed again).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port")
        .port();
    let refused = PostgresStore::open(&format!("postgres://postgres@127.0.0.1:{port}/x"))
        .await
        .expect_err("nothing listens");
    assert!(matches!(refused, Error::Connect { .. }), "{refused:?}");

    let bad = PostgresStore::open("postgres://host:notaport/x")
        .await
        .expect_err("bad URL");
    assert!(matches!(bad, Error::Url(_)), "{bad:?}");
}

#[tokio::test]
async fn a_read_only_database_is_refused_at_open() {
    if !pg_cluster::available() {
        return;
    }
    let url = pg_cluster::fresh_database().await;
    let name = url.rsplit('/').next().expect("name").to_string();
    raw(&url)
        .await
        .batch_execute(&format!(
            "ALTER DATABASE {name} SET default_transaction_read_only = on"
        ))
        .await
        .expect("make read-only");
    let err = PostgresStore::open(&url).await.expect_err("read-only");
    assert!(matches!(err, Error::ReadOnly { .. }), "{err:?}");
    assert!(err.to_string().contains("read-only"), "{err}");
    let tables = raw(&url)
        .await
        .query("SELECT 1 FROM pg_tables WHERE tablename = 'runs'", &[])
        .await
        .expect("look");
    assert!(tables.is_empty(), "nothing half-migrated");
}

/// Three pools (as three worker processes would hold) claim from one queue and race for
/// one expired lease: every run is claimed once, one racer wins.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn separate_pools_claim_each_run_once_and_race_fairly_for_a_lease() {
    if !pg_cluster::available() {
        return;
    }
    let url = pg_cluster::fresh_database().await;
    let first = PostgresStore::open(&url).await.expect("open");
    for i in 0..30 {
        first
            .enqueue(&queued(&format!("q{i:02}"), i))
            .await
            .expect("enqueue");
    }
    let mut workers = Vec::new();
    for w in 0..3 {
        let store = PostgresStore::open_with(&url, 3).await.expect("open");
        workers.push(tokio::spawn(async move {
            let mut mine = Vec::new();
            while let Some(run) = store
                .claim(&format!("w{w}"), time(100, 0), time(200, 0))
                .await
                .expect("claim")
            {
                mine.push(run.run_id);
            }
            mine
        }));
    }
    let mut all: Vec<String> = Vec::new();
    for worker in futures_util::future::join_all(workers).await {
        all.extend(worker.expect("worker"));
    }
    all.sort();
    let expected: Vec<String> = (0..30).map(|i| format!("q{i:02}")).collect();
    assert_eq!(all, expected, "each run claimed exactly once");

    let racers = (0..3).map(|i| {
        let url = url.clone();
        tokio::spawn(async move {
            let store = PostgresStore::open_with(&url, 1).await.expect("open");
            store
                .acquire_lease("q00", &claim(&format!("r{i}"), 300, 400))
                .await
                .expect("acquire")
        })
    });
    let outcomes: Vec<LeaseOutcome> = futures_util::future::join_all(racers)
        .await
        .into_iter()
        .map(|o| o.expect("racer"))
        .collect();
    let won = outcomes
        .iter()
        .filter(|o| **o == LeaseOutcome::Acquired)
        .count();
    assert_eq!(won, 1, "{outcomes:?}");
}

#[tokio::test]
async fn the_tables_hold_steps_of_the_newest_plan_and_refuse_event_updates() {
    if !pg_cluster::available() {
        return;
    }
    let url = pg_cluster::fresh_database().await;
    let store = PostgresStore::open(&url).await.expect("open");
    store
        .create_run(&running_run("run_1", 0))
        .await
        .expect("create");
    let mut p = plan(&["a", "b", "c"]);
    store.save_plan("run_1", &p).await.expect("v1");
    p.replace_steps(&[
        domain::model::plan::StepSpec::text("a"),
        domain::model::plan::StepSpec::text("d"),
    ])
    .expect("v2");
    store.save_plan("run_1", &p).await.expect("v2");
    store
        .append_event(&message("run_1", 1, "hi"))
        .await
        .expect("event");

    let client = raw(&url).await;
    let steps: Vec<String> = client
        .query(
            "SELECT step_id FROM steps WHERE run_id = 'run_1' ORDER BY position",
            &[],
        )
        .await
        .expect("steps")
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(
        steps,
        ["s1", "s4"],
        "steps mirror v2; removed steps are gone"
    );
    let versions: i64 = client
        .query_one("SELECT COUNT(*) FROM plans WHERE run_id = 'run_1'", &[])
        .await
        .expect("plans")
        .get(0);
    assert_eq!(versions, 2);
    let err = client
        .execute("UPDATE events SET type = 'x'", &[])
        .await
        .expect_err("append-only");
    assert!(err.to_string().contains("append-only") || format!("{err:?}").contains("append-only"));
}

/// One malformed row (written by hand: an unknown status) does not hide the other runs.
#[tokio::test]
async fn an_unreadable_row_is_left_out_of_the_list() {
    if !pg_cluster::available() {
        return;
    }
    let url = pg_cluster::fresh_database().await;
    let store = PostgresStore::open(&url).await.expect("open");
    store
        .create_run(&running_run("good", 1))
        .await
        .expect("create");
    raw(&url)
        .await
        .execute(
            "INSERT INTO runs (run_id, task, mode, status, workspace, created_at)
             VALUES ('bad', 't', 'flow', 'exploded', '/tmp/ws', '2026-01-01T00:00:00Z')",
            &[],
        )
        .await
        .expect("insert a malformed row");
    let ids: Vec<String> = store
        .list_runs()
        .await
        .expect("the list still works")
        .into_iter()
        .map(|r| r.run_id)
        .collect();
    assert_eq!(ids, ["good"]);
    let err = store
        .get_run("bad")
        .await
        .expect_err("that run alone says what is wrong");
    assert!(matches!(err, StoreError::Corrupt(_)), "{err:?}");
    assert!(err.message().contains("exploded"), "{err}");
}

/// The change feed: a message posted or an event appended through one store (one
/// process) wakes the watches of that run made through another (another process), and
/// nobody else's.
#[tokio::test]
async fn writes_wake_the_watches_of_their_run_in_other_processes() {
    use domain::ports::{Change, RunChanges, RunMailbox, RunMessage};
    use std::time::Duration;
    if !pg_cluster::available() {
        return;
    }
    let url = pg_cluster::fresh_database().await;
    let writer = PostgresStore::open(&url).await.expect("open");
    let follower = PostgresStore::open(&url).await.expect("open again");
    writer
        .create_run(&running_run("r", 0))
        .await
        .expect("create");
    writer
        .create_run(&running_run("other", 0))
        .await
        .expect("create other");
    let mut messages = follower.watch("r", Change::Messages);
    let mut events = follower.watch("r", Change::Events);
    let mut elsewhere = follower.watch("other", Change::Events);
    writer.post("r", &RunMessage::Cancel).await.expect("post");
    writer
        .append_event(&message("r", 1, "hello"))
        .await
        .expect("append");
    let long = Duration::from_secs(60);
    assert!(messages.changed(long).await, "woken by the message");
    assert!(events.changed(long).await, "woken by the event");
    assert!(
        !elsewhere.changed(Duration::from_millis(300)).await,
        "another run's watch stays asleep"
    );
}

/// A connection cut in the middle of a claim's transaction (the claim waits on a lock; its
/// backend is terminated): the claim fails as `Unavailable`, nothing of it is kept, and the
/// next claim, on a fresh connection of the pool, takes the run (once).
#[tokio::test]
async fn a_connection_dropped_mid_transaction_keeps_nothing_and_the_store_goes_on() {
    use std::time::Duration;
    if !pg_cluster::available() {
        return;
    }
    let url = pg_cluster::fresh_database().await;
    let store = PostgresStore::open(&url).await.expect("open");
    store.enqueue(&queued("q", 0)).await.expect("enqueue");
    let locker = raw(&url).await;
    locker
        .batch_execute("BEGIN; LOCK TABLE runs IN ACCESS EXCLUSIVE MODE")
        .await
        .expect("lock");
    let claimer = store.clone();
    let claim = tokio::spawn(async move { claimer.claim("w", time(10, 0), time(40, 0)).await });
    // The claim's transaction is under way once its backend waits for the lock.
    let name = pg_cluster::database_name(&url).to_string();
    let watcher = raw(&pg_cluster::cluster().url("postgres")).await;
    loop {
        let waiting = watcher
            .query(
                "SELECT pid FROM pg_stat_activity
                 WHERE datname = $1 AND application_name = 'planwright' AND wait_event_type = 'Lock'",
                &[&name],
            )
            .await
            .expect("activity");
        if let Some(row) = waiting.first() {
            let pid: i32 = row.get(0);
            watcher
                .execute("SELECT pg_terminate_backend($1)", &[&pid])
                .await
                .expect("terminate");
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let failed = claim.await.expect("claim task");
    assert!(
        matches!(failed, Err(StoreError::Unavailable(_))),
        "{failed:?}"
    );
    locker.batch_execute("ROLLBACK").await.expect("unlock");
    let run = store
        .claim("w", time(10, 0), time(40, 0))
        .await
        .expect("the store goes on")
        .expect("the run is still queued");
    assert_eq!(run.run_id, "q");
    assert!(store
        .claim("v", time(11, 0), time(41, 0))
        .await
        .expect("claim")
        .is_none());
}

/// The queue's wake-up: a run queued through one store (a server) wakes the queue watches
/// of another (an idle worker); so does a lease given up on a queued run; a run created
/// running (a CLI run) or a lease taken does not.
#[tokio::test]
async fn a_run_becoming_claimable_wakes_idle_runners_elsewhere() {
    use domain::ports::RunChanges;
    use std::time::Duration;
    if !pg_cluster::available() {
        return;
    }
    let url = pg_cluster::fresh_database().await;
    let server = PostgresStore::open(&url).await.expect("open");
    let worker = PostgresStore::open(&url).await.expect("open again");
    let long = Duration::from_secs(60);
    let short = Duration::from_millis(300);

    let mut idle = worker.watch_queue();
    server
        .create_run(&running_run("cli", 0))
        .await
        .expect("create");
    assert!(
        !idle.changed(short).await,
        "a run created running is not queued"
    );

    server.enqueue(&queued("q", 1)).await.expect("enqueue");
    assert!(idle.changed(long).await, "woken by the queued run");

    let run = worker
        .claim("w", time(10, 0), time(20, 0))
        .await
        .expect("claim")
        .expect("the queued run");
    assert_eq!(run.run_id, "q");
    assert!(!idle.changed(short).await, "a claim frees nothing");

    worker.release_lease("q", "w").await.expect("release");
    assert!(idle.changed(long).await, "woken by the lease given up");
}
