//! The web page of `planwright serve` in real headless Chromium (Debian's `chromium`, driven
//! over CDP with chromiumoxide): enter the token, submit a task, watch the steps turn `[✓]`
//! and the summary appear. A screenshot is saved to `target/test-artifacts/`.
//!
//! Skipped when Chromium is missing, except under CI (`CI=true`), where that fails.

mod common;

use std::path::PathBuf;
use std::time::Duration;

use chromiumoxide::browser::{Browser, BrowserConfig};
use chromiumoxide::page::ScreenshotParams;
use chromiumoxide::Page;
use common::*;
use futures_util::StreamExt;
use serde_json::Value;

const TOKEN: &str = "browser-test-token-0123";

fn chromium() -> Option<PathBuf> {
    let candidates = [
        std::env::var("PLANWRIGHT_CHROMIUM").ok(),
        Some("/usr/bin/chromium".to_string()),
        Some("/usr/bin/chromium-browser".to_string()),
    ];
    candidates
        .into_iter()
        .flatten()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

fn artifacts() -> PathBuf {
    let target = std::env::var("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    target.join("test-artifacts")
}

async fn eval(page: &Page, js: &str) -> Value {
    page.evaluate(js)
        .await
        .unwrap_or_else(|e| panic!("evaluating {js}: {e}"))
        .into_value::<Value>()
        .unwrap_or(Value::Null)
}

/// Polls `js` until it returns true.
async fn wait_until(page: &Page, js: &str, secs: u64) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
    loop {
        if eval(page, js).await == Value::Bool(true) {
            return;
        }
        if tokio::time::Instant::now() > deadline {
            let body = eval(page, "document.body.innerText").await;
            let shot = artifacts().join("server-web-timeout.png");
            let _ = page
                .save_screenshot(ScreenshotParams::builder().full_page(true).build(), &shot)
                .await;
            panic!("timed out waiting for `{js}`; the page shows:\n{body}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[allow(clippy::print_stderr)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_web_page_shows_the_plan_working() {
    let Some(exe) = test_support::require_or_skip(
        chromium().ok_or("no chromium (apt-get install -y chromium)"),
    ) else {
        return;
    };
    let delay = |r: wiremock::ResponseTemplate| r.set_delay(Duration::from_millis(300));
    let llm = ScriptedOpenAi::start(greeting_script(false).into_iter().map(delay).collect()).await;
    let pw = Planwright::new();
    let server = pw.serve(&llm.base_url(), Some(TOKEN), &[]).await;

    let profile = tempfile::tempdir().expect("profile dir");
    let config = BrowserConfig::builder()
        .chrome_executable(&exe)
        .new_headless_mode()
        .no_sandbox()
        .user_data_dir(profile.path())
        .window_size(1280, 900)
        .args(["--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"])
        .build()
        .expect("browser config");
    let (mut browser, mut handler) = Browser::launch(config).await.expect("chromium starts");
    let handler_task = tokio::spawn(async move {
        while let Some(event) = handler.next().await {
            if event.is_err() {
                break;
            }
        }
    });

    let page = browser
        .new_page(server.url("/").as_str())
        .await
        .expect("page opens");
    // First visit: the page asks for the token.
    wait_until(&page, "!document.getElementById('login').hidden", 20).await;
    page.find_element("#token-input")
        .await
        .expect("token input")
        .click()
        .await
        .expect("click")
        .type_str(TOKEN)
        .await
        .expect("type");
    page.find_element("#token-form button")
        .await
        .expect("button")
        .click()
        .await
        .expect("click");
    wait_until(&page, "!document.getElementById('app').hidden", 20).await;

    // Submit a task.
    page.find_element("#task")
        .await
        .expect("task box")
        .click()
        .await
        .expect("click")
        .type_str("Write greeting.txt and count its words")
        .await
        .expect("type");
    page.find_element("#submit")
        .await
        .expect("submit")
        .click()
        .await
        .expect("click");

    // The plan appears, a step goes in progress, then all three turn [✓].
    wait_until(
        &page,
        "document.querySelectorAll('#steps > li').length === 3",
        30,
    )
    .await;
    wait_until(
        &page,
        "[...document.querySelectorAll('#steps .marker')].some(m => m.textContent === '[→]' || m.textContent === '[✓]')",
        30,
    )
    .await;
    wait_until(
        &page,
        "[...document.querySelectorAll('#steps .marker')].filter(m => m.textContent === '[✓]').length === 3",
        60,
    )
    .await;
    wait_until(
        &page,
        "document.getElementById('summary').textContent.includes('it has 2 words')",
        30,
    )
    .await;
    // Tool calls with their arguments and results, and the files produced.
    let calls = eval(&page, "document.querySelector('#steps').innerText").await;
    let calls = calls.as_str().unwrap_or_default().to_string();
    assert!(calls.contains("shell_exec"), "{calls}");
    assert!(calls.contains("wc -w < greeting.txt"), "{calls}");
    assert!(calls.contains("greeting.txt has 2 words"), "{calls}");
    wait_until(
        &page,
        "document.getElementById('files').innerText.includes('greeting.txt')",
        20,
    )
    .await;
    assert_eq!(
        eval(&page, "document.getElementById('run-status').textContent").await,
        "completed"
    );
    // What each step changed, from the checkpoints: step 0 created greeting.txt; its diff
    // shows on click (docs/checkpoints.md).
    wait_until(
        &page,
        "!document.getElementById('changes-box').hidden && document.querySelector('#changes li[data-step=\"0\"] li[data-path=\"greeting.txt\"]') !== null",
        20,
    )
    .await;
    assert_eq!(
        eval(&page, "document.querySelectorAll('#changes > li').length").await,
        1,
        "only step 0 changed a file"
    );
    page.find_element("#changes li[data-path=\"greeting.txt\"] a")
        .await
        .expect("changed file")
        .click()
        .await
        .expect("click");
    wait_until(
        &page,
        "(() => { const p = document.querySelector('#changes pre.diff'); return !p.hidden && p.textContent.includes('+hello planwright'); })()",
        10,
    )
    .await;
    // What the page shows of tools' and models' text loses its escape sequences (issue 29,
    // Medium 8: an OSC 52 clipboard write, a screen clear, an 8-bit CSI), keeping newlines
    // and tabs.
    assert_eq!(
        eval(
            &page,
            r"plain('a\x1b]52;c;Y2xpcA==\x07b\x1b[2Jc\x9b31md\x1b]0;title\x1b\\e\nf\tg')"
        )
        .await,
        "abcde\nf\tg"
    );
    // The token is remembered.
    assert_eq!(
        eval(&page, "localStorage.getItem('planwright-token')").await,
        TOKEN
    );

    std::fs::create_dir_all(artifacts()).expect("artifacts dir");
    let shot = artifacts().join("server-web.png");
    page.save_screenshot(ScreenshotParams::builder().full_page(true).build(), &shot)
        .await
        .expect("screenshot");
    let size = std::fs::metadata(&shot).map(|m| m.len()).unwrap_or(0);
    assert!(
        size > 1000,
        "screenshot at {} is {size} bytes",
        shot.display()
    );

    let _ = browser.close().await;
    let _ = browser.wait().await;
    handler_task.abort();
    drop(server);
}
