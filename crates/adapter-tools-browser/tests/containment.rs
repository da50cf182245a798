//! The browser inside the sandbox (docs/security.md, "The browser"), against real headless
//! Chromium: its DevTools endpoint listens on no port (so a command sharing the host's
//! network, as `--sandbox-network` does, finds nothing to scan for), and without
//! `allow_local` it refuses loopback, private, link-local and unspecified addresses, by
//! name or number, in navigations, redirects and scripts alike, and `file:` pages.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashSet;

use common::*;
use domain::ToolError;
use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A harness whose browser refuses local addresses (the default policy).
fn strict() -> Option<Harness> {
    chromium_or_skip().map(|c| {
        Harness::new(adapter_tools_browser::BrowserConfig {
            allow_local: false,
            ..test_config(c)
        })
    })
}

/// A local server that counts what reaches it.
async fn counting_server() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw("<title>Local</title><p>local secret</p>", "text/html"),
        )
        .mount(&server)
        .await;
    server
}

/// The inodes of the TCP sockets in LISTEN state (this network namespace).
fn listening_inodes() -> HashSet<String> {
    let mut inodes = HashSet::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let cols: Vec<&str> = line.split_whitespace().collect();
            if cols.len() > 9 && cols[3] == "0A" {
                inodes.insert(cols[9].to_string());
            }
        }
    }
    inodes
}

/// The socket inodes process `pid` holds open.
fn socket_inodes(pid: u32) -> Vec<String> {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    fds.flatten()
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .filter_map(|target| {
            let t = target.to_string_lossy().into_owned();
            t.strip_prefix("socket:[")
                .and_then(|r| r.strip_suffix(']'))
                .map(str::to_string)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chromium_listens_on_no_tcp_port() {
    let Some(h) = Harness::start() else { return };
    let site = site().await;
    let view = h
        .ok(
            "browser_navigate",
            json!({"url": format!("{}/next", site.uri())}),
        )
        .await;
    assert!(view.contains("You made it."), "{view}");
    let pid = h.browsers.browser_pid("run_1").await.unwrap();
    let members = group_members(pid);
    assert!(members.contains(&pid), "{members:?}");
    let listening = listening_inodes();
    for member in &members {
        let open: Vec<String> = socket_inodes(*member)
            .into_iter()
            .filter(|i| listening.contains(i))
            .collect();
        assert!(
            open.is_empty(),
            "Chromium process {member} listens on TCP (socket inodes {open:?}): a command \
             sharing the host's network could reach its DevTools"
        );
    }
    // The browser still works after the check (the pipe carries everything).
    let view = h.ok("browser_view", json!({})).await;
    assert!(view.contains("Title: Second page"), "{view}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loopback_by_number_and_by_name_is_refused_before_any_request() {
    let Some(h) = strict() else { return };
    let server = counting_server().await;
    let port = server.address().port();
    for url in [
        format!("http://127.0.0.1:{port}/"),
        format!("http://localhost:{port}/"),
        format!("http://[::1]:{port}/"),
        format!("http://127.1:{port}/"),
        format!("http://2130706433:{port}/"),
    ] {
        let err = h.error("browser_navigate", json!({"url": url})).await;
        assert!(err.contains("loopback"), "{url}: {err}");
        assert!(err.contains("--browser-allow-local"), "{url}: {err}");
    }
    let err = h
        .error(
            "browser_navigate",
            json!({"url": format!("http://localhost:{port}/")}),
        )
        .await;
    assert!(err.contains("localhost (it resolves to"), "{err}");
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn private_link_local_metadata_and_unspecified_addresses_are_refused() {
    let Some(h) = strict() else { return };
    for (url, class) in [
        ("http://10.255.255.1/", "private-network"),
        ("http://192.168.0.1/", "private-network"),
        ("http://172.16.0.1/", "private-network"),
        ("http://[fd00::1]/", "private-network"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://[fe80::1]/", "link-local"),
        ("http://0.0.0.0/", "unspecified"),
    ] {
        let err = h.error("browser_navigate", json!({"url": url})).await;
        assert!(err.contains(class), "{url}: {err}");
    }
    // The browser is still usable.
    let view = h.ok("browser_view", json!({})).await;
    assert!(view.contains("URL:"), "{view}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scripts_cannot_reach_local_addresses_or_open_files() {
    let Some(h) = strict() else { return };
    let server = counting_server().await;
    let port = server.address().port();
    let out = h
        .call(
            "browser_console_exec",
            json!({"js": format!(
                "let got; try {{ got = 'reached ' + (await fetch('http://127.0.0.1:{port}/')).status }} \
                 catch (e) {{ got = 'blocked' }} got"
            )}),
        )
        .await
        .unwrap();
    assert!(out.content.contains("blocked"), "{}", out.content);
    assert!(
        out.content
            .contains("the page tried to reach addresses the browser refuses"),
        "{}",
        out.content
    );
    assert!(out.content.contains("--browser-allow-local"), "{}", out.content);
    assert!(server.received_requests().await.unwrap().is_empty());

    // file: stays out of reach: refused by the tool, and a script cannot go there either.
    let refused = h
        .call("browser_navigate", json!({"url": "file:///etc/hostname"}))
        .await;
    assert!(
        matches!(&refused, Err(ToolError::Refused(m)) if m.contains("http")),
        "{refused:?}"
    );
    let _ = h
        .call(
            "browser_console_exec",
            json!({"js": "location.href = 'file:///etc/hostname'; 'asked'"}),
        )
        .await
        .unwrap();
    let view = h.ok("browser_view", json!({})).await;
    assert!(!view.contains("URL: file:"), "{view}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_pages_open_with_the_switch_but_metadata_stays_refused() {
    let Some(h) = Harness::start() else { return };
    let server = counting_server().await;
    Mock::given(path("/to-metadata"))
        .respond_with(
            ResponseTemplate::new(302)
                .insert_header("location", "http://169.254.169.254/latest/meta-data/"),
        )
        .with_priority(1)
        .mount(&server)
        .await;
    let view = h
        .ok(
            "browser_navigate",
            json!({"url": format!("{}/page", server.uri())}),
        )
        .await;
    assert!(view.contains("local secret"), "{view}");
    // A redirect is checked like a navigation.
    let err = h
        .error(
            "browser_navigate",
            json!({"url": format!("{}/to-metadata", server.uri())}),
        )
        .await;
    assert!(err.contains("link-local"), "{err}");
    assert!(err.contains("even with --browser-allow-local"), "{err}");
}
