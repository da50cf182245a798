//! Load check of `planwright serve`: 100 concurrent runs against a scripted LLM answering
//! every call after 50 ms. All must complete; reports the server's peak RSS and the event
//! delivery latency (event timestamp → received by an SSE client), p50 / p99 / max.
//!
//! Prints a Markdown section on stdout (`cargo xtask bench` collects it).

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const RUNS: usize = 100;
const LLM_LATENCY: Duration = Duration::from_millis(50);
const TOKEN: &str = "bench-token-0123456789";

/// Answers by what is asked: the planner gets a two-step plan, executors complete their
/// step, anything else (the summary) gets text. Every answer comes after `LLM_LATENCY`.
struct ByRole;

impl Respond for ByRole {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let tools: Vec<&str> = body["tools"]
            .as_array()
            .map(|ts| {
                ts.iter()
                    .filter_map(|t| t["function"]["name"].as_str())
                    .collect()
            })
            .unwrap_or_default();
        let reply = if tools.contains(&"planning") {
            plan(&["Say hello", "Say goodbye"])
        } else if tools.contains(&"complete_step") {
            complete(true, "done")
        } else {
            text("Both steps are done.")
        };
        reply.set_delay(LLM_LATENCY)
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn peak_rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let llm = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ByRole)
        .mount(&llm)
        .await;
    let pw = Planwright::new();
    let server = pw
        .serve(
            &format!("{}/v1", llm.uri()),
            Some(TOKEN),
            &["--max-concurrent-runs", &RUNS.to_string(), "--retries", "0"],
        )
        .await;
    let pid = server.child.id().expect("server pid");
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(RUNS * 2)
        .timeout(Duration::from_secs(300))
        .build()
        .expect("client");

    let started = Instant::now();
    let mut tasks = Vec::new();
    for i in 0..RUNS {
        let client = client.clone();
        let base = server.base.clone();
        tasks.push(tokio::spawn(async move {
            let created: Value = client
                .post(format!("{base}/v1/runs"))
                .bearer_auth(TOKEN)
                .json(&json!({"task": format!("say hello and goodbye #{i}")}))
                .send()
                .await
                .expect("POST /v1/runs")
                .json()
                .await
                .expect("json");
            let run_id = created["run_id"].as_str().expect("run_id").to_string();
            let res = client
                .get(format!("{base}/v1/runs/{run_id}/events"))
                .bearer_auth(TOKEN)
                .send()
                .await
                .expect("events");
            // Events stamped before the stream opened are replays, not live deliveries.
            let connected = chrono::Utc::now();
            let mut replayed = 0usize;
            let mut reader = SseReader::new(res);
            let mut latencies = Vec::new();
            let mut last = String::new();
            while let Some(e) = reader.next().await {
                if let Some(at) = e.data["at"]
                    .as_str()
                    .and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok())
                {
                    if at < connected {
                        replayed += 1;
                        last = e.event;
                        continue;
                    }
                    let ms = (chrono::Utc::now() - at.with_timezone(&chrono::Utc))
                        .num_microseconds()
                        .unwrap_or(0) as f64
                        / 1000.0;
                    latencies.push(ms);
                }
                last = e.event;
            }
            (last, latencies, replayed)
        }));
    }
    let mut latencies = Vec::new();
    let mut completed = 0;
    let mut replayed = 0;
    for t in tasks {
        let (last, l, r) = t.await.expect("client task");
        replayed += r;
        if last == "run_completed" {
            completed += 1;
        }
        latencies.extend(l);
    }
    let wall = started.elapsed();
    let rss = peak_rss_kib(pid);
    latencies.sort_by(|a, b| a.total_cmp(b));
    let received = latencies.len();

    println!("## Server load (`planwright serve`)\n");
    println!(
        "{RUNS} runs started at once over HTTP (`--max-concurrent-runs {RUNS}`), flow mode, \
         a two-step plan, a scripted LLM answering every call after {} ms (4 calls per run); \
         every run followed by its own SSE client. Latency: the event's timestamp to its \
         arrival at the client (store write + broadcast + SSE), for live events only (those \
         stamped after the client's stream opened; earlier ones are replays).\n",
        LLM_LATENCY.as_millis()
    );
    println!("| measure | value |");
    println!("| --- | --- |");
    println!("| runs completed | {completed} / {RUNS} |");
    println!("| wall time | {:.2} s |", wall.as_secs_f64());
    println!("| events received live / replayed from the store | {received} / {replayed} |");
    println!(
        "| event delivery latency p50 / p99 / max | {:.1} / {:.1} / {:.1} ms |",
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.99),
        latencies.last().copied().unwrap_or(0.0)
    );
    println!("| server peak RSS | {:.1} MiB |", rss as f64 / 1024.0);
    drop(server);
    assert_eq!(completed, RUNS, "every run must complete");
}
