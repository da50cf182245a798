//! One browser per run: started on first use, reused, separate per run, closed by
//! `close_run`/`close_all` or by dropping the pool, restarted once after a crash.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::PathBuf;
use std::time::Duration;

use adapter_tools_browser::{BrowserConfig, Browsers};
use common::{group_members, index_of, process_gone, site, wait_until, Harness};
use domain::ToolError;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::json;

const GONE: Duration = Duration::from_secs(5);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_browser_per_run_reused_and_closed_with_the_run() {
    let Some(h) = Harness::start() else { return };
    let site = site().await;
    assert_eq!(
        h.browsers.browser_pid("run_1").await,
        None,
        "started before first use"
    );

    let view = h
        .ok(
            "browser_navigate",
            json!({"url": format!("{}/form", site.uri())}),
        )
        .await;
    let pid_a = h.browsers.browser_pid("run_1").await.unwrap();
    let name = index_of(&view, "name=name");
    h.ok("browser_input", json!({"index": name, "text": "kept"}))
        .await;
    // A later call of the same run sees the same browser and the same page state.
    let view = h.ok("browser_view", json!({})).await;
    assert!(view.contains(r#"value="kept""#), "{view}");
    assert_eq!(h.browsers.browser_pid("run_1").await, Some(pid_a));

    // Another run gets its own browser.
    let other = h.call_in("run_2", "browser_view", json!({})).await.unwrap();
    assert!(other.content.contains("URL: about:blank"), "{other:?}");
    let pid_b = h.browsers.browser_pid("run_2").await.unwrap();
    assert_ne!(pid_a, pid_b);
    assert!(
        group_members(pid_a).len() > 1,
        "Chromium's helpers share its process group"
    );
    assert_eq!(h.browsers.open_runs().await, 2);

    h.browsers.close_run("run_1").await;
    assert!(process_gone(pid_a), "chromium {pid_a} outlived close_run");
    wait_until("chromium's helpers to die", GONE, || {
        group_members(pid_a).is_empty()
    })
    .await;
    assert_eq!(h.browsers.browser_pid("run_1").await, None);
    assert!(!process_gone(pid_b));
    h.call_in("run_2", "browser_view", json!({})).await.unwrap();

    h.browsers.close_all().await;
    assert!(process_gone(pid_b), "chromium {pid_b} outlived close_all");
    assert_eq!(h.browsers.open_runs().await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_pool_kills_the_browser() {
    let Some(h) = Harness::start() else { return };
    h.ok("browser_view", json!({})).await;
    let pid = h.browsers.browser_pid("run_1").await.unwrap();
    drop(h);
    wait_until("chromium to die with its pool", GONE, || process_gone(pid)).await;
    wait_until("chromium's helpers to die", GONE, || {
        group_members(pid).is_empty()
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_browser_is_restarted_once_with_a_note() {
    let Some(h) = Harness::start() else { return };
    let site = site().await;
    let form = format!("{}/form", site.uri());
    h.ok("browser_navigate", json!({"url": form})).await;
    let pid = h.browsers.browser_pid("run_1").await.unwrap();

    kill(Pid::from_raw(i32::try_from(pid).unwrap()), Signal::SIGKILL).unwrap();
    wait_until("chromium to die", GONE, || process_gone(pid)).await;

    let out = h.call("browser_view", json!({})).await.unwrap();
    assert!(!out.is_error, "{out:?}");
    assert!(
        out.content.starts_with(&format!(
            "Note: the browser had crashed and was restarted; the page state was lost (it was \
             showing {form}; call browser_navigate to go back)."
        )),
        "{}",
        out.content
    );
    assert!(out.content.contains("URL: about:blank"), "{}", out.content);
    let new_pid = h.browsers.browser_pid("run_1").await.unwrap();
    assert_ne!(new_pid, pid);
    // The restarted browser works normally, without the note.
    let view = h.ok("browser_navigate", json!({"url": form})).await;
    assert!(view.starts_with("Title: Order form"), "{view}");

    // A crash in the middle of a call (the connection drops) is handled the same way.
    kill(
        Pid::from_raw(i32::try_from(new_pid).unwrap()),
        Signal::SIGKILL,
    )
    .unwrap();
    let out = h.ok("browser_navigate", json!({"url": form})).await;
    assert!(
        out.starts_with("Note: the browser had crashed and was restarted"),
        "{out}"
    );
    assert!(out.contains("Title: Order form"), "{out}");
}

#[tokio::test]
async fn without_chromium_the_tools_say_why_and_start_nothing() {
    let browsers = Browsers::new(BrowserConfig {
        chromium: Some(PathBuf::from("/nonexistent/chromium")),
        ..BrowserConfig::default()
    });
    assert!(browsers.is_available().is_err());
    let tools = browsers.tools();
    let ctx = domain::ports::ToolContext {
        run_id: "r".into(),
        step_id: None,
        workspace: std::env::temp_dir(),
        cancel: tokio_util::sync::CancellationToken::new(),
    };
    let err = tools[0]
        .execute(json!({"url": "http://127.0.0.1:1/"}), &ctx)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ToolError::Failed(m) if m.contains("not available") && m.contains("/nonexistent/chromium")),
        "{err:?}"
    );
    assert_eq!(browsers.open_runs().await, 0);
}

/// Chromium speaks over a pipe and prints no "DevTools listening" line any more; a browser
/// that dies at start must still be reported at once, with what it said.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_that_dies_at_start_is_reported_with_its_stderr() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("chromium");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho 'cannot open display: nowhere' >&2\nexit 3\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let browsers = Browsers::new(BrowserConfig {
        chromium: Some(fake),
        launch_timeout: Duration::from_secs(20),
        ..BrowserConfig::default()
    });
    let ctx = domain::ports::ToolContext {
        run_id: "r".into(),
        step_id: None,
        workspace: std::env::temp_dir(),
        cancel: tokio_util::sync::CancellationToken::new(),
    };
    let started = std::time::Instant::now();
    let err = browsers.tools()[0]
        .execute(json!({"url": "http://127.0.0.1:1/"}), &ctx)
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(
        matches!(&err, ToolError::Failed(m) if m.contains("not available") && m.contains("cannot open display")),
        "{err:?}"
    );
    assert_eq!(browsers.open_runs().await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_run_stops_waiting() {
    let Some(h) = Harness::start() else { return };
    let hung = common::hung_server().await;
    h.ok("browser_view", json!({})).await;
    let ctx = h.ctx("run_1");
    let cancel = ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel();
    });
    let started = std::time::Instant::now();
    let tool = h.tools.get("browser_navigate").unwrap();
    let err = tool
        .execute(json!({"url": hung.url}), &ctx)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ToolError::Failed(m) if m.contains("cancelled")),
        "{err:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(3));
    // The browser is still there for the next call.
    h.ok("browser_view", json!({})).await;
}
