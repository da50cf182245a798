//! The browser inside the sandbox (docs/security.md, "The browser"), against real headless
//! Chromium: its DevTools endpoint listens on no port (so a command sharing the host's
//! network, as `--sandbox-network` does, finds nothing to scan for), and without
//! `allow_local` it refuses loopback, private, link-local and unspecified addresses, by
//! name or number, in navigations, redirects and scripts alike, and `file:` pages.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::{HashMap, HashSet};

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
    listening_ports().into_keys().collect()
}

/// The TCP sockets in LISTEN state on IPv4 (this network namespace): inode → port.
fn listening_ports() -> HashMap<String, u16> {
    let mut ports = HashMap::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let cols: Vec<&str> = line.split_whitespace().collect();
            if cols.len() > 9 && cols[3] == "0A" {
                let port = cols[1]
                    .rsplit_once(':')
                    .and_then(|(_, p)| u16::from_str_radix(p, 16).ok())
                    .unwrap_or(0);
                ports.insert(cols[9].to_string(), port);
            }
        }
    }
    ports
}

/// Whether bubblewrap works here; skips the test on a laptop without it, fails under CI.
fn bwrap_or_skip() -> bool {
    let ok = std::process::Command::new("bwrap")
        .args(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"])
        .args([
            "--unshare-pid",
            "--unshare-ipc",
            "--cap-drop",
            "ALL",
            "--",
            "true",
        ])
        .status()
        .is_ok_and(|s| s.success());
    test_support::skip_unless(ok, "bubblewrap does not work here")
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

/// What `--sandbox-network` gives a command: bubblewrap's namespaces but the host's network.
/// From there it probes every port this test's processes listen on (its own servers, the
/// browser's address guard, Chromium and its children) for a DevTools endpoint; a fake one
/// shows the probe would find it. Ports of other processes on the machine are not touched.
/// The probe ignores SIGPIPE: a port that closes before the request is written (the address
/// guard does) must end that port's check, not the whole scan.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_sharing_the_network_finds_no_devtools_endpoint() {
    let Some(h) = Harness::start() else { return };
    if !bwrap_or_skip() {
        return;
    }
    let fake = MockServer::start().await;
    Mock::given(path("/json/version"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"webSocketDebuggerUrl": "ws://127.0.0.1:1/devtools/browser/fake"}),
        ))
        .mount(&fake)
        .await;
    let site = site().await;
    h.ok(
        "browser_navigate",
        json!({"url": format!("{}/next", site.uri())}),
    )
    .await;
    let chromium = h.browsers.browser_pid("run_1").await.unwrap();
    let mut ours: Vec<u32> = group_members(chromium);
    ours.push(std::process::id());
    let listening = listening_ports();
    let mut ports: Vec<u16> = ours
        .iter()
        .flat_map(|pid| socket_inodes(*pid))
        .filter_map(|inode| listening.get(&inode).copied())
        .collect();
    ports.sort_unstable();
    ports.dedup();
    assert!(ports.contains(&fake.address().port()), "{ports:?}");
    let list: Vec<String> = ports.iter().map(u16::to_string).collect();
    let probe = format!(
        "trap '' PIPE; for p in {}; do \
           if exec 3<>/dev/tcp/127.0.0.1/$p; then \
             printf 'GET /json/version HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nConnection: close\\r\\n\\r\\n' >&3; \
             if timeout 2 cat <&3 | grep -q webSocketDebuggerUrl; then echo devtools:$p; fi; \
             exec 3<&-; \
           fi 2>/dev/null; \
         done; echo scanned",
        list.join(" ")
    );
    let out = tokio::process::Command::new("bwrap")
        .args([
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--tmpfs",
            "/tmp",
        ])
        .args([
            "--unshare-pid",
            "--unshare-ipc",
            "--die-with-parent",
            "--cap-drop",
            "ALL",
        ])
        .args(["--", "bash", "-c", &probe])
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("scanned"),
        "status {:?} stdout {stdout} stderr {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let found: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("devtools:"))
        .collect();
    assert_eq!(
        found,
        [fake.address().port().to_string()],
        "a sandboxed command with the host's network reached a DevTools endpoint \
         (ports probed: {ports:?})"
    );
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

/// The address this machine would send from to a public address (no packet is sent): one
/// of its interfaces' own, not loopback. `None` on a machine without a route out.
fn this_machines_outward_address() -> Option<std::net::IpAddr> {
    let socket = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    socket.connect("203.0.113.1:9").ok()?;
    let ip = socket.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

/// A minimal HTTP server on `ip` (port chosen by the system) that counts its connections.
async fn page_on(ip: std::net::IpAddr) -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind((ip, 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = std::sync::Arc::new(AtomicUsize::new(0));
    let counted = hits.clone();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut buf = [0u8; 2048];
                let _ = stream.read(&mut buf).await;
                let body = "<title>Own</title><p>this machine's page</p>";
                let reply = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\n\
                     connection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(reply.as_bytes()).await;
            });
        }
    });
    (port, hits)
}

/// Issue 41, Medium 9: a page served on this machine's own non-loopback address (what
/// `serve --addr 0.0.0.0` answers on) is this machine: refused, by navigation and by a
/// page's `fetch`, before any request, unless the run allows local pages. Skipped on a
/// laptop without a route out, never under CI.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn this_machines_own_addresses_are_refused_unless_allowed() {
    let Some(ip) = test_support::require_or_skip(
        this_machines_outward_address().ok_or("this machine has no non-loopback address"),
    ) else {
        return;
    };
    let Some(h) = strict() else { return };
    let (port, hits) = page_on(ip).await;
    let host = match ip {
        std::net::IpAddr::V6(v6) => format!("[{v6}]"),
        v4 => v4.to_string(),
    };
    let url = format!("http://{host}:{port}/");
    let err = h.error("browser_navigate", json!({"url": url})).await;
    assert!(
        err.contains("address of this machine") || err.contains("private-network"),
        "{url}: {err}"
    );
    assert!(err.contains("--browser-allow-local"), "{err}");
    let out = h
        .call(
            "browser_console_exec",
            json!({"js": format!(
                "let got; try {{ got = 'reached ' + (await fetch('{url}')).status }} \
                 catch (e) {{ got = 'blocked' }} got"
            )}),
        )
        .await
        .unwrap();
    assert!(out.content.contains("blocked"), "{}", out.content);
    assert_eq!(
        hits.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "no request reached it"
    );

    // The page is there: with local pages allowed it opens.
    let open = Harness::start().unwrap();
    let view = open.ok("browser_navigate", json!({"url": url})).await;
    assert!(view.contains("this machine's page"), "{view}");
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
    assert!(
        out.content.contains("--browser-allow-local"),
        "{}",
        out.content
    );
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
