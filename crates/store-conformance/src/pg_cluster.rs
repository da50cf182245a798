//! One private PostgreSQL cluster per test binary, and a fresh database per test.
//!
//! The first caller of [`cluster`] runs `initdb` into a new temporary folder and starts
//! `postgres` on a free port of 127.0.0.1, its Unix socket in the same folder; later
//! callers share it. Every test takes its own database ([`fresh_database`]). Test
//! processes run as root here, and `initdb` and `postgres` refuse root: then both run as
//! the `postgres` user (`setpriv`) and the folder is handed to that user.
//!
//! Removal does not rely on destructors (statics are never dropped, and a killed test
//! binary runs none): `postgres` runs under a small `sh` watchdog whose stdin is a pipe
//! from the test process. When that process ends in any way, the pipe closes, and the
//! watchdog stops the server (fast shutdown) and removes the folder.
//!
//! The server has TLS on (`ssl=on`), with a CA and a server certificate for `localhost` and
//! 127.0.0.1 made at start with the `openssl` program ([`Cluster::ca_cert`] is the CA's
//! file): a client's default `sslmode=prefer` negotiates TLS, so every test of the store
//! runs over it; `sslmode=disable` connects in clear. User [`SCRAM_USER`] (if a test creates
//! it) must log in with a password over TLS (SCRAM, for channel binding); everyone else is
//! trusted.
//!
//! Without PostgreSQL binaries or `openssl`, [`available`] says so on stderr and the tests
//! return early, except under `CI=true`, where it panics (CI installs Debian's `postgresql`
//! and `openssl`).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The environment variable naming the folder of `initdb`, `postgres` and `pg_isready`
/// (default: the newest `/usr/lib/postgresql/<version>/bin`).
pub const BIN_DIR_VAR: &str = "PLANWRIGHT_PG_BIN";

/// The user that must authenticate with SCRAM over TLS (`hostssl ... scram-sha-256`); no
/// test creates it but the one about channel binding.
pub const SCRAM_USER: &str = "planwright_scram";

/// How long the server may take to accept connections.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// Pause between two readiness checks while it starts.
const READY_POLL: Duration = Duration::from_millis(50);

/// The watchdog: starts the server given as its arguments; a `stop` line on its stdin stops
/// it (fast shutdown), a `start` line starts it again; once its stdin closes, stops the
/// server and removes the cluster's folder.
const WATCHDOG: &str = r#"
serve() { "$@" </dev/null >>"$PG_LOG" 2>&1 & pid=$!; }
serve "$@"
trap '' INT HUP
while read -r command; do
    case "$command" in
        stop) kill -INT "$pid" 2>/dev/null; wait "$pid" ;;
        start) serve "$@" ;;
    esac
done
kill -INT "$pid" 2>/dev/null
wait "$pid"
rm -rf "$PG_ROOT"
"#;

/// A running private cluster.
pub struct Cluster {
    root: PathBuf,
    socket_dir: PathBuf,
    port: u16,
    /// The CA that signed the server's certificate (PEM).
    ca_cert: PathBuf,
    /// Its stdin is the pipe whose closing stops the server.
    watchdog: Mutex<Child>,
}

/// What the server logs once it accepts connections.
const READY_LINE: &str = "database system is ready to accept connections";

impl Cluster {
    /// A URL of database `name` over TCP, as user `postgres` (trust authentication).
    pub fn url(&self, name: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{name}", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The certificate (PEM) of the CA that signed the server's: for `sslrootcert`.
    pub fn ca_cert(&self) -> &Path {
        &self.ca_cert
    }

    /// The folder of the server's Unix socket (`.s.PGSQL.<port>`).
    pub fn socket_dir(&self) -> &Path {
        &self.socket_dir
    }

    /// The cluster's temporary folder (data in `data/`, the server log in `postgres.log`).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.root.join("postgres.log")).unwrap_or_default()
    }

    /// Restarts the server as an operator would: [`Cluster::stop`], then [`Cluster::start`].
    pub fn restart(&self) -> Result<(), String> {
        self.stop()?;
        self.start()
    }

    /// Stops the server (fast shutdown: every connection is cut, transactions under way
    /// roll back); returns once it is down.
    pub fn stop(&self) -> Result<(), String> {
        self.tell_watchdog("stop", "database system is shut down")
    }

    /// Starts the stopped server again on the same port and data; returns once it accepts
    /// connections.
    pub fn start(&self) -> Result<(), String> {
        self.tell_watchdog("start", READY_LINE)
    }

    /// Sends `command` to the watchdog and waits for `logged` in the server's log.
    fn tell_watchdog(&self, command: &str, logged: &str) -> Result<(), String> {
        use std::io::Write;
        let from = self.log().len();
        {
            let mut watchdog = self
                .watchdog
                .lock()
                .map_err(|_| "the watchdog's lock is poisoned".to_string())?;
            let stdin = watchdog.stdin.as_mut().ok_or("the watchdog has no stdin")?;
            stdin
                .write_all(format!("{command}\n").as_bytes())
                .and_then(|()| stdin.flush())
                .map_err(|e| format!("cannot tell the watchdog to {command}: {e}"))?;
        }
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            // The log only grows: what comes after `from` is the answer to this command.
            if self
                .log()
                .get(from..)
                .is_some_and(|new| new.contains(logged))
            {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!("the server did not {command}:\n{}", self.log()));
            }
            std::thread::sleep(READY_POLL);
        }
    }

    /// Cuts every connection to database `name` but the caller's, as a network failure or
    /// an operator's `pg_terminate_backend` would: transactions under way roll back.
    pub async fn drop_connections(&self, name: &str) -> Result<u64, String> {
        let (client, connection) =
            tokio_postgres::connect(&self.url("postgres"), tokio_postgres::NoTls)
                .await
                .map_err(|e| format!("connect to the test cluster: {e}"))?;
        let driver = tokio::spawn(connection);
        let rows = client
            .query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                 WHERE datname = $1 AND pid <> pg_backend_pid()",
                &[&name],
            )
            .await
            .map_err(|e| format!("terminate the connections to {name}: {e}"))?;
        drop(client);
        let _ = driver.await;
        Ok(rows.len() as u64)
    }
}

/// The database name of a URL made by [`Cluster::url`] (or [`fresh_database`]).
pub fn database_name(url: &str) -> &str {
    url.rsplit('/').next().unwrap_or_default()
}

/// The folder holding the PostgreSQL programs, if there is one.
pub fn bin_dir() -> Option<PathBuf> {
    let usable = |dir: &Path| {
        ["initdb", "postgres", "pg_isready"]
            .iter()
            .all(|p| dir.join(p).is_file())
    };
    if let Some(dir) = std::env::var_os(BIN_DIR_VAR).map(PathBuf::from) {
        return usable(&dir).then_some(dir);
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse::<u32>().ok()?;
            Some((version, e.path().join("bin")))
        })
        .filter(|(_, dir)| usable(dir))
        .collect();
    versions.sort();
    versions.pop().map(|(_, dir)| dir)
}

/// Whether tests needing PostgreSQL can run: false (with a message) when its programs are
/// missing; a panic instead under `CI=true` (`test_support::require_or_skip`).
pub fn available() -> bool {
    let missing = if bin_dir().is_none() {
        format!(
            "PostgreSQL is not installed (no initdb/postgres/pg_isready in \
             /usr/lib/postgresql/*/bin or ${BIN_DIR_VAR}): apt-get install postgresql"
        )
    } else if !crate::pg_tls::openssl_available() {
        "the `openssl` program (for the cluster's TLS certificates) is not installed: \
         apt-get install openssl"
            .to_string()
    } else {
        return true;
    };
    test_support::require_or_skip::<(), _>(Err(missing)).is_some()
}

/// The cluster of this test binary, started on first use. Panics when it cannot start.
pub fn cluster() -> &'static Cluster {
    static CLUSTER: OnceLock<Result<Cluster, String>> = OnceLock::new();
    match CLUSTER.get_or_init(start) {
        Ok(cluster) => cluster,
        Err(e) => panic!("cannot start a private PostgreSQL cluster: {e}"),
    }
}

/// Creates a new, empty database in the cluster and returns its URL.
pub async fn fresh_database() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let cluster = tokio::task::spawn_blocking(cluster)
        .await
        .expect("cluster start task");
    let name = format!("t_{}", NEXT.fetch_add(1, Ordering::Relaxed));
    let (client, connection) =
        tokio_postgres::connect(&cluster.url("postgres"), tokio_postgres::NoTls)
            .await
            .unwrap_or_else(|e| panic!("connect to the test cluster: {e}\n{}", cluster.log()));
    let driver = tokio::spawn(connection);
    client
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .unwrap_or_else(|e| panic!("CREATE DATABASE {name}: {e}"));
    drop(client);
    let _ = driver.await;
    cluster.url(&name)
}

fn start() -> Result<Cluster, String> {
    let bin = bin_dir().ok_or("PostgreSQL is not installed")?;
    let root = tempfile::Builder::new()
        .prefix("planwright-pg-")
        .tempdir()
        .map_err(|e| format!("temporary folder: {e}"))?
        .keep();
    let data = root.join("data");
    let socket_dir = root.join("socket");
    std::fs::create_dir(&socket_dir).map_err(|e| format!("{}: {e}", socket_dir.display()))?;
    let tls_dir = root.join("tls");
    std::fs::create_dir(&tls_dir).map_err(|e| format!("{}: {e}", tls_dir.display()))?;
    let tls = crate::pg_tls::make(&tls_dir).inspect_err(|_| {
        let _ = std::fs::remove_dir_all(&root);
    })?;
    let as_server = server_user_prefix(&[&root, &socket_dir, &tls_dir, &tls.cert, &tls.key])?;

    // As root: `setpriv ... -- initdb ...`; otherwise initdb itself.
    let mut initdb_command: Vec<std::ffi::OsString> =
        as_server.iter().map(std::ffi::OsString::from).collect();
    initdb_command.push(bin.join("initdb").into_os_string());
    let initdb = Command::new(&initdb_command[0])
        .args(&initdb_command[1..])
        .args(["-D", &data.to_string_lossy()])
        .args([
            "-U",
            "postgres",
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--locale=C",
            "-N",
        ])
        .current_dir(&root)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run initdb: {e}"))?;
    if !initdb.status.success() {
        let _ = std::fs::remove_dir_all(&root);
        return Err(format!(
            "initdb failed ({}): {}{}",
            initdb.status,
            String::from_utf8_lossy(&initdb.stdout),
            String::from_utf8_lossy(&initdb.stderr)
        ));
    }

    require_scram_over_tls(&data)?;
    let port = free_port()?;
    let log = root.join("postgres.log");
    let watchdog = Command::new("sh")
        .args(["-c", WATCHDOG, "sh"])
        .args(&as_server)
        .arg(bin.join("postgres"))
        .args(["-D", &data.to_string_lossy(), "-p", &port.to_string()])
        .args(["-k", &socket_dir.to_string_lossy()])
        .args(["-c", "listen_addresses=127.0.0.1", "-c", "ssl=on"])
        .arg("-c")
        .arg(format!("ssl_cert_file={}", tls.cert.display()))
        .arg("-c")
        .arg(format!("ssl_key_file={}", tls.key.display()))
        // A throwaway cluster: durability buys nothing here.
        .args(["-c", "fsync=off", "-c", "synchronous_commit=off"])
        .args(["-c", "full_page_writes=off", "-c", "max_connections=300"])
        .env("PG_ROOT", &root)
        .env("PG_LOG", &log)
        .current_dir(&root)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start the server's watchdog: {e}"))?;
    let cluster = Cluster {
        root,
        socket_dir,
        port,
        ca_cert: tls.ca,
        watchdog: Mutex::new(watchdog),
    };
    wait_until_ready(&cluster, &bin)?;
    Ok(cluster)
}

/// [`SCRAM_USER`] logs in over TLS with a password (before initdb's `trust` lines).
fn require_scram_over_tls(data: &Path) -> Result<(), String> {
    let hba = data.join("pg_hba.conf");
    let trusted = std::fs::read_to_string(&hba).map_err(|e| format!("{}: {e}", hba.display()))?;
    let scram = format!("hostssl all {SCRAM_USER} 127.0.0.1/32 scram-sha-256\n");
    std::fs::write(&hba, scram + &trusted).map_err(|e| format!("{}: {e}", hba.display()))
}

/// The command prefix that runs a program as the server's user: `setpriv` to `postgres`
/// when we are root (handing it `paths`), nothing otherwise.
fn server_user_prefix(paths: &[&Path]) -> Result<Vec<String>, String> {
    let euid = std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .map_err(|e| format!("/proc/self: {e}"))?;
    if euid != 0 {
        return Ok(Vec::new());
    }
    let (uid, gid) = postgres_user()?;
    for path in paths {
        std::os::unix::fs::chown(path, Some(uid), Some(gid))
            .map_err(|e| format!("chown {} to postgres: {e}", path.display()))?;
    }
    Ok(vec![
        "setpriv".into(),
        format!("--reuid={uid}"),
        format!("--regid={gid}"),
        "--clear-groups".into(),
        "--".into(),
    ])
}

/// The uid and gid of the `postgres` user, from /etc/passwd.
fn postgres_user() -> Result<(u32, u32), String> {
    let passwd = std::fs::read_to_string("/etc/passwd").map_err(|e| format!("/etc/passwd: {e}"))?;
    passwd
        .lines()
        .map(|line| line.split(':').collect::<Vec<_>>())
        .find(|fields| fields.first() == Some(&"postgres"))
        .and_then(|fields| Some((fields.get(2)?.parse().ok()?, fields.get(3)?.parse().ok()?)))
        .ok_or_else(|| "we run as root and there is no `postgres` user to run the server".into())
}

fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("no free port: {e}"))
}

fn wait_until_ready(cluster: &Cluster, bin: &Path) -> Result<(), String> {
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        let ready = Command::new(bin.join("pg_isready"))
            .args(["-q", "-h", &cluster.socket_dir.to_string_lossy()])
            .args(["-p", &cluster.port.to_string()])
            .stdin(Stdio::null())
            .status()
            .map_err(|e| format!("cannot run pg_isready: {e}"))?;
        if ready.success() {
            return Ok(());
        }
        let log = cluster.log();
        if start_failed(&log) || Instant::now() > deadline {
            return Err(format!("the server did not start:\n{log}"));
        }
        std::thread::sleep(READY_POLL);
    }
}

/// Whether the server's log shows it will not come up: a `FATAL` line other than the one a
/// connection attempt made while the server is still starting gets (`pg_isready` itself
/// causes that one on a loaded machine).
fn start_failed(log: &str) -> bool {
    log.lines()
        .any(|line| line.contains("FATAL") && !line.contains("the database system is starting up"))
}

#[cfg(test)]
mod tests {
    use super::start_failed;

    #[test]
    fn a_connection_refused_while_starting_is_not_a_failed_start() {
        let starting = "LOG:  listening on IPv4 address \"127.0.0.1\", port 34151\n\
                        FATAL:  the database system is starting up\n\
                        LOG:  database system is ready to accept connections\n";
        assert!(!start_failed(starting));
        let failed = "FATAL:  could not create lock file \"/tmp/x/.s.PGSQL.5432.lock\"\n";
        assert!(start_failed(failed));
    }
}
