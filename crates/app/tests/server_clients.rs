//! Several clients on one `planwright serve` (docs/security.md, "Clients"): named tokens
//! made with `planwright token add`, each seeing and steering only its own runs within its
//! scopes, over `/v1` and over `/mcp`; the server's own token is admin.

mod common;

use std::time::Duration;

use common::*;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

const ADMIN: &str = "test-token-0123456789";

/// `planwright token add NAME --scope SCOPES` in the test's folder: the token it printed.
async fn add_token(pw: &Planwright, name: &str, scopes: &str) -> String {
    let out = pw
        .exec(&["token", "add", name, "--scope", scopes], &[])
        .await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "token add: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let token = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(token.starts_with("pw_"), "{token}");
    token
}

/// One request with `token`: its status and JSON body (`null` when not JSON).
async fn call_as(
    server: &Server,
    token: &str,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let mut req = client()
        .request(method, server.url(path))
        .bearer_auth(token);
    if let Some(body) = body {
        req = req.json(&body);
    }
    let res = req.send().await.expect("request");
    let status = res.status();
    (status, res.json().await.unwrap_or(Value::Null))
}

/// The script of a run that asks to run one shell command (under `--approval ask` it waits
/// for its approval), then completes.
fn touch_script() -> Vec<wiremock::ResponseTemplate> {
    vec![
        plan(&["Create a.txt"]),
        call("shell_exec", json!({"command": "echo hello > a.txt"})),
        complete(true, "created a.txt"),
        text("a.txt exists."),
    ]
}

/// The call `run_id` waits to have approved, once `GET` (by `token`) shows it.
async fn pending_call(server: &Server, token: &str, run_id: &str) -> String {
    for _ in 0..400 {
        let (_, show) = call_as(
            server,
            token,
            Method::GET,
            &format!("/v1/runs/{run_id}"),
            None,
        )
        .await;
        if let Some(call_id) = show["pending_approval"].as_str() {
            return call_id.to_string();
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!(
        "run {run_id} never waited for an approval; server:\n{}",
        server.stderr_text()
    );
}

/// The run's status once it is `want`, as `token` sees it (or the last one after 30 s).
async fn status_as(server: &Server, token: &str, run_id: &str, want: &str) -> String {
    let mut status = String::new();
    for _ in 0..300 {
        let (_, show) = call_as(
            server,
            token,
            Method::GET,
            &format!("/v1/runs/{run_id}"),
            None,
        )
        .await;
        status = show["status"].as_str().unwrap_or_default().to_string();
        if status == want {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    status
}

/// What another client gets for `run_id`: exactly what an unknown id gets (404, the same
/// message with the id), on every route of a run.
async fn assert_hidden(server: &Server, token: &str, run_id: &str, call_id: &str) {
    let routes: Vec<(Method, String, Option<Value>)> = vec![
        (Method::GET, "/v1/runs/{id}".into(), None),
        (Method::GET, "/v1/runs/{id}/events".into(), None),
        (Method::GET, "/v1/runs/{id}/files/a.txt".into(), None),
        (Method::POST, "/v1/runs/{id}/cancel".into(), Some(json!({}))),
        (
            Method::POST,
            "/v1/runs/{id}/reply".into(),
            Some(json!({"answer": "yes"})),
        ),
        (
            Method::POST,
            format!("/v1/runs/{{id}}/approvals/{call_id}"),
            Some(json!({"decision": "always"})),
        ),
    ];
    for (method, route, body) in routes {
        let (status, err) = call_as(
            server,
            token,
            method.clone(),
            &route.replace("{id}", run_id),
            body.clone(),
        )
        .await;
        let (unknown_status, unknown) = call_as(
            server,
            token,
            method,
            &route.replace("{id}", "run_nobody_has"),
            body,
        )
        .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{route}: {err}");
        assert_eq!(unknown_status, StatusCode::NOT_FOUND, "{route}: {unknown}");
        assert_eq!(
            err["error"].as_str().map(|e| e.replace(run_id, "ID")),
            unknown["error"]
                .as_str()
                .map(|e| e.replace("run_nobody_has", "ID")),
            "{route}: another client's run looks unknown"
        );
    }
    let (status, list) = call_as(server, token, Method::GET, "/v1/runs", None).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        !list["runs"]
            .as_array()
            .expect("runs")
            .iter()
            .any(|r| r["run_id"] == run_id),
        "listed to another client: {list}"
    );
}

/// Issue 29, Medium 10: client B listed A's runs, answered A's approval with `always` and
/// read A's files.
#[tokio::test]
async fn a_client_sees_and_steers_only_its_own_runs() {
    let llm = ScriptedOpenAi::start(touch_script()).await;
    let pw = Planwright::new();
    let alice = add_token(&pw, "alice", "submit,read,approve").await;
    let bob = add_token(&pw, "bob", "submit,read,approve").await;
    let server = pw
        .serve(&llm.base_url(), Some(ADMIN), &["--approval", "ask"])
        .await;

    let (status, body) = call_as(
        &server,
        &alice,
        Method::POST,
        "/v1/runs",
        Some(json!({"task": "create a.txt"})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let run_id = body["run_id"].as_str().expect("run_id").to_string();
    let call_id = pending_call(&server, &alice, &run_id).await;

    // Bob: the run does not exist, on any route; his `always` reaches nothing.
    assert_hidden(&server, &bob, &run_id, &call_id).await;
    // The event stream with `?token=` too.
    let res = client()
        .get(server.url(&format!("/v1/runs/{run_id}/events?token={bob}")))
        .send()
        .await
        .expect("events");
    assert_eq!(res.status(), StatusCode::NOT_FOUND);

    // Admin sees it, with its owner; Alice too, and lists it.
    let (status, show) = call_as(
        &server,
        ADMIN,
        Method::GET,
        &format!("/v1/runs/{run_id}"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{show}");
    assert_eq!(show["client"], "alice");
    assert_eq!(show["pending_approval"], call_id.as_str(), "still waiting");
    let (_, list) = call_as(&server, ADMIN, Method::GET, "/v1/runs", None).await;
    assert_eq!(list["runs"][0]["client"], "alice");
    let (_, list) = call_as(&server, &alice, Method::GET, "/v1/runs", None).await;
    assert_eq!(list["runs"].as_array().map(Vec::len), Some(1), "{list}");

    // Alice approves; the run ends; its file is hers (and admin's) only.
    let (status, body) = call_as(
        &server,
        &alice,
        Method::POST,
        &format!("/v1/runs/{run_id}/approvals/{call_id}"),
        Some(json!({"decision": "approve"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        status_as(&server, &alice, &run_id, "completed").await,
        "completed"
    );
    for (token, want) in [
        (&alice, StatusCode::OK),
        (&ADMIN.to_string(), StatusCode::OK),
        (&bob, StatusCode::NOT_FOUND),
    ] {
        let res = client()
            .get(server.url(&format!("/v1/runs/{run_id}/files/a.txt")))
            .bearer_auth(token)
            .send()
            .await
            .expect("file");
        assert_eq!(res.status(), want);
    }
    assert_hidden(&server, &bob, &run_id, &call_id).await;
    let decided: Vec<_> = pw
        .events(&run_id)
        .into_iter()
        .filter(|(_, kind, _)| kind == "approval_decided")
        .map(|(_, _, e)| e["decision"].clone())
        .collect();
    assert_eq!(
        decided,
        vec![json!("approve")],
        "Bob's `always` never arrived"
    );

    // Bob's own run is his: Alice does not see it.
    let (status, body) = call_as(
        &server,
        &bob,
        Method::POST,
        "/v1/runs",
        Some(json!({"task": "another"})),
    )
    .await;
    assert!(status.is_success(), "{body}");
    let bobs = body["run_id"].as_str().expect("run_id").to_string();
    let (status, _) = call_as(
        &server,
        &alice,
        Method::GET,
        &format!("/v1/runs/{bobs}"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, show) = call_as(
        &server,
        &bob,
        Method::GET,
        &format!("/v1/runs/{bobs}"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(show["client"], "bob");
    let (_, list) = call_as(&server, ADMIN, Method::GET, "/v1/runs", None).await;
    assert_eq!(
        list["runs"].as_array().map(Vec::len),
        Some(2),
        "admin sees all: {list}"
    );
    call_as(
        &server,
        &bob,
        Method::POST,
        &format!("/v1/runs/{bobs}/cancel"),
        Some(json!({})),
    )
    .await;
}

#[tokio::test]
async fn a_token_acts_only_within_its_scopes() {
    let llm = ScriptedOpenAi::start(touch_script()).await;
    let pw = Planwright::new();
    let reader = add_token(&pw, "reader", "read").await;
    let submitter = add_token(&pw, "ci", "submit,read").await;
    let server = pw
        .serve(&llm.base_url(), Some(ADMIN), &["--approval", "ask"])
        .await;

    // Without `submit`: no run is created.
    let (status, err) = call_as(
        &server,
        &reader,
        Method::POST,
        "/v1/runs",
        Some(json!({"task": "create a.txt"})),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{err}");
    assert!(
        err["error"]
            .as_str()
            .unwrap_or_default()
            .contains("`submit`"),
        "{err}"
    );
    let (_, list) = call_as(&server, ADMIN, Method::GET, "/v1/runs", None).await;
    assert_eq!(list["runs"].as_array().map(Vec::len), Some(0), "{list}");

    // Without `approve`: its own run's approval and question are refused.
    let (status, body) = call_as(
        &server,
        &submitter,
        Method::POST,
        "/v1/runs",
        Some(json!({"task": "create a.txt"})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let run_id = body["run_id"].as_str().expect("run_id").to_string();
    let call_id = pending_call(&server, &submitter, &run_id).await;
    let approval = format!("/v1/runs/{run_id}/approvals/{call_id}");
    let (status, err) = call_as(
        &server,
        &submitter,
        Method::POST,
        &approval,
        Some(json!({"decision": "always"})),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{err}");
    assert!(
        err["error"]
            .as_str()
            .unwrap_or_default()
            .contains("`approve`"),
        "{err}"
    );
    let (status, _) = call_as(
        &server,
        &submitter,
        Method::POST,
        &format!("/v1/runs/{run_id}/reply"),
        Some(json!({"answer": "yes"})),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    // A reader that is not the owner does not see it either.
    let (status, _) = call_as(
        &server,
        &reader,
        Method::GET,
        &format!("/v1/runs/{run_id}"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // Admin decides it.
    let (status, body) = call_as(
        &server,
        ADMIN,
        Method::POST,
        &approval,
        Some(json!({"decision": "approve"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        status_as(&server, &submitter, &run_id, "completed").await,
        "completed"
    );
    // A revoked token is refused at once, without a restart.
    let out = pw.exec(&["token", "remove", "ci"], &[]).await;
    assert_eq!(out.status.code(), Some(0));
    let (status, _) = call_as(&server, &submitter, Method::GET, "/v1/runs", None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let out = pw.exec(&["token", "list"], &[]).await;
    let listed = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        listed.contains("reader") && !listed.contains("ci "),
        "{listed}"
    );
    assert!(!listed.contains(&reader), "never the token itself");
}

/// A JSON-RPC session on `/mcp` with one token.
struct McpSession<'a> {
    server: &'a Server,
    token: String,
    session: String,
    next_id: u64,
}

impl<'a> McpSession<'a> {
    async fn open(server: &'a Server, token: &str) -> McpSession<'a> {
        let res = client()
            .post(server.url("/mcp"))
            .bearer_auth(token)
            .header("accept", "application/json, text/event-stream")
            .json(&json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "t", "version": "1"}}
            }))
            .send()
            .await
            .expect("initialize");
        assert_eq!(res.status(), StatusCode::OK);
        let session = res
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .expect("session id")
            .to_string();
        let _ = res.text().await;
        let res = client()
            .post(server.url("/mcp"))
            .bearer_auth(token)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &session)
            .json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .send()
            .await
            .expect("initialized");
        assert!(res.status().is_success(), "{}", res.status());
        McpSession {
            server,
            token: token.to_string(),
            session,
            next_id: 1,
        }
    }

    /// Sends `method` with `params`; the JSON-RPC response to it.
    async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let res = client()
            .post(self.server.url("/mcp"))
            .bearer_auth(&self.token)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &self.session)
            .header("mcp-protocol-version", "2025-06-18")
            .json(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .send()
            .await
            .expect("request");
        assert_eq!(res.status(), StatusCode::OK, "{method}");
        let body = res.text().await.expect("body");
        body.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .chain(serde_json::from_str::<Value>(&body).ok())
            .find(|m| m["id"] == id)
            .unwrap_or_else(|| panic!("no response to {method}: {body}"))
    }

    /// `tools/call NAME ARGS`: (is it an error, its structured content or text).
    async fn tool(&mut self, name: &str, arguments: Value) -> (bool, Value) {
        let reply = self
            .request("tools/call", json!({"name": name, "arguments": arguments}))
            .await;
        let result = &reply["result"];
        let is_error = result["isError"].as_bool().unwrap_or(false);
        let content = if result["structuredContent"].is_null() {
            result["content"][0]["text"].clone()
        } else {
            result["structuredContent"].clone()
        };
        (is_error, content)
    }
}

/// The same rules over `/mcp`: tools and resources of another client's run are unknown; a
/// token without `submit` cannot start a run.
#[tokio::test]
async fn mcp_clients_see_only_their_own_runs() {
    let llm = ScriptedOpenAi::start(touch_script()).await;
    let pw = Planwright::new();
    let alice = add_token(&pw, "alice", "submit,read,approve").await;
    let bob = add_token(&pw, "bob", "submit,read,approve").await;
    let reader = add_token(&pw, "reader", "read").await;
    let server = pw.serve(&llm.base_url(), Some(ADMIN), &[]).await;

    let mut a = McpSession::open(&server, &alice).await;
    let (is_error, done) = a
        .tool("run_task", json!({"task": "create a.txt", "wait": true}))
        .await;
    assert!(!is_error, "{done}");
    let run_id = done["run_id"].as_str().expect("run_id").to_string();
    assert_eq!(done["status"], "completed", "{done}");
    let uri = format!("planwright://runs/{run_id}/files/a.txt");
    let read = a.request("resources/read", json!({"uri": uri})).await;
    assert_eq!(read["result"]["contents"][0]["text"], "hello\n", "{read}");
    // What the run changed, and undoing it (docs/checkpoints.md).
    let (is_error, diff) = a.tool("run_diff", json!({"run_id": run_id})).await;
    assert!(!is_error, "{diff}");
    assert_eq!(diff["files"][0]["path"], "a.txt", "{diff}");
    assert_eq!(diff["files"][0]["change"], "added", "{diff}");
    assert_eq!(diff["files"][0]["content"]["kind"], "text", "{diff}");
    let diff_uri = format!("planwright://runs/{run_id}/diff");
    let read = a.request("resources/read", json!({"uri": diff_uri})).await;
    let text = read["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_default();
    let as_resource: Value = serde_json::from_str(text).unwrap_or_default();
    assert_eq!(as_resource["files"], diff["files"], "{read}");
    let (is_error, step) = a
        .tool("run_diff", json!({"run_id": run_id, "step": 1}))
        .await;
    assert!(!is_error, "{step}");
    assert_eq!(
        step["files"], diff["files"],
        "the only step made every change"
    );
    assert_eq!(step["step"], 1, "numbered as the caller numbered it");
    for (args, why) in [
        (json!({"run_id": run_id, "step": 0}), "counts from 1"),
        (json!({"run_id": run_id, "step": 9}), "no such step"),
    ] {
        let (is_error, text) = a.tool("run_diff", args).await;
        assert!(is_error, "{text}");
        assert!(text.as_str().unwrap_or_default().contains(why), "{text}");
    }
    let file = pw.workspace(&run_id).join("a.txt");
    let (is_error, undone) = a.tool("undo_run", json!({"run_id": run_id})).await;
    assert!(!is_error, "{undone}");
    assert_eq!(undone["removed"], json!(["a.txt"]), "{undone}");
    assert!(!file.exists());
    let redo = json!({"run_id": run_id, "checkpoint": undone["undo_checkpoint"]});
    let (is_error, redone) = a.tool("undo_run", redo).await;
    assert!(!is_error, "{redone}");
    assert_eq!(
        std::fs::read_to_string(&file).ok().as_deref(),
        Some("hello\n")
    );

    let mut b = McpSession::open(&server, &bob).await;
    let (_, listed) = b.tool("list_runs", json!({})).await;
    assert_eq!(listed["runs"], json!([]), "{listed}");
    for (tool, args) in [
        ("get_run", json!({"run_id": run_id})),
        ("get_run", json!({"run_id": run_id, "wait": true})),
        ("cancel_run", json!({"run_id": run_id})),
        ("answer", json!({"run_id": run_id, "text": "yes"})),
        (
            "approve_call",
            json!({"run_id": run_id, "call_id": "call_1", "decision": "always"}),
        ),
        ("run_diff", json!({"run_id": run_id})),
        ("undo_run", json!({"run_id": run_id})),
    ] {
        let (is_error, text) = b.tool(tool, args).await;
        assert!(is_error, "{tool}: {text}");
        assert!(
            text.as_str()
                .unwrap_or_default()
                .contains(&format!("no run with id '{run_id}'")),
            "{tool}: {text}"
        );
    }
    let listed = b.request("resources/list", json!({})).await;
    assert_eq!(listed["result"]["resources"], json!([]), "{listed}");
    let refused = b.request("resources/read", json!({"uri": uri})).await;
    assert!(refused["error"].is_object(), "{refused}");
    let refused = b.request("resources/read", json!({"uri": diff_uri})).await;
    assert!(refused["error"].is_object(), "{refused}");
    assert!(refused["result"].is_null(), "{refused}");

    let mut r = McpSession::open(&server, &reader).await;
    let (is_error, text) = r.tool("run_task", json!({"task": "anything"})).await;
    assert!(is_error, "{text}");
    assert!(
        text.as_str().unwrap_or_default().contains("`submit`"),
        "{text}"
    );

    let mut admin = McpSession::open(&server, ADMIN).await;
    let (_, listed) = admin.tool("list_runs", json!({})).await;
    assert_eq!(listed["runs"][0]["run_id"], run_id.as_str(), "{listed}");
    assert_eq!(listed["runs"][0]["client"], "alice");
    let listed = admin.request("resources/list", json!({})).await;
    assert_eq!(
        listed["result"]["resources"][0]["uri"],
        uri.as_str(),
        "{listed}"
    );
}

/// Sessions one token keeps open on `/mcp` (`server/mcp/sessions.rs`, `PER_CLIENT`).
const MCP_SESSIONS_PER_CLIENT: usize = 16;

/// `method` on `/mcp` with `token`, in `session` (when given), with a JSON-RPC `body` (for
/// a POST): the status.
async fn mcp_status(
    server: &Server,
    token: &str,
    method: Method,
    session: Option<&str>,
    body: Option<Value>,
) -> StatusCode {
    let mut req = client()
        .request(method, server.url("/mcp"))
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18");
    if let Some(session) = session {
        req = req.header("mcp-session-id", session);
    }
    if let Some(body) = body {
        req = req.json(&body);
    }
    // The body is not read: a GET's event stream stays open.
    req.send().await.expect("/mcp request").status()
}

/// Issue 29 (red-team case 7, item 5): `/mcp` sessions are the token's that opened them. A
/// client opening more than its bound closes its own oldest sessions, never another
/// client's; a session id of another client is unknown (404) to every method, admin's
/// included; the owner keeps using it.
#[tokio::test]
async fn mcp_sessions_are_bounded_per_client_and_never_shared() {
    let llm = ScriptedOpenAi::start(Vec::new()).await;
    let pw = Planwright::new();
    let alice = add_token(&pw, "alice", "submit,read,approve").await;
    let bob = add_token(&pw, "bob", "submit,read,approve").await;
    let server = pw.serve(&llm.base_url(), Some(ADMIN), &[]).await;

    let mut b = McpSession::open(&server, &bob).await;
    let mut alices = Vec::new();
    for _ in 0..MCP_SESSIONS_PER_CLIENT + 4 {
        alices.push(McpSession::open(&server, &alice).await);
    }
    // Bob's session outlived alice's flood.
    let (is_error, listed) = b.tool("list_runs", json!({})).await;
    assert!(!is_error, "{listed}");
    // Alice's four oldest were closed; her newest ones work.
    let ping = json!({"jsonrpc": "2.0", "id": 99, "method": "ping"});
    for (i, a) in alices.iter().enumerate() {
        let status = mcp_status(
            &server,
            &alice,
            Method::POST,
            Some(&a.session),
            Some(ping.clone()),
        )
        .await;
        let want = if i < 4 {
            StatusCode::NOT_FOUND
        } else {
            StatusCode::OK
        };
        assert_eq!(status, want, "alice's session {i}");
    }

    // Bob's session id is unknown to alice and to admin, whatever the method.
    for token in [alice.as_str(), ADMIN] {
        for (method, body) in [
            (Method::POST, Some(ping.clone())),
            (
                Method::POST,
                Some(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                            "params": {"name": "list_runs", "arguments": {}}})),
            ),
            (Method::GET, None),
            (Method::DELETE, None),
        ] {
            let status = mcp_status(&server, token, method.clone(), Some(&b.session), body).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{method} with {token}");
        }
    }
    // ... and is still bob's.
    let (is_error, listed) = b.tool("list_runs", json!({})).await;
    assert!(!is_error, "{listed}");
    assert_eq!(
        mcp_status(&server, &bob, Method::DELETE, Some(&b.session), None).await,
        StatusCode::ACCEPTED,
        "bob closes his own session"
    );
    assert_eq!(
        mcp_status(&server, &bob, Method::POST, Some(&b.session), Some(ping)).await,
        StatusCode::NOT_FOUND,
        "a closed session"
    );
}

/// A run queued by a named client and executed by a `planwright worker` keeps its owner:
/// the worker's progress never rewrites it, and the client follows the run to its end.
#[tokio::test]
async fn a_run_a_worker_executes_keeps_its_client() {
    let (_llm, base) = append_once_llm().await;
    let pw = Planwright::new();
    let alice = add_token(&pw, "alice", "submit,read").await;
    let bob = add_token(&pw, "bob", "read").await;
    let server = pw.serve(&base, Some(ADMIN), &["--workers", "0"]).await;
    let (status, body) = call_as(
        &server,
        &alice,
        Method::POST,
        "/v1/runs",
        Some(json!({"task": "append"})),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "queued: {body}");
    let run_id = body["run_id"].as_str().expect("run_id").to_string();
    let _worker = worker(&pw, &base, &["--concurrency", "1"]);
    assert_eq!(
        status_as(&server, &alice, &run_id, "completed").await,
        "completed"
    );
    let (_, show) = call_as(
        &server,
        ADMIN,
        Method::GET,
        &format!("/v1/runs/{run_id}"),
        None,
    )
    .await;
    assert_eq!(show["client"], "alice", "{show}");
    let (status, _) = call_as(
        &server,
        &bob,
        Method::GET,
        &format!("/v1/runs/{run_id}"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_appended_once(&pw, &run_id);
}
