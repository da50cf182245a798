//! `McpToolbox` over streamable HTTP, against the "everything" reference server from npm.

mod support;

use std::process::Stdio;

use adapter_mcp::{McpServerConfig, McpToolbox, ServerState, StartError};
use domain::ports::Toolbox;
use serde_json::json;
use support::{bin, ctx, servers_or_skip};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// The everything server listening on a free port; returns it with its `/mcp` URL.
async fn http_server(dir: &std::path::Path) -> (Child, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let mut child = Command::new(bin(dir, "mcp-server-everything"))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("everything server");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = BufReader::new(stderr).lines();
    loop {
        let line = lines.next_line().await.expect("stderr line");
        let line = line.expect("the server exited before listening");
        if line.contains("listening on port") {
            break;
        }
    }
    // Keep draining stderr so the server never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, format!("http://127.0.0.1:{port}/mcp"))
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_over_streamable_http() {
    let Some(dir) = servers_or_skip() else { return };
    let (_server, url) = http_server(dir).await;
    let toolbox = McpToolbox::new([("web".to_owned(), McpServerConfig::http(url))])
        .expect("valid declaration");
    toolbox.start().await;
    assert!(
        matches!(
            &toolbox.status().await[0].state,
            ServerState::Started { pid: None, .. }
        ),
        "{:?}",
        toolbox.status().await
    );
    assert!(toolbox.schemas().iter().any(|s| s.name == "mcp__web__echo"));
    let echo = toolbox
        .call("mcp__web__echo", json!({"message": "over http"}), &ctx(dir))
        .await
        .expect("echo");
    assert!(echo.content.contains("over http"), "{echo:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_bearer_token_fails_the_server() {
    let mut config = McpServerConfig::http("http://127.0.0.1:9/mcp");
    config.bearer_token_env = Some("PLANWRIGHT_TEST_TOKEN_NEVER_SET".into());
    let toolbox = McpToolbox::new([("web".to_owned(), config)]).expect("valid declaration");
    toolbox.start().await;
    assert_eq!(
        toolbox.status().await[0].state,
        ServerState::Failed {
            error: StartError::MissingToken {
                var: "PLANWRIGHT_TEST_TOKEN_NEVER_SET".into()
            },
            restarts: 0
        }
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unreachable_url_fails_the_server() {
    let mut config = McpServerConfig::http("http://127.0.0.1:9/mcp");
    config.startup_timeout_secs = 5;
    let toolbox = McpToolbox::new([("web".to_owned(), config)]).expect("valid declaration");
    toolbox.start().await;
    let status = toolbox.status().await;
    assert!(
        matches!(&status[0].state, ServerState::Failed { .. }),
        "{status:?}"
    );
    assert!(toolbox.schemas().is_empty());
}

/// A streamable-HTTP MCP server answering in plain JSON (no SSE stream): `initialize`,
/// `tools/list` (one tool, `echo`) and `tools/call`; notifications get 202, a GET 405.
struct JsonMcpServer;

impl wiremock::Respond for JsonMcpServer {
    fn respond(&self, request: &wiremock::Request) -> wiremock::ResponseTemplate {
        if request.method != wiremock::http::Method::POST {
            return wiremock::ResponseTemplate::new(405);
        }
        let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap_or_default();
        let Some(id) = body.get("id").cloned() else {
            return wiremock::ResponseTemplate::new(202);
        };
        let result = match body["method"].as_str() {
            Some("initialize") => json!({
                "protocolVersion": body["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "json", "version": "1"},
            }),
            Some("tools/list") => json!({"tools": [{
                "name": "echo", "description": "Echo", "inputSchema": {"type": "object"},
            }]}),
            Some("tools/call") => json!({"content": [{"type": "text", "text": "ok"}]}),
            _ => json!({}),
        };
        wiremock::ResponseTemplate::new(200)
            .set_body_json(json!({"jsonrpc": "2.0", "id": id, "result": result}))
    }
}

const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/// A tool call's trace context (what the runner's telemetry gives when traces are
/// exported) goes in the request's `_meta` and, over HTTP, in its `traceparent` and
/// `tracestate` headers; other requests carry neither.
#[tokio::test(flavor = "multi_thread")]
async fn a_tool_call_over_http_carries_its_trace_context_as_headers() {
    http_client::set_trace_header_source(|| {
        vec![
            ("traceparent", TRACEPARENT.to_owned()),
            ("tracestate", "vendor=1".to_owned()),
        ]
    });
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::path("/mcp"))
        .respond_with(JsonMcpServer)
        .mount(&server)
        .await;
    let toolbox = McpToolbox::new([(
        "json".to_owned(),
        McpServerConfig::http(format!("{}/mcp", server.uri())),
    )])
    .expect("valid declaration");
    toolbox.start().await;
    let workspace = tempfile::tempdir().expect("workspace");
    let out = toolbox
        .call(
            "mcp__json__echo",
            json!({}),
            &support::ctx(workspace.path()),
        )
        .await
        .expect("echo");
    assert_eq!(out.content, "ok");

    let requests = server.received_requests().await.expect("recorded");
    let method = |r: &wiremock::Request| {
        serde_json::from_slice::<serde_json::Value>(&r.body).unwrap_or_default()["method"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let call = requests
        .iter()
        .find(|r| method(r) == "tools/call")
        .expect("a tools/call request");
    assert_eq!(
        call.headers.get("traceparent").map(|v| v.as_bytes()),
        Some(TRACEPARENT.as_bytes())
    );
    assert_eq!(
        call.headers.get("tracestate").map(|v| v.as_bytes()),
        Some(&b"vendor=1"[..])
    );
    let body: serde_json::Value = serde_json::from_slice(&call.body).expect("JSON");
    assert_eq!(body["params"]["_meta"]["traceparent"], TRACEPARENT);
    for other in requests.iter().filter(|r| method(r) != "tools/call") {
        assert!(
            other.headers.get("traceparent").is_none(),
            "{}",
            method(other)
        );
    }
}
