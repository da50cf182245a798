//! Helpers shared by the browser integration tests: the Chromium skip rule, a harness that
//! calls the tools like the executor does, and pages served on 127.0.0.1.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use adapter_tools_browser::{find_chromium, BrowserConfig, Browsers};
use domain::ports::{Tool, ToolContext, ToolOutput};
use domain::ToolError;
use serde_json::Value;
use tempfile::TempDir;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

/// The Chromium to test with. On a developer's machine without one the test is skipped
/// (returns `None`); with `CI=true` a missing Chromium fails the test.
pub fn chromium_or_skip() -> Option<PathBuf> {
    test_support::require_or_skip(
        find_chromium()
            .ok_or("Chromium was not found (apt-get install chromium, or set PLANWRIGHT_CHROMIUM)"),
    )
}

/// Settings for tests: short timeouts so failures are quick, and local pages allowed
/// (the test sites are served on 127.0.0.1).
pub fn test_config(chromium: PathBuf) -> BrowserConfig {
    BrowserConfig {
        chromium: Some(chromium),
        navigation_timeout: Duration::from_secs(10),
        action_timeout: Duration::from_secs(5),
        allow_local: true,
        ..BrowserConfig::default()
    }
}

/// A pool, its tools by name, and a workspace.
pub struct Harness {
    pub browsers: Browsers,
    pub tools: HashMap<String, Arc<dyn Tool>>,
    pub workspace: TempDir,
}

impl Harness {
    pub fn new(config: BrowserConfig) -> Harness {
        let browsers = Browsers::new(config);
        let tools = browsers
            .tools()
            .into_iter()
            .map(|t| (t.name().to_string(), t))
            .collect();
        Harness {
            browsers,
            tools,
            workspace: tempfile::tempdir().unwrap(),
        }
    }

    /// Starts a harness with [`test_config`], or `None` to skip.
    pub fn start() -> Option<Harness> {
        chromium_or_skip().map(|c| Harness::new(test_config(c)))
    }

    pub fn ctx(&self, run_id: &str) -> ToolContext {
        test_support::tool_context(self.workspace.path(), run_id)
    }

    /// Calls tool `name` in run `run`.
    pub async fn call_in(
        &self,
        run: &str,
        name: &str,
        args: Value,
    ) -> Result<ToolOutput, ToolError> {
        let tool = self
            .tools
            .get(name)
            .unwrap_or_else(|| panic!("no tool {name}"));
        tool.execute(args, &self.ctx(run)).await
    }

    /// Calls tool `name` in run `run_1`.
    pub async fn call(&self, name: &str, args: Value) -> Result<ToolOutput, ToolError> {
        self.call_in("run_1", name, args).await
    }

    /// Calls tool `name` and expects a successful output.
    pub async fn ok(&self, name: &str, args: Value) -> String {
        let out = self.call(name, args.clone()).await;
        match out {
            Ok(out) if !out.is_error => out.content,
            other => panic!("{name} {args} failed: {other:?}"),
        }
    }

    /// Calls tool `name` and expects an error output (is_error), returning its text.
    pub async fn error(&self, name: &str, args: Value) -> String {
        match self.call(name, args.clone()).await {
            Ok(out) if out.is_error => out.content,
            other => panic!("{name} {args} should have reported an error: {other:?}"),
        }
    }
}

/// The number of the element described by a line of the view containing `needle`.
pub fn index_of(view: &str, needle: &str) -> u32 {
    let line = view
        .lines()
        .find(|l| l.starts_with('[') && l.contains(needle))
        .unwrap_or_else(|| panic!("no element line with {needle:?} in:\n{view}"));
    line[1..line.find(']').unwrap()].parse().unwrap()
}

#[allow(unused_imports)] // not every test binary uses both
pub use test_support::{process_gone, wait_until};

fn html(body: impl Into<String>) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(body.into().into_bytes(), "text/html; charset=utf-8")
}

/// A site on 127.0.0.1 with the pages the tests use:
/// `/form` (name + colour + send, GET to `/submit`, which echoes them), `/links` → `/next`,
/// `/js` (text changes after a click, directly and after a slow fetch of `/data`),
/// `/huge` (about 5 MB of text between BEGIN and THEEND), `/long` (a tall page).
pub async fn site() -> MockServer {
    let server = MockServer::start().await;
    let pages: [(&str, String); 5] = [
        (
            "/form",
            r#"<!doctype html><html><head><title>Order form</title></head><body>
<h1>Order</h1>
<form action="/submit" method="get">
  <label for="name">Your name</label> <input id="name" name="name" type="text" placeholder="Ada Lovelace">
  <label for="color">Colour</label>
  <select id="color" name="color"><option value="r">red</option><option value="g">green</option><option value="b">blue</option></select>
  <input type="hidden" name="secret" value="s">
  <button type="submit">Send</button>
</form>
<p style="display:none">invisible text</p>
<script>var notShown = "script text";</script>
</body></html>"#
                .to_string(),
        ),
        (
            "/links",
            r#"<!doctype html><html><head><title>Links</title></head><body>
<p>Start here.</p><a href="/next">Next page</a> <a href="/next" target="_blank">Same in a new tab</a>
</body></html>"#
                .to_string(),
        ),
        (
            "/next",
            r#"<!doctype html><html><head><title>Second page</title></head><body><p>You made it.</p></body></html>"#
                .to_string(),
        ),
        (
            "/js",
            r#"<!doctype html><html><head><title>Dynamic</title></head><body>
<p id="msg">Waiting</p>
<button onclick="setTimeout(() => { document.getElementById('msg').textContent = 'Clicked!'; }, 100)">Go</button>
<div role="button" onclick="fetch('/data').then(r => r.text()).then(t => { document.getElementById('msg').textContent = t; })">Load</div>
<button onclick="alert('Saved!'); document.getElementById('msg').textContent = 'after the alert';">Alert</button>
</body></html>"#
                .to_string(),
        ),
        ("/long", {
            let mut s = String::from("<!doctype html><html><head><title>Long</title></head><body>");
            for i in 0..200 {
                s.push_str(&format!("<p style=\"height:40px\">Line {i}</p>"));
            }
            s.push_str("</body></html>");
            s
        }),
    ];
    for (p, body) in pages {
        Mock::given(method("GET"))
            .and(path(p))
            .respond_with(html(body))
            .mount(&server)
            .await;
    }
    Mock::given(method("GET"))
        .and(path("/submit"))
        .respond_with(|req: &Request| {
            let q: HashMap<String, String> = req.url.query_pairs().into_owned().collect();
            html(format!(
                "<!doctype html><html><head><title>Thanks</title></head><body>\
                 <p>Received name={} color={}</p></body></html>",
                q.get("name").cloned().unwrap_or_default(),
                q.get("color").cloned().unwrap_or_default()
            ))
        })
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/data"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_string("Loaded from the server")
                .set_delay(Duration::from_millis(600)),
        )
        .mount(&server)
        .await;
    let mut huge = String::with_capacity(5_300_000);
    huge.push_str("<!doctype html><html><head><title>Huge</title></head><body><p>BEGIN</p>");
    let para = "<p>".to_string() + &"lorem ipsum dolor sit amet ".repeat(40) + "</p>\n";
    while huge.len() < 5_000_000 {
        huge.push_str(&para);
    }
    huge.push_str("<p>THEEND</p><a href=\"/next\">after the text</a></body></html>");
    Mock::given(method("GET"))
        .and(path("/huge"))
        .respond_with(html(huge))
        .mount(&server)
        .await;
    server
}

/// A server that accepts connections and never answers; stops when dropped.
pub struct HungServer {
    pub url: String,
    task: JoinHandle<()>,
}

impl Drop for HungServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

pub async fn hung_server() -> HungServer {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/slow", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    HungServer { url, task }
}

/// An address on 127.0.0.1 where nothing listens.
pub async fn closed_port_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{addr}/")
}

pub fn is_png(path: &Path) -> bool {
    std::fs::read(path)
        .map(|b| b.starts_with(b"\x89PNG\r\n\x1a\n"))
        .unwrap_or(false)
}

/// Live (not zombie) processes of process group `pgid`: Chromium's helpers share its group.
pub fn group_members(pgid: u32) -> Vec<u32> {
    let mut live = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the command name: state, ppid, pgrp, ...
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.len() > 2 && fields[0] != "Z" && fields[2] == pgid.to_string() {
            live.push(pid);
        }
    }
    live
}
