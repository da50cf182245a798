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
