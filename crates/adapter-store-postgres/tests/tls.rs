//! TLS to the server, whose certificate is signed by a CA of the test cluster's own
//! (crates/store-conformance's `pg_cluster` runs with `ssl=on`): what each `sslmode` does,
//! that the pool and the LISTEN connection both use it, and how a refused certificate is
//! reported. The server's view (`pg_stat_ssl`) says whether a connection is encrypted.

use std::time::Duration;

use adapter_store_postgres::{Error, PostgresStore};
use domain::ports::{Change, RunChanges, RunStore};
use store_conformance::fixtures::{message, running_run};
use store_conformance::pg_cluster;

/// The store's connections (application `planwright`) to database `name`, as the server
/// sees them: whether each is encrypted, and its last statement.
async fn connections(name: &str) -> Vec<(bool, String)> {
    let url = pg_cluster::cluster().url("postgres");
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .expect("connect");
    tokio::spawn(connection);
    client
        .query(
            "SELECT s.ssl, a.query FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid)
             WHERE a.datname = $1 AND a.application_name = 'planwright'",
            &[&name],
        )
        .await
        .expect("pg_stat_ssl")
        .iter()
        .map(|row| (row.get(0), row.get(1)))
        .collect()
}

/// A fresh database's URL with `params` as its query, and the database's name.
async fn fresh_database(params: &str) -> (String, String) {
    let url = pg_cluster::fresh_database().await;
    let name = pg_cluster::database_name(&url).to_string();
    (format!("{url}?{params}"), name)
}

fn ca() -> String {
    pg_cluster::cluster().ca_cert().display().to_string()
}

/// A run written and read back.
async fn round_trip(store: &PostgresStore) {
    store
        .create_run(&running_run("r", 0))
        .await
        .expect("create");
    assert_eq!(
        store.get_run("r").await.expect("get"),
        Some(running_run("r", 0))
    );
}

#[tokio::test]
async fn require_with_the_ca_round_trips_and_listens_over_verified_tls() {
    if !pg_cluster::available() {
        return;
    }
    let (url, name) = fresh_database(&format!("sslmode=require&sslrootcert={}", ca())).await;
    let store = PostgresStore::open(&url).await.expect("open");
    round_trip(&store).await;
    // An event appended through another store (process) wakes a watch: LISTEN works.
    let mut events = store.watch("r", Change::Events);
    let writer = PostgresStore::open(&url).await.expect("open again");
    writer
        .append_event(&message("r", 1, "hello"))
        .await
        .expect("append");
    assert!(events.changed(Duration::from_secs(60)).await, "woken");
    let seen = connections(&name).await;
    assert!(
        seen.iter().any(|(_, query)| query.starts_with("LISTEN")),
        "{seen:?}"
    );
    assert!(seen.iter().all(|(tls, _)| *tls), "{seen:?}");
}

#[tokio::test]
async fn require_without_the_ca_is_refused_at_open_in_one_line_without_the_password() {
    if !pg_cluster::available() {
        return;
    }
    let url = pg_cluster::fresh_database().await;
    let url = url.replacen("postgres@", "postgres:s3cret@", 1) + "?sslmode=require";
    let err = PostgresStore::open(&url).await.expect_err("self-signed CA");
    assert!(matches!(err, Error::Untrusted { .. }), "{err:?}");
    let shown = err.to_string();
    let port = pg_cluster::cluster().port();
    for expected in [
        "is not trusted (invalid peer certificate: UnknownIssuer)",
        "sslrootcert",
        &format!("postgres://postgres@127.0.0.1:{port}/"),
    ] {
        assert!(shown.contains(expected), "{expected:?} in {shown}");
    }
    assert!(
        !shown.contains("s3cret") && !shown.contains('\n'),
        "{shown}"
    );
}

/// `verify-full` (read as `require`) checks the host name: the certificate names
/// `localhost` and 127.0.0.1. The key=value form, with `hostaddr` to reach the server
/// under another name.
#[tokio::test]
async fn the_host_name_must_be_on_the_certificate() {
    if !pg_cluster::available() {
        return;
    }
    let (_, name) = fresh_database("").await;
    let port = pg_cluster::cluster().port();
    let as_host = |host: &str| {
        format!(
            "host={host} hostaddr=127.0.0.1 port={port} user=postgres dbname={name} \
             sslmode=verify-full sslrootcert='{}'",
            ca()
        )
    };
    let store = PostgresStore::open(&as_host("localhost"))
        .await
        .expect("localhost is on the certificate");
    round_trip(&store).await;
    let err = PostgresStore::open(&as_host("db.example"))
        .await
        .expect_err("another name");
    assert!(
        err.to_string()
            .contains(r#"not valid for name "db.example""#),
        "{err}\n{err:?}"
    );
}

#[tokio::test]
async fn disable_connects_in_clear_to_a_tls_server() {
    if !pg_cluster::available() {
        return;
    }
    let (url, name) = fresh_database("sslmode=disable").await;
    let store = PostgresStore::open(&url).await.expect("open");
    round_trip(&store).await;
    let seen = connections(&name).await;
    assert!(
        !seen.is_empty() && seen.iter().all(|(tls, _)| !tls),
        "{seen:?}"
    );
}

/// The default, `prefer`: TLS since the server offers it, its certificate unchecked (as
/// libpq does); with `sslrootcert` it is checked.
#[tokio::test]
async fn prefer_encrypts_and_checks_the_certificate_only_against_a_named_ca() {
    if !pg_cluster::available() {
        return;
    }
    let (url, name) = fresh_database("sslmode=prefer").await;
    let store = PostgresStore::open(&url)
        .await
        .expect("self-signed is fine");
    round_trip(&store).await;
    let seen = connections(&name).await;
    assert!(
        !seen.is_empty() && seen.iter().all(|(tls, _)| *tls),
        "{seen:?}"
    );
    // The server's own certificate is no CA of it: refused once named.
    let server_cert = pg_cluster::cluster().root().join("tls/server.pem");
    let checked = format!("{url}&sslrootcert={}", server_cert.display());
    let err = PostgresStore::open(&checked).await.expect_err("checked");
    assert!(matches!(err, Error::Untrusted { .. }), "{err:?}");
}

#[tokio::test]
async fn an_unreadable_sslrootcert_is_refused_at_open() {
    if !pg_cluster::available() {
        return;
    }
    let (url, _) = fresh_database("sslmode=require&sslrootcert=/nonexistent/ca.pem").await;
    let err = PostgresStore::open(&url).await.expect_err("no such file");
    assert!(matches!(err, Error::RootCert { .. }), "{err:?}");
    assert!(err.to_string().contains("/nonexistent/ca.pem"), "{err}");
}

/// SCRAM over TLS with `channel_binding=require`: the server accepts the client's
/// `tls-server-end-point` hash of its certificate (SCRAM-SHA-256-PLUS) or refuses the login.
#[tokio::test]
async fn scram_binds_to_the_tls_channel() {
    if !pg_cluster::available() {
        return;
    }
    let (_, name) = fresh_database("").await;
    let cluster = pg_cluster::cluster();
    let user = pg_cluster::SCRAM_USER;
    let (admin, connection) =
        tokio_postgres::connect(&cluster.url("postgres"), tokio_postgres::NoTls)
            .await
            .expect("connect");
    tokio::spawn(connection);
    admin
        .batch_execute(&format!(
            "CREATE ROLE {user} LOGIN PASSWORD 'pw'; ALTER DATABASE {name} OWNER TO {user}"
        ))
        .await
        .expect("role");
    let url = format!(
        "postgres://{user}:pw@127.0.0.1:{}/{name}?sslmode=require&sslrootcert={}&channel_binding=require",
        cluster.port(),
        ca()
    );
    let store = PostgresStore::open(&url).await.expect("SCRAM-SHA-256-PLUS");
    round_trip(&store).await;
}
