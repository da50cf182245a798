//! `planwright serve` against a scripted OpenAI server, over real HTTP on 127.0.0.1: runs,
//! the SSE stream (with Last-Event-ID replay), cancel, ask_user replies, auth, file downloads.

mod common;

use std::time::Duration;

use common::*;
use reqwest::StatusCode;
use serde_json::{json, Value};

const TOKEN: &str = "test-token-0123456789";

/// The same script, every LLM answer delayed so that a run takes a few seconds.
fn slow(script: Vec<wiremock::ResponseTemplate>, ms: u64) -> Vec<wiremock::ResponseTemplate> {
    script
        .into_iter()
        .map(|r| r.set_delay(Duration::from_millis(ms)))
        .collect()
}

#[tokio::test]
async fn a_run_is_created_followed_to_completion_and_shown() {
    let llm = ScriptedOpenAi::start(greeting_script(false)).await;
    let pw = Planwright::new();
    let server = pw.serve(&llm.base_url(), Some(TOKEN), &[]).await;

    let (status, body) = create(&server, json!({"task": "write and count"})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["queued"], false);
    let run_id = body["run_id"].as_str().expect("run_id").to_string();

    let stream = events(&server, &run_id, None).await.collect(60).await;
    let seqs: Vec<u64> = stream.iter().filter_map(|e| e.id).collect();
    assert_eq!(
        seqs,
        (1..=seqs.len() as u64).collect::<Vec<_>>(),
        "gap-free"
    );
    assert_eq!(
        stream.first().map(|e| e.event.as_str()),
        Some("run_started")
    );
    assert_eq!(
        stream.last().map(|e| e.event.as_str()),
        Some("run_completed"),
        "{:?}",
        stream.iter().map(|e| &e.event).collect::<Vec<_>>()
    );
    for e in &stream {
        assert_eq!(e.data["type"], e.event.as_str());
        assert_eq!(e.data["seq"], json!(e.id));
        assert_eq!(e.data["run_id"], run_id.as_str());
    }
    assert_eq!(
        stream
            .iter()
            .filter(|e| e.event == "step_completed")
            .count(),
        3
    );
    // Exactly what the store holds.
    let stored = pw.events(&run_id);
    assert_eq!(stored.len(), stream.len());

    let (status, show) = get_json(&server, &format!("/v1/runs/{run_id}")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(show["status"], "completed");
    assert_eq!(
        show["summary"],
        "Completed: 3 of 3 steps done.\n\ngreeting.txt was written; it has 2 words.\n\nFiles:\n- created: greeting.txt"
    );
    assert_eq!(show["plan"]["steps"].as_array().map(Vec::len), Some(3));
    assert_eq!(
        show["plan"]["steps"][1]["result"],
        "greeting.txt has 2 words"
    );
    assert_eq!(show["usage"]["llm_calls"], 7);
    assert_eq!(show["tool_calls"].as_array().map(Vec::len), Some(2));
    assert_eq!(show["files"][0]["path"], "greeting.txt");
    assert_eq!(show["files_truncated"], false);

    let (status, list) = get_json(&server, "/v1/runs").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(list["runs"][0]["run_id"], run_id.as_str());
    assert_eq!(list["runs"][0]["status"], "completed");

    // The file downloads; a finished run's stream replays and closes.
    let res = client()
        .get(server.url(&format!("/v1/runs/{run_id}/files/greeting.txt")))
        .bearer_auth(TOKEN)
        .send()
        .await
        .expect("file");
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.text().await.expect("text"), "hello planwright\n");
    let again = events(&server, &run_id, None).await.collect(10).await;
    assert_eq!(again.len(), stream.len());
    // And the workspace is the CLI's default one.
    assert!(pw.workspace(&run_id).join("greeting.txt").exists());
}

#[tokio::test]
async fn a_reconnecting_client_gets_exactly_the_missed_events() {
    let llm = ScriptedOpenAi::start(slow(greeting_script(false), 250)).await;
    let pw = Planwright::new();
    let server = pw.serve(&llm.base_url(), Some(TOKEN), &[]).await;
    let (_, body) = create(&server, json!({"task": "write and count"})).await;
    let run_id = body["run_id"].as_str().expect("run_id").to_string();

    let k = 4;
    let mut first = Vec::new();
    {
        let mut reader = events(&server, &run_id, None).await;
        while first.len() < k {
            first.push(reader.next().await.expect("an event"));
        }
    } // disconnected mid-run
    assert_eq!(
        first.iter().filter_map(|e| e.id).collect::<Vec<_>>(),
        vec![1, 2, 3, 4]
    );
    let mid_run = pw
        .events(&run_id)
        .last()
        .is_none_or(|(_, t, _)| t != "run_completed" && t != "run_failed");
    assert!(mid_run, "the run should still be going");

    let rest = events(&server, &run_id, Some(k as u64))
        .await
        .collect(60)
        .await;
    let ids: Vec<u64> = rest.iter().filter_map(|e| e.id).collect();
    let total = pw.events(&run_id).len() as u64;
    assert_eq!(ids, ((k as u64 + 1)..=total).collect::<Vec<_>>());
    assert_eq!(rest.last().map(|e| e.event.as_str()), Some("run_completed"));
}

#[tokio::test]
async fn a_run_is_cancelled() {
    let llm = ScriptedOpenAi::start(vec![
        plan(&["Wait a long time", "Never reached"]),
        call(
            "shell_exec",
            json!({"command": "sleep 30", "timeout_secs": 60}),
        ),
        complete(true, "waited"),
        text("should not be needed"),
    ])
    .await;
    let pw = Planwright::new();
    let server = pw.serve(&llm.base_url(), Some(TOKEN), &[]).await;
    let (_, body) = create(&server, json!({"task": "sleep"})).await;
    let run_id = body["run_id"].as_str().expect("run_id").to_string();
    let mut reader = events(&server, &run_id, None).await;
    loop {
        let e = reader.next().await.expect("event");
        if e.event == "tool_calling" {
            break;
        }
    }
    let started = std::time::Instant::now();
    let (status, body) = post_json(&server, &format!("/v1/runs/{run_id}/cancel"), json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let rest = reader.collect(30).await;
    assert!(started.elapsed() < Duration::from_secs(20));
    let last = rest.last().expect("a final event");
    assert_eq!(last.event, "run_failed");
    assert_eq!(last.data["reason"], "the run was cancelled");
    // The record is closed just after the final event.
    assert_eq!(status_once(&server, &run_id, "failed").await, "failed");
    // Cancelling again: the run is over.
    let (status, _) = post_json(&server, &format!("/v1/runs/{run_id}/cancel"), json!({})).await;
    assert_eq!(status, StatusCode::CONFLICT);
}

#[tokio::test]
async fn extra_runs_queue_and_a_queued_run_can_be_cancelled() {
    let llm = ScriptedOpenAi::start(vec![
        plan(&["Wait"]),
        call(
            "shell_exec",
            json!({"command": "sleep 30", "timeout_secs": 60}),
        ),
    ])
    .await;
    let pw = Planwright::new();
    let server = pw
        .serve(
            &llm.base_url(),
            Some(TOKEN),
            &["--max-concurrent-runs", "1"],
        )
        .await;
    let (s1, first) = create(&server, json!({"task": "first"})).await;
    assert_eq!(s1, StatusCode::CREATED);
    let (s2, second) = create(&server, json!({"task": "second"})).await;
    assert_eq!(s2, StatusCode::ACCEPTED, "{second}");
    assert_eq!(second["queued"], true);
    assert_eq!(second["position"], 1);
    let (s3, third) = create(&server, json!({"task": "third", "mode": "dag"})).await;
    assert_eq!(s3, StatusCode::ACCEPTED);
    assert_eq!(third["position"], 2);
    let id2 = second["run_id"].as_str().expect("id");
    let (_, show) = get_json(&server, &format!("/v1/runs/{id2}")).await;
    assert_eq!(show["status"], "queued");
    assert_eq!(show["position"], 1);

    let mut reader = events(&server, id2, None).await;
    let (status, body) = post_json(&server, &format!("/v1/runs/{id2}/cancel"), json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["status"], "cancelled");
    let got = reader.collect(10).await;
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].event, "run_cancelled");
    let (_, show) = get_json(&server, &format!("/v1/runs/{id2}")).await;
    assert_eq!(show["status"], "cancelled");
    // The third moved up.
    let id3 = third["run_id"].as_str().expect("id");
    let (_, show) = get_json(&server, &format!("/v1/runs/{id3}")).await;
    assert_eq!(show["position"], 1);
    assert_eq!(show["mode"], "dag");
    let (_, list) = get_json(&server, "/v1/runs").await;
    let statuses: Vec<&str> = list["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .filter_map(|r| r["status"].as_str())
        .collect();
    assert!(statuses.contains(&"queued") && statuses.contains(&"cancelled"));
    let id1 = first["run_id"].as_str().expect("id");
    post_json(&server, &format!("/v1/runs/{id1}/cancel"), json!({})).await;
}

#[tokio::test]
async fn ask_user_is_answered_through_reply() {
    let llm = ScriptedOpenAi::start(vec![
        plan(&["Ask the user for a colour"]),
        call("message_ask_user", json!({"question": "Which colour?"})),
        complete(true, "the user chose blue"),
        text("The user chose blue."),
    ])
    .await;
    let pw = Planwright::new();
    let server = pw.serve(&llm.base_url(), Some(TOKEN), &[]).await;
    let (_, body) = create(&server, json!({"task": "ask for a colour"})).await;
    let run_id = body["run_id"].as_str().expect("run_id").to_string();

    // Nothing is pending yet... or already; either way a bad body is a 400.
    let (status, err) = post_json(
        &server,
        &format!("/v1/runs/{run_id}/reply"),
        json!({"nope": 1}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        err["error"].as_str().unwrap_or_default().contains("answer"),
        "{err}"
    );

    let mut reader = events(&server, &run_id, None).await;
    loop {
        let e = reader.next().await.expect("event");
        if e.event == "waiting_for_user" {
            assert_eq!(e.data["question"], "Which colour?");
            break;
        }
    }
    reply_when_asked(&server, &run_id, "blue").await;
    let rest = reader.collect(30).await;
    let replied = rest
        .iter()
        .find(|e| e.event == "user_replied")
        .expect("user_replied");
    assert_eq!(replied.data["answer"], "blue");
    assert_eq!(rest.last().map(|e| e.event.as_str()), Some("run_completed"));
    let reqs = llm.requests().await;
    assert!(tool_messages(&reqs[2])
        .iter()
        .any(|m| m.contains("The user answered: blue")));
    // No question pending any more.
    let (status, _) = post_json(
        &server,
        &format!("/v1/runs/{run_id}/reply"),
        json!({"answer": "again"}),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT);
}

#[tokio::test]
async fn a_missing_or_wrong_token_is_refused() {
    let llm = ScriptedOpenAi::start(vec![]).await;
    let pw = Planwright::new();
    let server = pw.serve(&llm.base_url(), Some(TOKEN), &[]).await;
    let c = client();
    for path in [
        "/v1/runs",
        "/v1/runs/x",
        "/v1/runs/x/events",
        "/v1/runs/x/files/a",
    ] {
        let res = c.get(server.url(path)).send().await.expect("send");
        assert_eq!(res.status(), StatusCode::UNAUTHORIZED, "{path}");
        let body: Value = res.json().await.expect("json");
        assert!(body["error"].as_str().unwrap_or_default().contains("token"));
        let res = c
            .get(server.url(path))
            .bearer_auth("wrong-token-0123456789")
            .send()
            .await
            .expect("send");
        assert_eq!(res.status(), StatusCode::UNAUTHORIZED, "{path}");
    }
    let res = c
        .post(server.url("/v1/runs"))
        .json(&json!({"task": "x"}))
        .send()
        .await
        .expect("send");
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    // Health, the page and the OpenAPI document need no token.
    let res = c.get(server.url("/v1/health")).send().await.expect("send");
    assert_eq!(res.status(), StatusCode::OK);
    let res = c.get(server.url("/")).send().await.expect("send");
    assert_eq!(res.status(), StatusCode::OK);
    assert!(res.text().await.expect("html").contains("Planwright"));
    let res = c
        .get(server.url("/v1/openapi.json"))
        .send()
        .await
        .expect("send");
    assert_eq!(res.status(), StatusCode::OK);
    let doc: Value = res.json().await.expect("json");
    assert!(doc["paths"]["/v1/runs/{id}/events"].is_object());
    // The right token gets in; an unknown run is a 404.
    let (status, _) = get_json(&server, "/v1/runs/nope").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // `?token=` works on the events endpoint only.
    let res = c
        .get(server.url(&format!("/v1/runs/nope/events?token={TOKEN}")))
        .send()
        .await
        .expect("send");
    assert_eq!(res.status(), StatusCode::NOT_FOUND);
    for path in [
        "/v1/runs".to_string(),
        // Issue 29: any path ending in `/events` took it (a workspace file, `/mcp/events`).
        "/v1/runs/nope/files/events".to_string(),
        "/mcp/events".to_string(),
    ] {
        let res = c
            .get(server.url(&format!("{path}?token={TOKEN}")))
            .send()
            .await
            .expect("send");
        assert_eq!(res.status(), StatusCode::UNAUTHORIZED, "{path}");
    }
}

#[tokio::test]
async fn bad_requests_get_clear_errors() {
    let llm = ScriptedOpenAi::start(vec![]).await;
    let pw = Planwright::new();
    let server = pw.serve(&llm.base_url(), Some(TOKEN), &[]).await;
    let c = client();
    let send = |body: String| {
        c.post(server.url("/v1/runs"))
            .bearer_auth(TOKEN)
            .header("content-type", "application/json")
            .body(body)
            .send()
    };
    let res = send("{not json".into()).await.expect("send");
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    let body: Value = res.json().await.expect("json");
    assert!(
        body["error"]
            .as_str()
            .unwrap_or_default()
            .starts_with("invalid JSON body"),
        "{body}"
    );
    let res = send("{}".into()).await.expect("send");
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    let body: Value = res.json().await.expect("json");
    assert!(
        body["error"]
            .as_str()
            .unwrap_or_default()
            .contains("missing field `task`"),
        "{body}"
    );
    let res = send(json!({"task": "x", "mode": "chaos"}).to_string())
        .await
        .expect("send");
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    let body: Value = res.json().await.expect("json");
    assert!(
        body["error"]
            .as_str()
            .unwrap_or_default()
            .contains("unknown mode 'chaos'"),
        "{body}"
    );
    let res = send(json!({"task": "   "}).to_string())
        .await
        .expect("send");
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    let huge = json!({"task": "x".repeat(100 * 1024)}).to_string();
    let res = send(huge).await.expect("send");
    assert_eq!(res.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let body: Value = res.json().await.expect("json");
    assert!(
        body["error"]
            .as_str()
            .unwrap_or_default()
            .contains("64 KiB"),
        "{body}"
    );
}

/// Issue 29: a workspace of 200,000 folders made `GET /v1/runs/{id}` walk all of them. The
/// listing is bounded (4096 entries looked at) and says when it was cut short.
#[tokio::test]
async fn a_huge_workspace_is_listed_in_part_and_says_so() {
    let llm = ScriptedOpenAi::start(greeting_script(false)).await;
    let pw = Planwright::new();
    let server = pw.serve(&llm.base_url(), Some(TOKEN), &[]).await;
    let (_, body) = create(&server, json!({"task": "write and count"})).await;
    let run_id = body["run_id"].as_str().expect("run_id").to_string();
    events(&server, &run_id, None).await.collect(60).await;
    let workspace = pw.workspace(&run_id);
    for i in 0..5000 {
        std::fs::create_dir(workspace.join(format!("d{i:04}"))).expect("mkdir");
    }
    std::fs::write(workspace.join("d4999").join("deep.txt"), "deep").expect("write");

    let (status, show) = get_json(&server, &format!("/v1/runs/{run_id}")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(show["files_truncated"], true, "{}", show["files"]);
    let listed = show["files"].as_array().expect("files").len();
    assert!(
        listed <= 1,
        "only the workspace's own entries were looked at: {listed}"
    );
    // A file left out of the listing still downloads by its path.
    let res = client()
        .get(server.url(&format!("/v1/runs/{run_id}/files/d4999/deep.txt")))
        .bearer_auth(TOKEN)
        .send()
        .await
        .expect("file");
    assert_eq!(res.text().await.expect("text"), "deep");
}

/// Issue 29: a file name that is not UTF-8 was listed lossily and could not be downloaded.
/// The listing's `path_encoded` is its exact bytes, and the download route takes it.
#[tokio::test]
async fn a_file_name_that_is_not_utf8_is_listed_exactly_and_downloads() {
    use std::os::unix::ffi::OsStrExt;
    let llm = ScriptedOpenAi::start(greeting_script(false)).await;
    let pw = Planwright::new();
    let server = pw.serve(&llm.base_url(), Some(TOKEN), &[]).await;
    let (_, body) = create(&server, json!({"task": "write and count"})).await;
    let run_id = body["run_id"].as_str().expect("run_id").to_string();
    events(&server, &run_id, None).await.collect(60).await;
    let workspace = pw.workspace(&run_id);
    std::fs::create_dir(workspace.join("out")).expect("mkdir");
    let name = std::ffi::OsStr::from_bytes(b"r\xffport \xe9.txt");
    std::fs::write(workspace.join("out").join(name), "latin-1 name").expect("write");

    let (_, show) = get_json(&server, &format!("/v1/runs/{run_id}")).await;
    let listed = show["files"]
        .as_array()
        .expect("files")
        .iter()
        .find(|f| f["path"].as_str().is_some_and(|p| p.starts_with("out/")))
        .cloned()
        .expect("listed");
    assert_eq!(listed["path"], "out/r\u{fffd}port \u{fffd}.txt");
    assert_eq!(listed["path_encoded"], "out/r%FFport%20%E9.txt");
    let get = |rel: &str| {
        client()
            .get(server.url(&format!("/v1/runs/{run_id}/files/{rel}")))
            .bearer_auth(TOKEN)
            .send()
    };
    let res = get("out/r%FFport%20%E9.txt").await.expect("send");
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.text().await.expect("text"), "latin-1 name");
    // The lossy name is another file: not found.
    let res = get("out/r%EF%BF%BDport%20%EF%BF%BD.txt")
        .await
        .expect("send");
    assert_eq!(res.status(), StatusCode::NOT_FOUND);
    // A broken escape is a clear error.
    let res = get("out/r%F").await.expect("send");
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn a_path_escape_is_refused_in_file_downloads() {
    let llm = ScriptedOpenAi::start(vec![
        plan(&["Write a file and a link out"]),
        call(
            "shell_exec",
            json!({"command": "mkdir -p sub && echo inside > sub/in.txt && ln -s /etc/passwd out.txt && ln ../../../../secret.txt hard.txt && mkfifo pipe"}),
        ),
        complete(true, "done"),
        text("Done."),
    ])
    .await;
    let pw = Planwright::new();
    std::fs::write(pw.cwd().join("secret.txt"), "top secret").expect("write");
    // Unsandboxed, so that the command can reach the file outside to hard-link it (the
    // server's own check is what is tested here).
    let server = pw
        .serve(&llm.base_url(), Some(TOKEN), &["--sandbox", "none"])
        .await;
    // Per-request mode and model override the server's defaults.
    let (_, body) = create(
        &server,
        json!({"task": "files", "mode": "flow", "model": "gpt-test-override"}),
    )
    .await;
    let run_id = body["run_id"].as_str().expect("run_id").to_string();
    let done = events(&server, &run_id, None).await.collect(60).await;
    assert_eq!(
        done.first().map(|e| e.data["mode"].clone()),
        Some(json!("flow"))
    );
    assert_eq!(llm.requests().await[0]["model"], "gpt-test-override");

    let c = client();
    let get = |path: String| c.get(server.url(&path)).bearer_auth(TOKEN).send();
    let base = format!("/v1/runs/{run_id}/files");
    let res = get(format!("{base}/sub/in.txt")).await.expect("send");
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.text().await.expect("text"), "inside\n");
    for escape in [
        // Encoded slashes keep the dots inside one segment, so the server sees `../..`.
        "..%2F..%2F..%2F..%2Fsecret.txt",
        "sub%2F..%2F..%2F..%2F..%2F..%2Fsecret.txt",
        "%2Fetc%2Fpasswd",
        "out.txt",
        // A hard link the model made to a file outside the workspace.
        "hard.txt",
    ] {
        let res = get(format!("{base}/{escape}")).await.expect("send");
        assert_eq!(res.status(), StatusCode::FORBIDDEN, "{escape}");
        let text = res.text().await.expect("text");
        assert!(
            !text.contains("root:") && !text.contains("top secret"),
            "{text}"
        );
    }
    let res = get(format!("{base}/missing.txt")).await.expect("send");
    assert_eq!(res.status(), StatusCode::NOT_FOUND);
    // Not a regular file: refused without blocking on it.
    let res = get(format!("{base}/pipe")).await.expect("send");
    assert_eq!(res.status(), StatusCode::NOT_FOUND);
    let res = get("/v1/runs/run_nope/files/a.txt".into())
        .await
        .expect("send");
    assert_eq!(res.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_generated_token_is_printed_once_and_a_public_address_needs_one() {
    let llm = ScriptedOpenAi::start(vec![]).await;
    let pw = Planwright::new();
    let server = pw.serve(&llm.base_url(), None, &[]).await;
    assert!(server.token.starts_with("pw_"), "{}", server.token);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(server.stderr_text().contains(&server.token));
    let (status, _) = get_json(&server, "/v1/runs").await;
    assert_eq!(status, StatusCode::OK);
    drop(server);
    let again = pw.serve(&llm.base_url(), None, &[]).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        !again.stderr_text().contains(&again.token),
        "printed only once"
    );
    drop(again);

    let out = pw
        .exec(
            &["serve", "--addr", "0.0.0.0:0"],
            &[("OPENAI_BASE_URL", llm.base_url().as_str())],
        )
        .await;
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("without an explicit token"), "{err}");
}

#[tokio::test]
async fn a_run_cancelled_while_planning_ends_and_says_so() {
    let llm = ScriptedOpenAi::start(vec![
        plan(&["Never reached"]).set_delay(Duration::from_secs(30))
    ])
    .await;
    let pw = Planwright::new();
    let server = pw.serve(&llm.base_url(), Some(TOKEN), &[]).await;
    let (_, body) = create(&server, json!({"task": "slow planner"})).await;
    let run_id = body["run_id"].as_str().expect("run_id").to_string();
    let mut reader = events(&server, &run_id, None).await;
    let first = reader.next().await.expect("run_started");
    assert_eq!(first.event, "run_started");
    let (status, _) = post_json(&server, &format!("/v1/runs/{run_id}/cancel"), json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let rest = reader.collect(20).await;
    let last = rest.last().unwrap_or_else(|| {
        panic!(
            "no event after the cancel; stderr:\n{}",
            server.stderr_text()
        )
    });
    assert!(
        last.event == "run_failed" || last.event == "run_error",
        "{rest:?}"
    );
    assert_eq!(status_once(&server, &run_id, "failed").await, "failed");
}

/// Clients that connect and never finish their headers cannot exhaust the server: past
/// `--max-connections` the oldest connection without a whole request is closed to make room,
/// so a health check is still answered while the idle ones hold every place; the others
/// are closed when `--header-timeout-secs` expires.
#[tokio::test]
async fn idle_connections_are_bounded_and_timed_out() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let llm = ScriptedOpenAi::start(vec![]).await;
    let pw = Planwright::new();
    let server = pw
        .serve(
            &llm.base_url(),
            Some(TOKEN),
            &["--max-connections", "3", "--header-timeout-secs", "2"],
        )
        .await;
    let addr = server
        .base
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    let mut idle = Vec::new();
    for _ in 0..3 {
        let mut s = tokio::net::TcpStream::connect(&addr)
            .await
            .expect("connect");
        s.write_all(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n")
            .await
            .expect("write");
        idle.push(s);
    }
    // Every place is taken by a connection without a request: a real request still gets
    // its answer (the oldest idle one makes room).
    let mut extra = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connect");
    extra
        .write_all(b"GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .expect("write");
    let mut buf = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), extra.read_to_end(&mut buf))
        .await
        .expect("answered")
        .expect("read");
    let answer = String::from_utf8_lossy(&buf);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    // The idle ones are closed: the oldest at once, the others when their header deadline
    // passes.
    for mut s in idle {
        let mut buf = Vec::new();
        // The server may answer 408 before closing; what matters is that it closes.
        let _ = tokio::time::timeout(Duration::from_secs(30), s.read_to_end(&mut buf))
            .await
            .expect("the server closes an idle connection");
    }
    // And the server answers again.
    let (status, _) = get_json(&server, "/v1/health").await;
    assert_eq!(status, StatusCode::OK);
}

/// The queue is durable: runs accepted before the server was SIGKILLed (one running, the
/// rest queued) all complete after a restart on the same database, each effect once.
#[tokio::test]
async fn queued_runs_survive_a_killed_server() {
    let (_llm, base) = append_once_llm().await;
    let pw = Planwright::new();
    let args = ["--max-concurrent-runs", "1", "--retries", "0"];
    let mut server = pw.serve(&base, Some(TOKEN), &args).await;
    let mut ids = Vec::new();
    for i in 0..4 {
        let (status, body) = create(&server, json!({"task": format!("append {i}")})).await;
        assert!(status.is_success(), "{body}");
        ids.push(body["run_id"].as_str().expect("id").to_string());
    }
    // Killed while the first run works (its step started) and three wait.
    until_event(&server, &ids[0], "tool_calling").await;
    server.child.start_kill().expect("SIGKILL");
    let _ = server.child.wait().await;

    let server = pw.serve(&base, Some(TOKEN), &args).await;
    until_completed(&server, &ids, 120).await;
    for id in &ids {
        assert_appended_once(&pw, id);
    }
    let first = pw.events(&ids[0]);
    assert_eq!(
        first.iter().filter(|(_, t, _)| t == "run_resumed").count(),
        1,
        "the interrupted run was resumed from its journal"
    );
}

/// SIGTERM suspends: the running run stops at a safe point without an outcome, keeps its
/// status, and the next server finishes it; nothing ran twice.
#[tokio::test]
async fn sigterm_suspends_runs_and_the_next_server_finishes_them() {
    let (_llm, base) = append_once_llm().await;
    let pw = Planwright::new();
    let mut server = pw.serve(&base, Some(TOKEN), &["--retries", "0"]).await;
    let (_, body) = create(&server, json!({"task": "append"})).await;
    let id = body["run_id"].as_str().expect("id").to_string();
    until_event(&server, &id, "tool_calling").await;
    let pid = server.child.id().expect("pid");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(pid).expect("pid")),
        nix::sys::signal::Signal::SIGTERM,
    )
    .expect("SIGTERM");
    let status = tokio::time::timeout(Duration::from_secs(30), server.child.wait())
        .await
        .expect("the server exits after SIGTERM")
        .expect("wait");
    assert!(status.success(), "{status}; {}", server.stderr_text());
    let events = pw.events(&id);
    assert!(
        !events
            .iter()
            .any(|(_, t, _)| t == "run_completed" || t == "run_failed"),
        "a suspended run writes no outcome: {events:?}"
    );
    // The tool call under way finished and was journaled before the server stopped.
    assert!(
        events.iter().any(|(_, t, _)| t == "tool_called"),
        "{events:?}"
    );

    let server = pw.serve(&base, Some(TOKEN), &["--retries", "0"]).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while status_of(&server, &id).await != "completed" {
        assert!(
            tokio::time::Instant::now() < deadline,
            "stderr:\n{}",
            server.stderr_text()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_appended_once(&pw, &id);
}

/// A run waiting for its user's answer gives its slot back: with one slot, a second run
/// starts and completes meanwhile; the first goes on once answered.
#[tokio::test]
async fn a_run_waiting_for_its_user_frees_its_slot() {
    let llm = ScriptedOpenAi::start(vec![
        // Run A plans and asks.
        plan(&["Ask the user for a colour"]),
        call("message_ask_user", json!({"question": "Which colour?"})),
        // Run B runs whole while A waits.
        plan(&["Say hi"]),
        call("shell_exec", json!({"command": "echo hi"})),
        complete(true, "said hi"),
        text("Said hi."),
        // A, answered.
        complete(true, "the user chose blue"),
        text("The user chose blue."),
    ])
    .await;
    let pw = Planwright::new();
    let server = pw
        .serve(
            &llm.base_url(),
            Some(TOKEN),
            &["--max-concurrent-runs", "1"],
        )
        .await;
    let (_, a) = create(&server, json!({"task": "ask for a colour"})).await;
    let a = a["run_id"].as_str().expect("id").to_string();
    let mut reader = events(&server, &a, None).await;
    while reader.next().await.expect("event").event != "waiting_for_user" {}
    let (_, b) = create(&server, json!({"task": "say hi"})).await;
    let b = b["run_id"].as_str().expect("id").to_string();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while status_of(&server, &b).await != "completed" {
        assert!(
            tokio::time::Instant::now() < deadline,
            "run B never ran while A waited: {}",
            server.stderr_text()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (status, body) = post_json(
        &server,
        &format!("/v1/runs/{a}/reply"),
        json!({"answer": "blue"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let rest = reader.collect(30).await;
    assert_eq!(rest.last().map(|e| e.event.as_str()), Some("run_completed"));
}

/// Sequence numbers 1..=n, each once, and one `run_started`.
fn assert_one_clean_log(pw: &Planwright, id: &str) {
    let events = pw.events(id);
    let seqs: Vec<i64> = events.iter().map(|(s, _, _)| *s).collect();
    assert_eq!(
        seqs,
        (1..=events.len() as i64).collect::<Vec<_>>(),
        "run {id}: no gap, no duplicate"
    );
    assert_eq!(
        events.iter().filter(|(_, t, _)| t == "run_started").count(),
        1,
        "run {id} started once"
    );
}

/// A server that only queues (`--workers 0`) and two workers sharing its database: every
/// run is claimed by exactly one worker, runs once, and its event stream, served by the
/// server from the store, reaches the end.
#[tokio::test]
async fn workers_share_the_queue_and_each_run_runs_once() {
    let (_llm, base) = append_once_llm().await;
    let pw = Planwright::new();
    let server = pw.serve(&base, Some(TOKEN), &["--workers", "0"]).await;
    let mut ids = Vec::new();
    for i in 0..6 {
        let (status, body) = create(&server, json!({"task": format!("append {i}")})).await;
        assert!(status.is_success(), "{body}");
        ids.push(body["run_id"].as_str().expect("id").to_string());
    }
    let stream = events(&server, &ids[0], None).await;
    let _a = worker(&pw, &base, &["--concurrency", "2"]);
    let _b = worker(&pw, &base, &["--concurrency", "2"]);
    until_completed(&server, &ids, 120).await;
    for id in &ids {
        assert_appended_once(&pw, id);
        assert_one_clean_log(&pw, id);
    }
    let mut stream = stream;
    let seen = stream.collect(30).await;
    assert_eq!(
        seen.last().map(|e| e.event.as_str()),
        Some("run_completed"),
        "the server streams a run a worker executes: {seen:?}"
    );
    assert_eq!(
        seen.iter().filter_map(|e| e.id).collect::<Vec<_>>(),
        (1..=pw.events(&ids[0]).len() as u64).collect::<Vec<_>>()
    );
}

/// A worker SIGKILLed during a tool call loses nothing: another worker takes the run over
/// when its lease expires, resumes it from its journal (the interrupted call is not run
/// again: the model is told its outcome is unknown), and the effect happened once.
#[tokio::test]
async fn a_worker_killed_mid_tool_call_hands_its_run_on() {
    let (_llm, base) = append_once_llm().await;
    let pw = Planwright::new();
    let server = pw.serve(&base, Some(TOKEN), &["--workers", "0"]).await;
    let (_, body) = create(&server, json!({"task": "append"})).await;
    let id = body["run_id"].as_str().expect("id").to_string();
    let mut first = worker(&pw, &base, &["--lease-secs", "2"]);
    until_event(&server, &id, "tool_calling").await;
    first.start_kill().expect("SIGKILL");
    let _ = first.wait().await;
    let _second = worker(&pw, &base, &["--lease-secs", "2"]);
    until_completed(&server, std::slice::from_ref(&id), 120).await;
    assert_appended_once(&pw, &id);
    assert_one_clean_log(&pw, &id);
    assert_eq!(
        pw.events(&id)
            .iter()
            .filter(|(_, t, _)| t == "run_resumed")
            .count(),
        1,
        "the second worker resumed the run from its journal"
    );
}

/// A server that only queues reaches the runs a worker executes through the store: an
/// answer to `message_ask_user` and a cancellation both arrive.
#[tokio::test]
async fn answers_and_cancellations_reach_a_run_a_worker_executes() {
    let llm = ScriptedOpenAi::start(vec![
        plan(&["Ask the user for a colour"]),
        call("message_ask_user", json!({"question": "Which colour?"})),
        complete(true, "the user chose blue"),
        text("The user chose blue."),
        plan(&["Wait a long time", "Never reached"]),
        call(
            "shell_exec",
            json!({"command": "sleep 30", "timeout_secs": 60}),
        ),
        complete(true, "waited"),
        text("should not be needed"),
    ])
    .await;
    let pw = Planwright::new();
    let server = pw
        .serve(&llm.base_url(), Some(TOKEN), &["--workers", "0"])
        .await;
    let _worker = worker(&pw, &llm.base_url(), &["--concurrency", "1"]);

    let (_, body) = create(&server, json!({"task": "ask for a colour"})).await;
    let asking = body["run_id"].as_str().expect("run_id").to_string();
    let mut reader = events(&server, &asking, None).await;
    loop {
        let e = reader.next().await.expect("event");
        if e.event == "waiting_for_user" {
            break;
        }
    }
    // Once the store says `waiting`, the server relays the answer.
    reply_when_asked(&server, &asking, "blue").await;
    let rest = reader.collect(30).await;
    let replied = rest
        .iter()
        .find(|e| e.event == "user_replied")
        .expect("user_replied");
    assert_eq!(replied.data["answer"], "blue");
    assert_eq!(rest.last().map(|e| e.event.as_str()), Some("run_completed"));

    let (_, body) = create(&server, json!({"task": "sleep"})).await;
    let sleeping = body["run_id"].as_str().expect("run_id").to_string();
    let mut reader = events(&server, &sleeping, None).await;
    loop {
        let e = reader.next().await.expect("event");
        if e.event == "tool_calling" {
            break;
        }
    }
    let (status, body) =
        post_json(&server, &format!("/v1/runs/{sleeping}/cancel"), json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let rest = reader.collect(30).await;
    let last = rest.last().expect("a final event");
    assert_eq!(last.event, "run_failed", "{rest:?}");
    assert_eq!(last.data["reason"], "the run was cancelled");
}

/// A worker that cannot see a run's workspace (another machine without the shared
/// filesystem) fails that run with a reason naming the path, and goes on with the others.
#[tokio::test]
async fn a_worker_that_cannot_reach_a_workspace_fails_that_run_clearly() {
    let (_llm, base) = append_once_llm().await;
    let pw = Planwright::new();
    let server = pw.serve(&base, Some(TOKEN), &["--workers", "0"]).await;
    let (_, body) = create(&server, json!({"task": "append"})).await;
    let lost = body["run_id"].as_str().expect("id").to_string();
    let (_, body) = create(&server, json!({"task": "append"})).await;
    let fine = body["run_id"].as_str().expect("id").to_string();
    // As seen from a machine that does not share the server's disk.
    let workspace = pw.workspace(&lost);
    std::fs::remove_dir_all(&workspace).expect("remove the workspace");
    let _worker = worker(&pw, &base, &[]);
    until_completed(&server, std::slice::from_ref(&fine), 60).await;
    assert_eq!(status_once(&server, &lost, "failed").await, "failed");
    let (_, show) = get_json(&server, &format!("/v1/runs/{lost}")).await;
    let error = show["error"].as_str().unwrap_or_default();
    assert!(
        error.contains(&workspace.display().to_string()) && error.contains("--workspace-root"),
        "{show}"
    );
}

/// A run started by `planwright run` (the CLI) reads its mailbox too: a server on the same
/// database cancels it.
#[tokio::test]
async fn a_server_cancels_a_run_the_cli_executes() {
    let llm = ScriptedOpenAi::start(vec![
        plan(&["Wait a long time"]),
        call(
            "shell_exec",
            json!({"command": "sleep 30", "timeout_secs": 60}),
        ),
        complete(true, "waited"),
        text("should not be needed"),
    ])
    .await;
    let pw = Planwright::new();
    let server = pw
        .serve(&llm.base_url(), Some(TOKEN), &["--workers", "0"])
        .await;
    let cancel = async {
        let id = loop {
            if let Some(id) = pw.only_run_id() {
                break id;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        until_event(&server, &id, "tool_calling").await;
        let (status, body) = post_json(&server, &format!("/v1/runs/{id}/cancel"), json!({})).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    };
    let (result, ()) = tokio::join!(pw.run(&llm, "sleep", &["--retries", "0"]), cancel);
    assert_eq!(result.json["status"], "failed", "{}", result.stderr());
    assert!(
        result.json["error"]
            .as_str()
            .unwrap_or_default()
            .contains("cancelled"),
        "{}",
        result.json
    );
}
