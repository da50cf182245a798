//! `planwright serve` and `planwright worker` on a real PostgreSQL (a private cluster for
//! this test binary, a fresh database per test; crates/store-conformance's `pg_cluster`):
//! the server only queues, workers on the shared database execute, and nothing is lost or
//! done twice when a worker is killed.

mod common;

use common::*;
use serde_json::json;
use store_conformance::pg_cluster;

const TOKEN: &str = "test-token-0123456789";

/// A fresh database, or `None` (the test returns) on a laptop without PostgreSQL.
async fn database() -> Option<String> {
    if !pg_cluster::available() {
        return None;
    }
    Some(pg_cluster::fresh_database().await)
}

/// The ids of a finished run's events, as the server streams them from the database.
async fn event_ids(server: &Server, run_id: &str) -> Vec<(u64, String)> {
    events(server, run_id, None)
        .await
        .collect(30)
        .await
        .into_iter()
        .filter_map(|e| e.id.map(|id| (id, e.event)))
        .collect()
}

/// Gap-free, one `run_started`, ending `run_completed`.
async fn assert_one_clean_log(server: &Server, run_id: &str) -> Vec<(u64, String)> {
    let log = event_ids(server, run_id).await;
    let ids: Vec<u64> = log.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, (1..=log.len() as u64).collect::<Vec<_>>(), "{log:?}");
    assert_eq!(
        log.iter().filter(|(_, t)| t == "run_started").count(),
        1,
        "{log:?}"
    );
    assert_eq!(
        log.last().map(|(_, t)| t.as_str()),
        Some("run_completed"),
        "{log:?}"
    );
    log
}

#[tokio::test]
async fn workers_on_postgres_run_every_queued_run_once() {
    let Some(db) = database().await else { return };
    let (_llm, base) = append_once_llm().await;
    let pw = Planwright::new();
    // With PostgreSQL a server executes nothing unless told (--workers defaults to 0).
    let server = pw.serve(&base, Some(TOKEN), &["--db", &db]).await;
    let mut ids = Vec::new();
    for i in 0..6 {
        let (status, body) = create(&server, json!({"task": format!("append {i}")})).await;
        assert!(status.is_success(), "{body}");
        ids.push(body["run_id"].as_str().expect("id").to_string());
    }
    let _a = worker(&pw, &base, &["--db", &db, "--concurrency", "2"]);
    let _b = worker(&pw, &base, &["--db", &db, "--concurrency", "2"]);
    until_completed(&server, &ids, 120).await;
    for id in &ids {
        assert_appended_once(&pw, id);
        assert_one_clean_log(&server, id).await;
    }
}

#[tokio::test]
async fn a_worker_killed_mid_tool_call_on_postgres_hands_its_run_on() {
    let Some(db) = database().await else { return };
    let (_llm, base) = append_once_llm().await;
    let pw = Planwright::new();
    let server = pw.serve(&base, Some(TOKEN), &["--db", &db]).await;
    let (_, body) = create(&server, json!({"task": "append"})).await;
    let id = body["run_id"].as_str().expect("id").to_string();
    let mut first = worker(&pw, &base, &["--db", &db, "--lease-secs", "2"]);
    until_event(&server, &id, "tool_calling").await;
    first.start_kill().expect("SIGKILL");
    let _ = first.wait().await;
    let _second = worker(&pw, &base, &["--db", &db, "--lease-secs", "2"]);
    until_completed(&server, std::slice::from_ref(&id), 120).await;
    assert_appended_once(&pw, &id);
    let log = assert_one_clean_log(&server, &id).await;
    assert_eq!(
        log.iter().filter(|(_, t)| t == "run_resumed").count(),
        1,
        "the second worker resumed the run from its journal: {log:?}"
    );
}

/// Runs queued on PostgreSQL survive their server: killed with SIGKILL while runs wait,
/// a new server sees them all, and a worker runs each once.
#[tokio::test]
async fn queued_runs_survive_a_killed_server_on_postgres() {
    let Some(db) = database().await else { return };
    let (_llm, base) = append_once_llm().await;
    let pw = Planwright::new();
    let mut server = pw.serve(&base, Some(TOKEN), &["--db", &db]).await;
    let mut ids = Vec::new();
    for i in 0..4 {
        let (status, body) = create(&server, json!({"task": format!("append {i}")})).await;
        assert!(status.is_success(), "{body}");
        ids.push(body["run_id"].as_str().expect("id").to_string());
    }
    server.child.start_kill().expect("SIGKILL");
    let _ = server.child.wait().await;
    let server = pw.serve(&base, Some(TOKEN), &["--db", &db]).await;
    for id in &ids {
        assert_eq!(status_of(&server, id).await, "queued", "run {id} kept");
    }
    let _worker = worker(&pw, &base, &["--db", &db]);
    until_completed(&server, &ids, 120).await;
    for id in &ids {
        assert_appended_once(&pw, id);
        assert_one_clean_log(&server, id).await;
    }
}

/// SIGTERM stops a worker cleanly: it suspends its run at the next safe point (the tool
/// call under way finishes and is journaled), gives the lease up and exits 0; another
/// worker finishes the run at once, nothing twice.
#[tokio::test]
async fn a_worker_told_to_stop_hands_its_run_on_at_once() {
    let Some(db) = database().await else { return };
    let (_llm, base) = append_once_llm().await;
    let pw = Planwright::new();
    let server = pw.serve(&base, Some(TOKEN), &["--db", &db]).await;
    let (_, body) = create(&server, json!({"task": "append"})).await;
    let id = body["run_id"].as_str().expect("id").to_string();
    // A long lease: only the release at shutdown lets the second worker in quickly.
    let mut first = worker(&pw, &base, &["--db", &db, "--lease-secs", "600"]);
    until_event(&server, &id, "tool_calling").await;
    let pid = first.id().expect("pid");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(pid).expect("pid")),
        nix::sys::signal::Signal::SIGTERM,
    )
    .expect("SIGTERM");
    let status = tokio::time::timeout(std::time::Duration::from_secs(30), first.wait())
        .await
        .expect("the worker exits after SIGTERM")
        .expect("wait");
    assert!(status.success(), "{status}");
    let _second = worker(&pw, &base, &["--db", &db, "--lease-secs", "600"]);
    until_completed(&server, std::slice::from_ref(&id), 60).await;
    assert_appended_once(&pw, &id);
    let log = assert_one_clean_log(&server, &id).await;
    assert!(
        log.iter().any(|(_, t)| t == "tool_called"),
        "the call under way finished before the worker stopped: {log:?}"
    );
}

/// A run waiting for its user when its worker dies is not lost: once the lease expires,
/// another worker resumes it from its journal and asks the question again (the planner's
/// and the executor's finished LLM calls reused, not asked twice); the answer, posted
/// through a server that executes nothing, reaches the new worker and the run completes.
#[tokio::test]
async fn a_question_left_by_a_dead_worker_is_asked_again_by_the_next() {
    let Some(db) = database().await else { return };
    let llm = ScriptedOpenAi::start(vec![
        plan(&["Ask the user for a colour"]),
        call("message_ask_user", json!({"question": "Which colour?"})),
        complete(true, "the user chose blue"),
        text("The user chose blue."),
    ])
    .await;
    let pw = Planwright::new();
    let server = pw.serve(&llm.base_url(), Some(TOKEN), &["--db", &db]).await;
    let (_, body) = create(&server, json!({"task": "ask for a colour"})).await;
    let id = body["run_id"].as_str().expect("id").to_string();
    let lease = ["--db", db.as_str(), "--lease-secs", "2"];
    let mut first = worker(&pw, &llm.base_url(), &lease);
    let mut stream = events(&server, &id, None).await;
    let mut asked = 0;
    while asked == 0 {
        let e = stream.next().await.expect("an event");
        asked += usize::from(e.event == "waiting_for_user");
    }
    first.start_kill().expect("SIGKILL");
    let _ = first.wait().await;
    let _second = worker(&pw, &llm.base_url(), &lease);
    while asked == 1 {
        let e = stream.next().await.expect("an event");
        asked += usize::from(e.event == "waiting_for_user");
    }
    reply_when_asked(&server, &id, "blue").await;
    until_completed(&server, std::slice::from_ref(&id), 60).await;
    let log = assert_one_clean_log(&server, &id).await;
    let count = |kind: &str| log.iter().filter(|(_, t)| t == kind).count();
    assert_eq!(count("run_resumed"), 1, "{log:?}");
    assert_eq!(count("waiting_for_user"), 2, "asked again: {log:?}");
    assert_eq!(count("user_replied"), 1, "{log:?}");
    assert_eq!(
        llm.requests().await.len(),
        4,
        "plan, ask, complete, summary: nothing asked of the LLM twice"
    );
}

/// TLS (the test cluster's certificate is signed by a CA of its own): with `sslmode=require`
/// the CA named by `sslrootcert` opens the database; without it the command exits 2 with one
/// line that says why and shows no password.
#[tokio::test]
async fn sslmode_require_needs_the_servers_ca_and_says_so_in_one_line() {
    let Some(db) = database().await else { return };
    let pw = Planwright::new();
    let ca = pg_cluster::cluster().ca_cert().display().to_string();
    let trusted = format!("{db}?sslmode=require&sslrootcert={ca}");
    let out = pw.exec(&["runs", "list", "--db", &trusted], &[]).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let untrusted = db.replacen("postgres@", "postgres:s3cret@", 1) + "?sslmode=require";
    let out = pw.exec(&["runs", "list", "--db", &untrusted], &[]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("error: cannot open the database postgres://postgres:***@")
            && stderr.contains("is not trusted (invalid peer certificate: UnknownIssuer)")
            && stderr.contains("sslrootcert")
            && !stderr.contains("s3cret"),
        "{stderr}"
    );
}

/// Issue 29: a NUL byte in the task (HTTP 500 naming the database) and in a step's result
/// (refused by PostgreSQL, taken for an outage, the run re-claimed without end) is kept as
/// it is: the run is queued, runs once and completes. Two slots, as in the red team's setup
/// (two executions of the run overlapped there).
#[tokio::test]
async fn text_with_a_nul_byte_is_stored_and_the_run_completes_once() {
    let Some(db) = database().await else { return };
    let llm = ScriptedOpenAi::start(vec![
        plan(&["Say hi"]),
        complete(true, "hi \u{0} there"),
        text("Said hi \u{0}."),
    ])
    .await;
    let pw = Planwright::new();
    let server = pw
        .serve(
            &llm.base_url(),
            Some(TOKEN),
            &["--db", &db, "--workers", "2", "--sandbox", "none"],
        )
        .await;
    let (status, body) = create(&server, json!({"task": "say hi \u{0} please"})).await;
    assert!(status.is_success(), "{status}: {body}");
    assert!(!body.to_string().contains("postgres"), "{body}");
    let id = body["run_id"].as_str().expect("id").to_string();
    until_completed(&server, std::slice::from_ref(&id), 60).await;
    let (_, shown) = get_json(&server, &format!("/v1/runs/{id}")).await;
    assert_eq!(shown["task"], "say hi \u{0} please", "{shown}");
    let log = assert_one_clean_log(&server, &id).await;
    assert!(
        !log.iter().any(|(_, t)| t == "run_resumed"),
        "resumed: {log:?}"
    );
}
