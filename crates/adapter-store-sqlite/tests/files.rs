//! The database file: persistence, migrations, folders, several connections.

mod common;

use std::sync::Arc;

use adapter_store_sqlite::{Error, SqliteStore, SCHEMA_VERSION};
use common::{event, plan, running_run, temp_store};
use domain::ports::{RunStatus, RunStore};
use domain::EventKind;

fn message(n: u64) -> EventKind {
    EventKind::Message {
        step_id: None,
        text: format!("message {n}"),
    }
}

#[tokio::test]
async fn everything_survives_closing_and_reopening_the_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("runs.db");
    let mut run = running_run("run_1", 0);
    let p = plan(&["a", "b"]);
    let events: Vec<_> = (1..=3).map(|n| event("run_1", n, message(n))).collect();
    {
        let store = SqliteStore::open(&path).expect("open");
        store.create_run(&run).await.expect("create");
        store.save_plan("run_1", &p).await.expect("save");
        for ev in &events {
            store.append_event(ev).await.expect("append");
        }
        run.status = RunStatus::Completed;
        run.summary = Some("done".into());
        store.update_run(&run).await.expect("update");
    }
    let store = SqliteStore::open(&path).expect("reopen");
    assert_eq!(
        store.get_run("run_1").await.expect("get"),
        Some(run.clone())
    );
    assert_eq!(store.list_runs().await.expect("list"), vec![run]);
    assert_eq!(store.latest_plan("run_1").await.expect("plan"), Some(p));
    assert_eq!(store.events("run_1", 0).await.expect("events"), events);
    store
        .append_event(&event("run_1", 4, message(4)))
        .await
        .expect("the log goes on after reopening");
}

#[test]
fn a_fresh_file_ends_at_the_current_schema_and_reopening_is_a_no_op() {
    let (dir, store) = temp_store();
    const { assert!(SCHEMA_VERSION >= 1) };
    assert_eq!(store.schema_version().expect("version"), SCHEMA_VERSION);
    let path = dir.path().join("runs.db");
    let tables = |conn: &rusqlite::Connection| -> Vec<String> {
        conn.prepare("SELECT name FROM sqlite_schema ORDER BY name")
            .expect("prepare")
            .query_map([], |r| r.get(0))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows")
    };
    let conn = rusqlite::Connection::open(&path).expect("connection");
    let before = tables(&conn);
    for t in ["runs", "plans", "steps", "events"] {
        assert!(before.iter().any(|n| n == t), "table {t} in {before:?}");
    }
    drop(store);
    let again = SqliteStore::open(&path).expect("reopen");
    assert_eq!(again.schema_version().expect("version"), SCHEMA_VERSION);
    assert_eq!(tables(&conn), before);
}

#[test]
fn a_file_from_a_newer_schema_is_refused_clearly() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("future.db");
    {
        let conn = rusqlite::Connection::open(&path).expect("connection");
        conn.pragma_update(None, "user_version", SCHEMA_VERSION + 5)
            .expect("set version");
    }
    let err = SqliteStore::open(&path).expect_err("newer schema");
    assert!(
        matches!(err, Error::SchemaTooNew { found, supported, .. }
            if found == SCHEMA_VERSION + 5 && supported == SCHEMA_VERSION),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(msg.contains("future.db") && msg.contains("newer"), "{msg}");
    let conn = rusqlite::Connection::open(&path).expect("connection");
    let version: u32 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .expect("version");
    assert_eq!(version, SCHEMA_VERSION + 5, "the file is left alone");
}

#[test]
fn missing_parent_folders_are_created() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("a").join("b").join("runs.db");
    let store = SqliteStore::open(&path).expect("open");
    assert!(path.is_file());
    assert_eq!(store.schema_version().expect("version"), SCHEMA_VERSION);
}

#[test]
fn the_file_is_left_in_wal_mode() {
    let (_dir, store) = temp_store();
    let conn = rusqlite::Connection::open(store.path()).expect("connection");
    let mode: String = conn
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .expect("journal_mode");
    assert_eq!(mode, "wal", "WAL is a property of the file");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_handle_appends_while_another_reads_without_lock_errors() {
    const N: u64 = 200;
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("runs.db");
    let writer = Arc::new(SqliteStore::open(&path).expect("writer"));
    let reader = Arc::new(SqliteStore::open(&path).expect("reader"));
    writer
        .create_run(&running_run("run_1", 0))
        .await
        .expect("create");

    let w = Arc::clone(&writer);
    let writing = tokio::spawn(async move {
        for n in 1..=N {
            w.append_event(&event("run_1", n, message(n)))
                .await
                .expect("append never fails with 'database is locked'");
        }
    });
    let r = Arc::clone(&reader);
    let reading = tokio::spawn(async move {
        let mut seen = 0u64;
        let mut reads = 0u32;
        while seen < N {
            let evs = r.events("run_1", seen).await.expect("read while writing");
            for ev in &evs {
                assert_eq!(ev.seq, seen + 1, "reads are in order and gap-free");
                seen = ev.seq;
            }
            reads += 1;
            tokio::task::yield_now().await;
        }
        reads
    });
    writing.await.expect("writer task");
    let reads = reading.await.expect("reader task");
    assert!(reads >= 1);
    assert_eq!(
        reader.events("run_1", 0).await.expect("read").len() as u64,
        N
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_handles_writing_to_different_runs_wait_for_each_other() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("runs.db");
    let a = SqliteStore::open(&path).expect("a");
    let b = SqliteStore::open(&path).expect("b");
    a.create_run(&running_run("run_a", 0))
        .await
        .expect("create");
    b.create_run(&running_run("run_b", 1))
        .await
        .expect("create");
    let write = |store: SqliteStore, run: &'static str| {
        tokio::spawn(async move {
            for n in 1..=100 {
                store
                    .append_event(&event(run, n, message(n)))
                    .await
                    .expect("no lock errors");
            }
        })
    };
    let (ra, rb) = tokio::join!(write(a.clone(), "run_a"), write(b.clone(), "run_b"));
    ra.expect("a");
    rb.expect("b");
    assert_eq!(a.events("run_b", 0).await.expect("read").len(), 100);
    assert_eq!(b.events("run_a", 0).await.expect("read").len(), 100);
}

#[test]
fn several_handles_opening_a_fresh_file_at_once_migrate_it_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("runs.db");
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let path = path.clone();
            std::thread::spawn(move || SqliteStore::open(path))
        })
        .collect();
    for h in handles {
        let store = h.join().expect("thread").expect("every open succeeds");
        assert_eq!(store.schema_version().expect("version"), SCHEMA_VERSION);
    }
}

#[tokio::test]
async fn every_earlier_schema_version_is_upgraded_and_keeps_its_runs() {
    for version in 1..adapter_store_sqlite::SCHEMA_VERSION {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("old.db");
        assert_eq!(
            adapter_store_sqlite::create_at_schema_version(&path, version).expect("old schema"),
            version
        );
        {
            let conn = rusqlite::Connection::open(&path).expect("open");
            conn.execute(
                "INSERT INTO runs (run_id, task, mode, status, workspace, created_at)
                 VALUES ('old', 'an old task', 'flow', 'completed', '/tmp/ws', '2026-01-01T00:00:00.000000000Z')",
                [],
            )
            .expect("insert with the old columns");
        }
        let store = adapter_store_sqlite::SqliteStore::open(&path).expect("upgrade");
        assert_eq!(
            store.schema_version().expect("version"),
            adapter_store_sqlite::SCHEMA_VERSION
        );
        let run = domain::ports::RunStore::get_run(&store, "old")
            .await
            .expect("read")
            .expect("the old run survived the upgrade");
        assert_eq!(run.task, "an old task");
        assert_eq!(run.lease, None);
        assert_eq!(run.usage.cached_prompt_tokens, 0);
    }
}

#[tokio::test]
async fn a_version_2_file_gains_cached_tokens_and_keeps_its_usage() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("v2.db");
    assert_eq!(
        adapter_store_sqlite::create_at_schema_version(&path, 2).expect("v2 schema"),
        2
    );
    {
        let conn = rusqlite::Connection::open(&path).expect("open");
        conn.execute(
            "INSERT INTO runs (run_id, task, mode, status, workspace, created_at, llm_calls,
                               prompt_tokens, completion_tokens, owner_pid)
             VALUES ('v2', 'a v2 task', 'flow', 'running', '/tmp/ws',
                     '2026-01-01T00:00:00.000000000Z', 4, 400, 40, 123)",
            [],
        )
        .expect("insert with the v2 columns");
    }
    let store = SqliteStore::open(&path).expect("upgrade");
    assert_eq!(store.schema_version().expect("version"), SCHEMA_VERSION);
    let run = store.get_run("v2").await.expect("read").expect("the run");
    assert_eq!(
        run.usage,
        domain::RunUsage {
            llm_calls: 4,
            prompt_tokens: 400,
            completion_tokens: 40,
            cached_prompt_tokens: 0,
        }
    );
    // The v2 `owner_pid` is not a lease: the run reads as nobody's (interrupted).
    assert_eq!(run.lease, None);
    let usage = domain::RunUsage {
        llm_calls: 5,
        prompt_tokens: 500,
        completion_tokens: 50,
        cached_prompt_tokens: 80,
    };
    store.save_usage("v2", &usage).await.expect("save usage");
    drop(store);
    let reopened = SqliteStore::open(&path).expect("reopen");
    let run = reopened
        .get_run("v2")
        .await
        .expect("read")
        .expect("the run");
    assert_eq!(run.usage, usage);
}

/// The bundled SQLite carries the fix for CVE-2025-6965 (3.50.2 and later).
#[test]
fn the_bundled_sqlite_is_at_least_3_50_2() {
    let version: Vec<u32> = rusqlite::version()
        .split('.')
        .map(|p| p.parse().expect("numeric"))
        .collect();
    assert!(
        version >= vec![3, 50, 2],
        "bundled SQLite {}",
        rusqlite::version()
    );
}

/// A planted file (issue 29): a trigger or view of someone else's could redirect the user's
/// runs, so the file is refused; Planwright's own trigger is not mistaken for one.
#[test]
fn a_trigger_or_view_planwright_did_not_create_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, planted) in [
        (
            "trigger.db",
            "CREATE TRIGGER redirect AFTER INSERT ON runs BEGIN \
             UPDATE runs SET workspace = '/tmp/elsewhere' WHERE run_id = NEW.run_id; END;",
        ),
        ("view.db", "CREATE VIEW everything AS SELECT * FROM runs;"),
        (
            "lookalike.db",
            "DROP TRIGGER events_are_append_only; CREATE TRIGGER events_are_append_only \
             BEFORE UPDATE ON events BEGIN SELECT 1; END;",
        ),
    ] {
        let path = dir.path().join(name);
        drop(SqliteStore::open(&path).expect("a file of our own opens"));
        drop(SqliteStore::open(&path).expect("and opens again"));
        let conn = rusqlite::Connection::open(&path).expect("open by hand");
        conn.execute_batch(planted).expect("plant");
        drop(conn);
        match SqliteStore::open(&path) {
            Err(e @ Error::Foreign { .. }) => {
                assert!(
                    e.to_string().contains("that Planwright did not create"),
                    "{e}"
                )
            }
            Err(e) => panic!("{name}: refused for another reason: {e}"),
            Ok(_) => panic!("{name}: a planted database was opened"),
        }
    }
}
