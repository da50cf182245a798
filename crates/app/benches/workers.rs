//! Workers sharing one store: 200 runs of a scripted three-step task (the first step appends
//! a line to a file with `shell_exec`, the others read it) with an LLM answering every call after 50 ms, queued
//! through a serve-only `planwright serve` and executed by 1, 2 and 4 `planwright worker`
//! processes, on one PostgreSQL (a private cluster, crates/store-conformance's `pg_cluster`)
//! and on one SQLite file. Reports throughput, queue wait (queued → `run_started`), claim
//! latency (one `WorkQueue::claim` with four claimers racing), failover time (SIGKILL of the
//! worker in a tool call → the first event written by the worker that takes the run over),
//! and checks that no run was lost or done twice (each completed, its file appended once,
//! its event log gap-free with one `run_started`).
//!
//! Prints a Markdown section on stdout (`cargo xtask bench` collects it).

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::unwrap_used,
    clippy::expect_used
)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use common::*;
use domain::ports::{RunStatus, RunStore, WorkQueue};
use serde_json::{json, Value};
use store_conformance::{fixtures, pg_cluster};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// Runs per configuration under `cargo bench`; `cargo test --all-targets` runs the same
/// code once at [`SMOKE_RUNS`] (no `--bench` argument) to prove it still works.
const BENCH_RUNS: usize = 200;
const SMOKE_RUNS: usize = 12;
const SLOTS_PER_WORKER: &str = "2";
const LLM_LATENCY: Duration = Duration::from_millis(50);
const TOKEN: &str = "bench-token-0123456789";
const FAILOVER_LEASE_SECS: u64 = 5;
const FAILOVER_SAMPLES: usize = 3;

/// How much the benchmark does: all of it with `--bench`, a smoke test without.
struct Scale {
    runs: usize,
    workers: &'static [usize],
    failover_samples: usize,
}

static SCALE: std::sync::OnceLock<Scale> = std::sync::OnceLock::new();

fn scale() -> &'static Scale {
    SCALE.get_or_init(|| {
        if std::env::args().any(|a| a == "--bench") {
            Scale {
                runs: BENCH_RUNS,
                workers: &[1, 2, 4],
                failover_samples: FAILOVER_SAMPLES,
            }
        } else {
            Scale {
                runs: SMOKE_RUNS,
                workers: &[2],
                failover_samples: 1,
            }
        }
    })
}

/// Answers by what is asked: a three-step plan; step 0 appends to done.txt, the other
/// steps read it, each then completes; the summary is text. A task starting "slow" sleeps in
/// its append, so a worker can be killed in the middle of it.
struct ThreeSteps;

impl Respond for ThreeSteps {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let offered = |name: &str| {
            body["tools"]
                .as_array()
                .is_some_and(|ts| ts.iter().any(|t| t["function"]["name"] == name))
        };
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        let turns = messages.iter().filter(|m| m["role"] == "assistant").count();
        let asked: String = messages
            .iter()
            .filter(|m| m["role"] == "user")
            .filter_map(|m| m["content"].as_str())
            .collect();
        let last_tool = messages
            .iter()
            .rev()
            .find(|m| m["role"] == "tool")
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default();
        let reply = if offered("planning") {
            plan(&["Append done to done.txt", "Check done.txt", "Report"])
        } else if offered("complete_step") && turns == 0 && asked.contains("working on step 0") {
            let command = if asked.contains("TASK: slow") {
                "echo done >> done.txt && sleep 10"
            } else {
                "echo done >> done.txt"
            };
            call("shell_exec", json!({ "command": command }))
        } else if last_tool.contains("Interrupted, outcome unknown") {
            // Killed in the append: check before doing it again.
            call(
                "shell_exec",
                json!({ "command": "grep -qx done done.txt || echo done >> done.txt" }),
            )
        } else if offered("complete_step") && turns == 0 {
            call("file_read", json!({ "path": "done.txt" }))
        } else if offered("complete_step") {
            complete(true, "done")
        } else {
            text("done.txt holds done.")
        };
        reply.set_delay(LLM_LATENCY)
    }
}

/// Which store the processes share.
enum Db {
    Postgres(String),
    Sqlite(std::path::PathBuf),
}

impl Db {
    fn arg(&self) -> String {
        match self {
            Db::Postgres(url) => url.clone(),
            Db::Sqlite(path) => path.display().to_string(),
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Db::Postgres(_) => "PostgreSQL",
            Db::Sqlite(_) => "SQLite",
        }
    }

    async fn store(&self) -> Arc<dyn Store> {
        match self {
            Db::Postgres(url) => Arc::new(
                adapter_store_postgres::PostgresStore::open(url)
                    .await
                    .expect("open PostgreSQL"),
            ),
            Db::Sqlite(path) => {
                Arc::new(adapter_store_sqlite::SqliteStore::open(path).expect("open SQLite"))
            }
        }
    }
}

trait Store: RunStore + WorkQueue {}
impl<T: RunStore + WorkQueue> Store for T {}

/// A fresh database of each kind.
async fn fresh(kind: &str, pw: &Planwright, n: usize) -> Db {
    match kind {
        "postgres" => Db::Postgres(pg_cluster::fresh_database().await),
        _ => Db::Sqlite(pw.cwd().join(format!("bench-{n}.db"))),
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn secs_between(from: DateTime<Utc>, to: DateTime<Utc>) -> f64 {
    (to - from).num_microseconds().unwrap_or(0) as f64 / 1e6
}

/// Starts `n` workers and waits until each says it is ready.
async fn workers(pw: &Planwright, base: &str, db: &Db, n: usize, extra: &[&str]) -> Vec<Worker> {
    let mut all = Vec::new();
    for _ in 0..n {
        let mut args = vec!["--db".to_string(), db.arg()];
        args.extend(extra.iter().map(|s| s.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (child, log) = logged_worker(pw, base, &args);
        log.wait_for("ready", 60).await;
        all.push(Worker { child, log });
    }
    all
}

struct Worker {
    child: tokio::process::Child,
    log: Log,
}

/// Queues `count` runs through the server, all at once; their ids.
async fn queue_runs(server: &Server, count: usize, task: &str) -> Vec<String> {
    let mut tasks = Vec::new();
    for i in 0..count {
        let base = server.base.clone();
        let task = format!("{task} #{i}");
        tasks.push(tokio::spawn(async move {
            let body: Value = client()
                .post(format!("{base}/v1/runs"))
                .bearer_auth(TOKEN)
                .json(&json!({ "task": task }))
                .send()
                .await
                .expect("POST /v1/runs")
                .json()
                .await
                .expect("json");
            body["run_id"].as_str().expect("run_id").to_string()
        }));
    }
    let mut ids = Vec::new();
    for t in tasks {
        ids.push(t.await.expect("queue task"));
    }
    ids
}

/// Waits until every run has finished (read from the store).
async fn until_finished(store: &dyn Store, ids: &[String], limit: Duration, workers: &[Worker]) {
    let deadline = Instant::now() + limit;
    for id in ids {
        loop {
            let run = store.get_run(id).await.expect("get run").expect("run");
            if matches!(run.status, RunStatus::Completed | RunStatus::Failed) {
                break;
            }
            if Instant::now() > deadline {
                let logs: Vec<String> = workers.iter().map(|w| w.log.text()).collect();
                panic!(
                    "run {id} is {:?}; worker logs:\n{}",
                    run.status,
                    logs.join("\n")
                );
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// What one finished run shows: queued → started (s), whether it was done exactly once.
struct RunCheck {
    created: DateTime<Utc>,
    started: DateTime<Utc>,
    finished: DateTime<Utc>,
    clean: bool,
    resumed: usize,
}

async fn check_run(store: &dyn Store, pw: &Planwright, id: &str) -> RunCheck {
    let run = store.get_run(id).await.expect("get run").expect("run");
    let events = store.events(id, 0).await.expect("events");
    let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
    let count = |name: &str| events.iter().filter(|e| e.kind.name() == name).count();
    let started = events
        .iter()
        .find(|e| e.kind.name() == "run_started")
        .map_or(run.created_at, |e| e.at);
    let appended = std::fs::read_to_string(pw.workspace(id).join("done.txt")).unwrap_or_default();
    let problems = [
        (run.status != RunStatus::Completed, "not completed"),
        (
            seqs != (1..=events.len() as u64).collect::<Vec<_>>(),
            "a gap in its log",
        ),
        (count("run_started") != 1, "not one run_started"),
        (
            events.last().map(|e| e.kind.name()) != Some("run_completed"),
            "not ending run_completed",
        ),
        (appended != "done\n", "its file not appended once"),
    ];
    let clean = !problems.iter().any(|(bad, _)| *bad);
    if let Some((_, problem)) = problems.iter().find(|(bad, _)| *bad) {
        eprintln!("run {id}: {problem} ({:?}; file {appended:?})", run.status);
    }
    RunCheck {
        created: run.created_at,
        started,
        finished: run.finished_at.unwrap_or(run.created_at),
        clean,
        resumed: count("run_resumed"),
    }
}

struct Throughput {
    store: &'static str,
    workers: usize,
    completed_once: usize,
    wall: f64,
    per_minute: f64,
    wait_p50: f64,
    wait_p99: f64,
}

/// `scale().runs` runs through `n` workers on a fresh database of `kind`.
async fn throughput(kind: &str, n: usize, base: &str) -> Throughput {
    let pw = Planwright::new();
    let db = fresh(kind, &pw, n).await;
    let server = pw
        .serve(base, Some(TOKEN), &["--db", &db.arg(), "--workers", "0"])
        .await;
    let store = db.store().await;
    let workers = workers(&pw, base, &db, n, &["--concurrency", SLOTS_PER_WORKER]).await;
    let ids = queue_runs(&server, scale().runs, "append").await;
    until_finished(store.as_ref(), &ids, Duration::from_secs(600), &workers).await;
    let mut checks = Vec::new();
    for id in &ids {
        checks.push(check_run(store.as_ref(), &pw, id).await);
    }
    let first = checks.iter().map(|c| c.created).min().expect("runs");
    let last = checks.iter().map(|c| c.finished).max().expect("runs");
    let wall = secs_between(first, last);
    let mut waits: Vec<f64> = checks
        .iter()
        .map(|c| secs_between(c.created, c.started))
        .collect();
    waits.sort_by(|a, b| a.total_cmp(b));
    drop(workers);
    drop(server);
    Throughput {
        store: db.name(),
        workers: n,
        completed_once: checks.iter().filter(|c| c.clean && c.resumed == 0).count(),
        wall,
        per_minute: scale().runs as f64 / wall * 60.0,
        wait_p50: percentile(&waits, 0.5),
        wait_p99: percentile(&waits, 0.99),
    }
}

/// One claim's latency (ms), `scale().runs` runs claimed by four claimers racing, each with its own
/// store (as four worker processes would have).
async fn claim_latency(kind: &str) -> (&'static str, f64, f64) {
    let pw = Planwright::new();
    let db = fresh(kind, &pw, 99).await;
    let first = db.store().await;
    for i in 0..scale().runs {
        first
            .enqueue(&fixtures::queued(&format!("q{i:03}"), i as i64))
            .await
            .expect("enqueue");
    }
    let mut claimers = Vec::new();
    for c in 0..4 {
        let store = db.store().await;
        claimers.push(tokio::spawn(async move {
            let mut took = Vec::new();
            loop {
                let started = Instant::now();
                let now = Utc::now();
                let claimed = store
                    .claim(&format!("c{c}"), now, now + chrono::Duration::seconds(60))
                    .await
                    .expect("claim");
                if claimed.is_none() {
                    return took;
                }
                took.push(started.elapsed().as_secs_f64() * 1000.0);
            }
        }));
    }
    let mut all = Vec::new();
    for c in claimers {
        all.extend(c.await.expect("claimer"));
    }
    assert_eq!(all.len(), scale().runs, "every run claimed once");
    all.sort_by(|a, b| a.total_cmp(b));
    (db.name(), percentile(&all, 0.5), percentile(&all, 0.99))
}

/// Seconds from SIGKILL of the worker in a run's tool call to the first event the next
/// worker writes for it; whether the run then completed with its effect once.
async fn failover(kind: &str, base: &str) -> (&'static str, Vec<f64>, bool) {
    let pw = Planwright::new();
    let db = fresh(kind, &pw, 98).await;
    let server = pw
        .serve(base, Some(TOKEN), &["--db", &db.arg(), "--workers", "0"])
        .await;
    let store = db.store().await;
    let lease = FAILOVER_LEASE_SECS.to_string();
    let extra = ["--lease-secs", lease.as_str()];
    let mut times = Vec::new();
    let mut all_once = true;
    for _ in 0..scale().failover_samples {
        let mut first = workers(&pw, base, &db, 1, &extra).await;
        let id = queue_runs(&server, 1, "slow append").await.remove(0);
        loop {
            let events = store.events(&id, 0).await.expect("events");
            if events.iter().any(|e| e.kind.name() == "tool_calling") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let second = workers(&pw, base, &db, 1, &extra).await;
        let mut killed = first.remove(0);
        killed.child.start_kill().expect("SIGKILL");
        let killed_at = Utc::now();
        let _ = killed.child.wait().await;
        let taken_over = loop {
            let events = store.events(&id, 0).await.expect("events");
            if let Some(e) = events.iter().find(|e| e.at > killed_at) {
                break e.at;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        };
        times.push(secs_between(killed_at, taken_over));
        until_finished(
            store.as_ref(),
            std::slice::from_ref(&id),
            Duration::from_secs(120),
            &second,
        )
        .await;
        let check = check_run(store.as_ref(), &pw, &id).await;
        all_once &= check.clean && check.resumed == 1;
    }
    drop(server);
    (db.name(), times, all_once)
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    assert!(
        pg_cluster::available(),
        "the workers benchmark needs PostgreSQL's programs (apt install postgresql)"
    );
    let llm = MockServer::start().await;
    Mock::given(wiremock::matchers::method("POST"))
        .respond_with(ThreeSteps)
        .mount(&llm)
        .await;
    let base = format!("{}/v1", llm.uri());

    let mut rows = Vec::new();
    for kind in ["postgres", "sqlite"] {
        for &n in scale().workers {
            eprintln!("workers bench: {kind}, {n} worker(s)");
            rows.push(throughput(kind, n, &base).await);
        }
    }
    let claims = [
        claim_latency("postgres").await,
        claim_latency("sqlite").await,
    ];
    eprintln!("workers bench: failover");
    let failovers = [
        failover("postgres", &base).await,
        failover("sqlite", &base).await,
    ];

    let runs = scale().runs;
    println!("## Workers (`crates/app/benches/workers.rs`)\n");
    println!(
        "{runs} runs queued at once through a serve-only `planwright serve`, executed by 1, 2 \
         and 4 `planwright worker` processes (`--concurrency {SLOTS_PER_WORKER}` each) sharing \
         one store; flow mode, a three-step plan whose first step appends a line to a file \
         with `shell_exec` and whose other steps read it with `file_read`; a scripted LLM \
         answering every call after {} ms (8 calls per run). Wall: first run queued → last run finished. Queue wait: queued → \
         `run_started`. \"Done once\": completed, file appended exactly once, event log \
         gap-free with one `run_started` and no resumption.\n",
        LLM_LATENCY.as_millis()
    );
    println!(
        "| store | workers | done once | wall | runs/minute | × 1 worker | queue wait p50 / p99 |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for r in &rows {
        let one = rows
            .iter()
            .find(|o| o.store == r.store && o.workers == 1)
            .map_or(r.per_minute, |o| o.per_minute);
        println!(
            "| {} | {} | {} / {runs} | {:.1} s | {:.0} | {:.2} | {:.1} / {:.1} s |",
            r.store,
            r.workers,
            r.completed_once,
            r.wall,
            r.per_minute,
            r.per_minute / one,
            r.wait_p50,
            r.wait_p99
        );
    }
    println!(
        "\nClaim latency: {runs} queued runs claimed by 4 claimers racing, each with its own \
         store handle (as 4 processes), one `WorkQueue::claim` each time.\n"
    );
    println!("| store | claim p50 | claim p99 |");
    println!("| --- | --- | --- |");
    for (store, p50, p99) in &claims {
        println!("| {store} | {p50:.2} ms | {p99:.2} ms |");
    }
    println!(
        "\nFailover: a worker SIGKILLed in the middle of a run's tool call, a second worker \
         idle beside it (`--lease-secs {FAILOVER_LEASE_SECS}`): time from the kill to the \
         first event the second worker writes for the run (it waits for the lease to \
         expire). Target: ≤ lease + 2 s = {} s.\n",
        FAILOVER_LEASE_SECS + 2
    );
    println!("| store | samples | failover | resumed, effect once |");
    println!("| --- | --- | --- | --- |");
    for (store, times, once) in &failovers {
        let shown: Vec<String> = times.iter().map(|t| format!("{t:.2} s")).collect();
        println!(
            "| {store} | {} | {} | {} |",
            times.len(),
            shown.join(", "),
            if *once { "yes" } else { "NO" }
        );
    }
    for r in &rows {
        assert_eq!(
            r.completed_once, runs,
            "{} / {} workers: a run lost or done twice",
            r.store, r.workers
        );
    }
    for (store, _, once) in &failovers {
        assert!(
            once,
            "{store}: a failed-over run was not resumed once with its effect once"
        );
    }
}
