//! The browser tools against real headless Chromium and pages served on 127.0.0.1.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::{Duration, Instant};

use adapter_tools_browser::{BrowserConfig, TEXT_CUT_MARKER};
use common::{closed_port_url, hung_server, index_of, is_png, site, test_config, Harness};
use domain::ToolError;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fill_a_form_select_an_option_and_submit_it() {
    let Some(h) = Harness::start() else { return };
    let site = site().await;
    let view = h
        .ok(
            "browser_navigate",
            json!({"url": format!("{}/form", site.uri())}),
        )
        .await;
    assert!(
        view.starts_with("Title: Order form\nURL: http://127.0.0.1:"),
        "{view}"
    );
    assert!(view.contains("Order"), "{view}");
    assert!(
        !view.contains("invisible text"),
        "hidden text shown:\n{view}"
    );
    assert!(!view.contains("script text"), "script shown:\n{view}");
    assert!(!view.contains("secret"), "hidden input listed:\n{view}");
    assert!(
        view.contains(
            r#"<input type=text name=name placeholder="Ada Lovelace"> label="Your name" value="""#
        ),
        "{view}"
    );
    assert!(
        view.contains(
            "<select name=color> label=\"Colour\" options: red, green, blue (selected: red)"
        ),
        "{view}"
    );
    let name = index_of(&view, "name=name");
    let color = index_of(&view, "<select");
    let send = index_of(&view, "<button");

    let out = h
        .ok("browser_input", json!({"index": name, "text": "Ada"}))
        .await;
    assert!(out.contains(r#"its value is now "Ada""#), "{out}");
    let out = h
        .ok(
            "browser_select_option",
            json!({"index": color, "option": "green"}),
        )
        .await;
    assert!(out.contains(r#"Selected "green" (value "g")"#), "{out}");
    let bad = h
        .error(
            "browser_select_option",
            json!({"index": color, "option": "purple"}),
        )
        .await;
    assert!(
        bad.contains("no option \"purple\"") && bad.contains("red, green, blue"),
        "{bad}"
    );

    let view = h.ok("browser_click", json!({"index": send})).await;
    assert!(view.contains("Title: Thanks"), "{view}");
    assert!(view.contains("Received name=Ada color=g"), "{view}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typing_with_enter_submits_and_keys_can_be_pressed() {
    let Some(h) = Harness::start() else { return };
    let site = site().await;
    let view = h
        .ok(
            "browser_navigate",
            json!({"url": format!("{}/form", site.uri())}),
        )
        .await;
    let name = index_of(&view, "name=name");
    // Focus the field by clicking it, then type one key.
    h.ok("browser_click", json!({"index": name})).await;
    let out = h.ok("browser_press_key", json!({"key": "x"})).await;
    assert!(out.contains("Pressed x on [0] <input name=name>"), "{out}");
    let out = h
        .error("browser_press_key", json!({"key": "NoSuchKey"}))
        .await;
    assert!(out.contains("unknown key"), "{out}");
    let out = h
        .ok(
            "browser_input",
            json!({"index": name, "text": "Grace Hopper", "press_enter": true}),
        )
        .await;
    assert!(out.contains("Pressed Enter."), "{out}");
    assert!(out.contains("Title: Thanks"), "{out}");
    assert!(out.contains("Received name=Grace Hopper color=r"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn follow_a_link() {
    let Some(h) = Harness::start() else { return };
    let site = site().await;
    let view = h
        .ok(
            "browser_navigate",
            json!({"url": format!("{}/links", site.uri())}),
        )
        .await;
    assert!(view.contains("<a href=/next> Next page"), "{view}");
    let link = index_of(&view, "Next page");
    let view = h.ok("browser_click", json!({"index": link})).await;
    assert!(view.contains("Title: Second page"), "{view}");
    assert!(view.contains("You made it."), "{view}");

    // A target=_blank link opens in the same tab, where the tools can see it.
    h.ok(
        "browser_navigate",
        json!({"url": format!("{}/links", site.uri())}),
    )
    .await;
    let view = h.ok("browser_view", json!({})).await;
    let blank = index_of(&view, "Same in a new tab");
    let view = h.ok("browser_click", json!({"index": blank})).await;
    assert!(view.contains("Title: Second page"), "{view}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_click_that_changes_the_page_shows_the_change() {
    let Some(h) = Harness::start() else { return };
    let site = site().await;
    let view = h
        .ok(
            "browser_navigate",
            json!({"url": format!("{}/js", site.uri())}),
        )
        .await;
    assert!(view.contains("Waiting"), "{view}");
    let go = index_of(&view, "<button> Go");
    let view = h.ok("browser_click", json!({"index": go})).await;
    assert!(view.contains("Clicked!"), "{view}");
    // The result of a slow fetch (600 ms) is waited for, not a fixed sleep.
    let load = index_of(&view, "role=button");
    let started = Instant::now();
    let view = h.ok("browser_click", json!({"index": load})).await;
    assert!(view.contains("Loaded from the server"), "{view}");
    assert!(started.elapsed() < Duration::from_secs(4));
    // A JavaScript dialog does not block the page; the model is told what it said.
    let alert = index_of(&view, "<button> Alert");
    let out = h.ok("browser_click", json!({"index": alert})).await;
    assert!(
        out.starts_with(
            "The page opened dialogs, which were accepted automatically: alert \"Saved!\""
        ),
        "{out}"
    );
    assert!(out.contains("after the alert"), "{out}");
    // Clicking a point works too.
    let out = h.ok("browser_click", json!({"x": 5, "y": 5})).await;
    assert!(out.starts_with("Clicked at (5, 5)."), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn console_exec_returns_values_and_exceptions() {
    let Some(h) = Harness::start() else { return };
    let site = site().await;
    h.ok(
        "browser_navigate",
        json!({"url": format!("{}/form", site.uri())}),
    )
    .await;
    assert_eq!(
        h.ok("browser_console_exec", json!({"js": "document.title"}))
            .await,
        "\"Order form\""
    );
    assert_eq!(
        h.ok("browser_console_exec", json!({"js": "6 * 7"})).await,
        "42"
    );
    assert_eq!(
        h.ok(
            "browser_console_exec",
            json!({"js": "({a: 1, b: [true, null]})"})
        )
        .await,
        r#"{"a":1,"b":[true,null]}"#
    );
    assert_eq!(
        h.ok("browser_console_exec", json!({"js": "let x = 2; x + 1"}))
            .await,
        "3"
    );
    assert_eq!(
        h.ok(
            "browser_console_exec",
            json!({"js": "await new Promise(r => setTimeout(() => r('late'), 50))"})
        )
        .await,
        "\"late\""
    );
    assert_eq!(
        h.ok("browser_console_exec", json!({"js": "undefined"}))
            .await,
        "undefined"
    );
    let node = h
        .ok(
            "browser_console_exec",
            json!({"js": "document.querySelector('h1')"}),
        )
        .await;
    assert!(node.contains("<h1>Order</h1>"), "{node}");
    let err = h
        .error(
            "browser_console_exec",
            json!({"js": "throw new Error('boom')"}),
        )
        .await;
    assert!(err.contains("The script threw: Error: boom"), "{err}");
    let err = h
        .error("browser_console_exec", json!({"js": "nope.x"}))
        .await;
    assert!(err.contains("ReferenceError: nope is not defined"), "{err}");
    let big = h
        .ok("browser_console_exec", json!({"js": "'y'.repeat(100000)"}))
        .await;
    assert!(
        big.len() < 13_000 && big.contains("[… cut"),
        "{}",
        big.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn screenshots_are_png_files_in_the_workspace() {
    let Some(h) = Harness::start() else { return };
    let site = site().await;
    h.ok(
        "browser_navigate",
        json!({"url": format!("{}/long", site.uri())}),
    )
    .await;
    let out = h.call("browser_screenshot", json!({})).await.unwrap();
    assert!(!out.is_error, "{out:?}");
    assert_eq!(out.attachments, ["screenshots/1.png"]);
    let first = h.workspace.path().join("screenshots/1.png");
    assert!(is_png(&first), "{out:?}");
    let out = h
        .call("browser_screenshot", json!({"full_page": true}))
        .await
        .unwrap();
    assert_eq!(out.attachments, ["screenshots/2.png"]);
    let second = h.workspace.path().join("screenshots/2.png");
    assert!(is_png(&second));
    assert!(out.content.contains("full-page"), "{out:?}");
    // The whole page (200 × 40 px) is taller than the window: a bigger image.
    assert!(std::fs::metadata(&second).unwrap().len() > std::fs::metadata(&first).unwrap().len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_element_is_a_clear_error_and_the_page_still_works() {
    let Some(h) = Harness::start() else { return };
    let site = site().await;
    let view = h
        .ok(
            "browser_navigate",
            json!({"url": format!("{}/links", site.uri())}),
        )
        .await;
    let err = h.error("browser_click", json!({"index": 7})).await;
    assert_eq!(
        err,
        "no element [7] on the page; call browser_view to refresh the element list"
    );
    let err = h
        .error("browser_input", json!({"index": 99, "text": "x"}))
        .await;
    assert!(err.starts_with("no element [99] on the page"), "{err}");
    let err = h
        .error("browser_input", json!({"index": 0, "text": "x"}))
        .await;
    assert!(err.contains("not a text field"), "{err}");
    let bad = h.call("browser_click", json!({"index": "two"})).await;
    assert!(
        matches!(&bad, Err(ToolError::InvalidArguments(m))
            if m == "browser_click: `index` must be a whole number between 0 and 399, got \"two\""),
        "{bad:?}"
    );
    // Absurd numbers are refused before the browser is asked; it stays usable.
    for (tool, args, message) in [
        (
            "browser_click",
            json!({"index": 3_000_000_000_000_000_u64}),
            "browser_click: `index` must be a whole number between 0 and 399, got 3000000000000000",
        ),
        (
            "browser_select_option",
            json!({"index": -1, "option": "a"}),
            "browser_select_option: `index` must be a whole number between 0 and 399, got -1",
        ),
        (
            "browser_click",
            json!({"x": 5, "y": 5000}),
            "browser_click: `y` must be a number between 0 and 800, got 5000",
        ),
        (
            "browser_navigate",
            json!({"url": ""}),
            "browser_navigate: `url` must not be empty",
        ),
    ] {
        let bad = h.call(tool, args.clone()).await;
        assert!(
            matches!(&bad, Err(ToolError::InvalidArguments(m)) if m == message),
            "{args}: {bad:?}"
        );
    }
    assert!(h.ok("browser_view", json!({})).await.contains("Next page"));
    // Numbers of a page that is gone are stale.
    let link = index_of(&view, "Next page");
    h.ok("browser_click", json!({"index": link})).await;
    let err = h.error("browser_click", json!({"index": 1})).await;
    assert!(err.starts_with("no element [1]"), "{err}");
    let view = h.ok("browser_view", json!({})).await;
    assert!(view.contains("Title: Second page"), "{view}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_port_is_a_clear_error_and_the_browser_stays_usable() {
    let Some(h) = Harness::start() else { return };
    let site = site().await;
    let url = closed_port_url().await;
    let err = h.error("browser_navigate", json!({"url": url})).await;
    assert!(err.contains("connection refused"), "{err}");
    assert!(err.contains("ERR_CONNECTION_REFUSED"), "{err}");
    let refused = h
        .call("browser_navigate", json!({"url": "file:///etc/passwd"}))
        .await;
    assert!(
        matches!(&refused, Err(ToolError::Refused(m)) if m.contains("http")),
        "{refused:?}"
    );
    let view = h
        .ok(
            "browser_navigate",
            json!({"url": format!("{}/next", site.uri())}),
        )
        .await;
    assert!(view.contains("You made it."), "{view}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_page_times_out_clearly() {
    let Some(chromium) = common::chromium_or_skip() else {
        return;
    };
    let h = Harness::new(BrowserConfig {
        navigation_timeout: Duration::from_secs(2),
        ..test_config(chromium)
    });
    let site = site().await;
    let hung = hung_server().await;
    // Start the browser first so the timing below is the navigation's alone.
    h.ok(
        "browser_navigate",
        json!({"url": format!("{}/next", site.uri())}),
    )
    .await;
    let started = Instant::now();
    let err = h.error("browser_navigate", json!({"url": hung.url})).await;
    let took = started.elapsed();
    assert!(err.contains("timed out after 2s"), "{err}");
    assert!(err.contains("still usable"), "{err}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    let view = h
        .ok(
            "browser_navigate",
            json!({"url": format!("{}/form", site.uri())}),
        )
        .await;
    assert!(view.contains("Title: Order form"), "{view}");

    // A page that arrives but never finishes loading (an image from the hung server) is
    // shown, with a note; the next navigation still works.
    wiremock::Mock::given(wiremock::matchers::path("/partial"))
        .respond_with(wiremock::ResponseTemplate::new(200).set_body_raw(
            format!(
                "<html><head><title>Partial</title></head><body><p>Text arrived.</p>\
                 <img src=\"{}\"></body></html>",
                hung.url
            ),
            "text/html",
        ))
        .mount(&site)
        .await;
    let view = h
        .ok(
            "browser_navigate",
            json!({"url": format!("{}/partial", site.uri())}),
        )
        .await;
    assert!(
        view.starts_with("Note: the page was still loading after 2s"),
        "{view}"
    );
    assert!(view.contains("Text arrived."), "{view}");
    let view = h
        .ok(
            "browser_navigate",
            json!({"url": format!("{}/next", site.uri())}),
        )
        .await;
    assert!(view.contains("You made it."), "{view}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_page_is_cut_with_a_marker() {
    let Some(h) = Harness::start() else { return };
    let site = site().await;
    let view = h
        .ok(
            "browser_navigate",
            json!({"url": format!("{}/huge", site.uri())}),
        )
        .await;
    let max = BrowserConfig::default().max_view_chars;
    assert!(view.contains("BEGIN"), "{}", &view[..500]);
    assert!(!view.contains("THEEND"));
    assert!(
        view.contains(TEXT_CUT_MARKER),
        "{}",
        &view[view.len() - 500..]
    );
    assert!(
        view.chars().count() <= max + 200,
        "{}",
        view.chars().count()
    );
    // The elements after the cut text are still listed and usable.
    assert!(
        view.contains("<a href=/next> after the text"),
        "{}",
        &view[view.len() - 500..]
    );
    let out = h.ok("browser_scroll", json!({"direction": "bottom"})).await;
    assert!(
        out.starts_with("Scrolled bottom: the window now shows"),
        "{out}"
    );
    assert!(out.contains("(0 px more below)"), "{out}");
}
