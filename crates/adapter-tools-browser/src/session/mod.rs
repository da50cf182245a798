//! One run's browser: a Chromium process with a fresh profile, its DevTools connection and
//! one tab. This module starts and closes it and holds the plumbing (time limits,
//! cancellation, evaluation); the actions live in the submodules:
//! [`navigate`] (navigation and the view), [`settle`] (waiting for an action's effect),
//! [`actions`] (click, input, keys, scroll, select), [`console`] and [`screenshot`].

mod actions;
mod console;
mod navigate;
mod screenshot;
mod settle;

use std::future::Future;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;

use chromiumoxide::browser::Browser;
use chromiumoxide::cdp::browser_protocol::page::{
    EventJavascriptDialogOpening, HandleJavaScriptDialogParams,
};
use chromiumoxide::cdp::js_protocol::runtime::{EvaluateParams, ExceptionDetails};
use chromiumoxide::error::CdpError;
use chromiumoxide::handler::HandlerConfig;
use chromiumoxide::listeners::EventStream;
use chromiumoxide::page::Page;
use futures_util::StreamExt;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use tempfile::TempDir;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use domain::ports::{ToolContext, ToolOutput};

use crate::address_guard::AddressGuard;
use crate::args::ScrollDirection;
use crate::config::{chromium_args, BrowserConfig};
use crate::devtools_pipe;
use crate::error::BrowserError;
use crate::process::ChromiumProcess;

/// How often waits look at the page.
const POLL: Duration = Duration::from_millis(50);

/// What a tool asks the session to do.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Action {
    Navigate {
        url: String,
    },
    View,
    Click(ClickTarget),
    Input {
        index: u32,
        text: String,
        press_enter: bool,
    },
    Scroll(ScrollDirection),
    PressKey {
        key: String,
    },
    SelectOption {
        index: u32,
        option: String,
    },
    ConsoleExec {
        js: String,
    },
    Screenshot {
        full_page: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum ClickTarget {
    Index(u32),
    Point { x: f64, y: f64 },
}

/// A live browser. Dropping it kills Chromium's process group and deletes the profile.
pub(crate) struct Session {
    browser: Browser,
    page: Page,
    /// The DevTools handler loop; aborted on drop.
    handler_task: JoinHandle<()>,
    /// Accepts the tab's JavaScript dialogs; aborted on drop.
    dialog_task: Option<JoinHandle<()>>,
    /// A `Page.navigate` timed out or was cancelled. chromiumoxide queues navigations per
    /// tab and only gives up on one after 30 s, so the next navigation uses a fresh tab.
    nav_stuck: bool,
    /// False once the DevTools connection has ended.
    connected: Arc<AtomicBool>,
    /// JavaScript dialogs accepted since the last call, to tell the model about.
    dialogs: Arc<StdMutex<Vec<String>>>,
    config: Arc<BrowserConfig>,
    last_url: Option<String>,
    process: ChromiumProcess,
    /// The SOCKS5 proxy every connection of this browser goes through.
    guard: AddressGuard,
    /// Carries DevTools messages between chromiumoxide and Chromium's pipe; aborted on drop.
    bridge_task: JoinHandle<()>,
    /// Declared last: removed after the process is gone.
    _profile: TempDir,
}

impl Drop for Session {
    fn drop(&mut self) {
        self.handler_task.abort();
        self.bridge_task.abort();
        if let Some(task) = &self.dialog_task {
            task.abort();
        }
    }
}

impl Session {
    /// Starts Chromium with a fresh profile and opens one blank tab.
    pub(crate) async fn launch(
        config: Arc<BrowserConfig>,
        exe: &Path,
        cancel: &CancellationToken,
    ) -> Result<Session, BrowserError> {
        let profile = tempfile::Builder::new()
            .prefix("planwright-chromium-")
            .tempdir()
            .map_err(|e| {
                BrowserError::Unavailable(format!("could not create a browser profile folder: {e}"))
            })?;
        let guard = AddressGuard::start(
            config.allow_local,
            config.navigation_timeout,
            config.this_machine.clone(),
        )
        .await
        .map_err(|e| {
            BrowserError::Unavailable(format!("could not start the browser's address guard: {e}"))
        })?;
        let args = chromium_args(&config, profile.path(), &guard.proxy_server());
        let (mut process, pipe) = ChromiumProcess::spawn(exe, &args)?;
        let (ws_url, bridge_task) =
            devtools_pipe::bridge(pipe.to_chromium, pipe.from_chromium, config.launch_timeout)
                .await
                .map_err(|e| {
                    BrowserError::Unavailable(format!("could not bridge the DevTools pipe: {e}"))
                })?;

        let handler_config = HandlerConfig {
            ignore_https_errors: false,
            viewport: None,
            // Our own timeouts come first; this only evicts commands nobody waits for.
            request_timeout: config.navigation_timeout.max(config.action_timeout)
                + Duration::from_secs(5),
            ..HandlerConfig::default()
        };
        let connect = Browser::connect_with_config(ws_url, handler_config);
        // Chromium prints nothing when it is ready (the pipe needs no announcement), so a
        // browser that dies at start is noticed by its exit, not by a timeout.
        let connected_to = tokio::select! {
            r = with_limit("connecting to Chromium", config.launch_timeout, cancel, connect) => r,
            () = process.exited() => Err(died_at_start()),
        };
        let (browser, mut handler) = match connected_to {
            Ok(pair) => pair,
            Err(e) => return Err(start_failed(e, &mut process).await),
        };
        let connected = Arc::new(AtomicBool::new(true));
        let flag = connected.clone();
        let pid = process.pid();
        let handler_task = tokio::spawn(async move {
            while let Some(event) = handler.next().await {
                if let Err(e) = event {
                    tracing::debug!(pid, error = %e, "browser connection ended");
                    break;
                }
            }
            flag.store(false, Ordering::SeqCst);
        });
        let opened = tokio::select! {
            r = with_limit(
                "opening a tab",
                config.launch_timeout,
                cancel,
                browser.new_page("about:blank"),
            ) => r,
            () = process.exited() => Err(died_at_start()),
        };
        let page = match opened {
            Ok(page) => page,
            Err(e) => {
                handler_task.abort();
                return Err(start_failed(e, &mut process).await);
            }
        };
        let dialogs = Arc::new(StdMutex::new(Vec::new()));
        let dialog_task = watch_dialogs(&page, &dialogs).await;
        tracing::info!(pid, "browser started");
        Ok(Session {
            browser,
            page,
            handler_task,
            dialog_task,
            nav_stuck: false,
            connected,
            dialogs,
            config,
            last_url: None,
            process,
            guard,
            bridge_task,
            _profile: profile,
        })
    }

    /// Replaces the tab by a new blank one (after a navigation chromiumoxide still waits for).
    async fn replace_tab(&mut self, cancel: &CancellationToken) -> Result<(), BrowserError> {
        let page = self
            .guard(
                "opening a new tab",
                self.config.action_timeout,
                cancel,
                self.browser.new_page("about:blank"),
            )
            .await?;
        if let Some(task) = self.dialog_task.take() {
            task.abort();
        }
        self.dialog_task = watch_dialogs(&page, &self.dialogs).await;
        let old = std::mem::replace(&mut self.page, page);
        let _ = tokio::time::timeout(Duration::from_secs(2), old.close()).await;
        self.nav_stuck = false;
        tracing::debug!("replaced the tab after a stuck navigation");
        Ok(())
    }

    pub(crate) fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// The address of the page last shown, if any.
    pub(crate) fn last_url(&self) -> Option<&str> {
        self.last_url.as_deref()
    }

    /// Whether Chromium is still running and connected.
    pub(crate) fn alive(&mut self) -> bool {
        self.connected.load(Ordering::SeqCst) && !self.process.has_exited()
    }

    /// Asks Chromium to quit, then kills what is left of it; the profile is deleted.
    pub(crate) async fn close(mut self) {
        if self.connected.load(Ordering::SeqCst) {
            let _ = tokio::time::timeout(Duration::from_secs(2), self.browser.close()).await;
        }
        self.process.shutdown(Duration::from_secs(2)).await;
        tracing::info!(pid = self.process.pid(), "browser closed");
    }

    /// Performs `action`; screenshots are numbered from `*next_screenshot` on.
    pub(crate) async fn perform(
        &mut self,
        action: &Action,
        ctx: &ToolContext,
        next_screenshot: &mut u32,
    ) -> Result<ToolOutput, BrowserError> {
        let cancel = &ctx.cancel;
        let mut out = match action {
            Action::Navigate { url } => self.navigate(url, cancel).await?,
            Action::View => ToolOutput::ok(self.view(cancel).await?),
            Action::Click(target) => self.click(*target, cancel).await?,
            Action::Input {
                index,
                text,
                press_enter,
            } => self.input(*index, text, *press_enter, cancel).await?,
            Action::Scroll(direction) => self.scroll(*direction, cancel).await?,
            Action::PressKey { key } => self.press_key(key, cancel).await?,
            Action::SelectOption { index, option } => {
                self.select_option(*index, option, cancel).await?
            }
            Action::ConsoleExec { js } => self.console_exec(js, cancel).await?,
            Action::Screenshot { full_page } => {
                self.screenshot(*full_page, &ctx.workspace, next_screenshot, cancel)
                    .await?
            }
        };
        let refused = self.take_refusals();
        if !refused.is_empty() {
            out.content = format!(
                "Note: the page tried to reach addresses the browser refuses: {}\n\n{}",
                refused.join("; "),
                out.content
            );
        }
        let dialogs = self.take_dialogs();
        if !dialogs.is_empty() {
            out.content = format!(
                "The page opened dialogs, which were accepted automatically: {}\n\n{}",
                dialogs.join("; "),
                out.content
            );
        }
        Ok(out)
    }

    /// The address guard's refusals since the last look, each told once.
    fn take_refusals(&self) -> Vec<String> {
        let mut texts: Vec<String> = Vec::new();
        for text in self
            .guard
            .take_failures()
            .iter()
            .filter_map(|f| f.refusal())
        {
            if !texts.contains(&text) {
                texts.push(text);
            }
        }
        texts
    }

    fn take_dialogs(&self) -> Vec<String> {
        match self.dialogs.lock() {
            Ok(mut d) => std::mem::take(&mut *d),
            Err(_) => Vec::new(),
        }
    }

    // ----- plumbing ------------------------------------------------------------------

    /// Runs a DevTools command with a time limit and the run's cancellation.
    async fn guard<T>(
        &self,
        what: &str,
        limit: Duration,
        cancel: &CancellationToken,
        fut: impl Future<Output = Result<T, CdpError>>,
    ) -> Result<T, BrowserError> {
        let result = with_limit(what, limit, cancel, fut).await;
        match result {
            Err(BrowserError::Page(m)) if !self.connected.load(Ordering::SeqCst) => {
                Err(BrowserError::Disconnected(m))
            }
            other => other,
        }
    }

    async fn eval(
        &self,
        what: &str,
        expression: String,
        cancel: &CancellationToken,
    ) -> Result<Value, BrowserError> {
        self.eval_limit(what, expression, self.config.action_timeout, cancel)
            .await
    }

    /// Evaluates `expression` in the page's main frame; returns its value as JSON.
    async fn eval_limit(
        &self,
        what: &str,
        expression: String,
        limit: Duration,
        cancel: &CancellationToken,
    ) -> Result<Value, BrowserError> {
        let mut params = EvaluateParams::new(expression);
        params.return_by_value = Some(true);
        params.await_promise = Some(true);
        let resp = self
            .guard(what, limit, cancel, self.page.execute(params))
            .await?;
        if let Some(ex) = resp.result.exception_details {
            return Err(BrowserError::Page(format!(
                "{what} failed: {}",
                exception_text(&ex)
            )));
        }
        Ok(resp.result.result.value.unwrap_or(Value::Null))
    }

    async fn eval_as<T: DeserializeOwned>(
        &self,
        what: &str,
        expression: String,
        cancel: &CancellationToken,
    ) -> Result<T, BrowserError> {
        let value = self.eval(what, expression, cancel).await?;
        serde_json::from_value(value).map_err(|e| {
            BrowserError::Page(format!("{what}: unexpected answer from the page ({e})"))
        })
    }
}

/// Starts accepting the dialogs of `page`.
async fn watch_dialogs(
    page: &Page,
    dialogs: &Arc<StdMutex<Vec<String>>>,
) -> Option<JoinHandle<()>> {
    match page.event_listener::<EventJavascriptDialogOpening>().await {
        Ok(events) => Some(tokio::spawn(accept_dialogs(
            events,
            page.clone(),
            dialogs.clone(),
        ))),
        Err(e) => {
            tracing::warn!(error = %e, "cannot watch for JavaScript dialogs");
            None
        }
    }
}

/// Accepts every JavaScript dialog (alert, confirm, prompt, beforeunload) so none blocks the
/// page, and remembers what it said.
async fn accept_dialogs(
    mut events: EventStream<EventJavascriptDialogOpening>,
    page: Page,
    seen: Arc<StdMutex<Vec<String>>>,
) {
    while let Some(event) = events.next().await {
        let kind = event.r#type.as_ref().to_string();
        tracing::debug!(kind, message = %event.message, "accepting a JavaScript dialog");
        if let Ok(mut seen) = seen.lock() {
            seen.push(format!("{kind} {}", json!(clip(&event.message, 200))));
        }
        let mut params = HandleJavaScriptDialogParams::new(true);
        params.prompt_text = event.default_prompt.clone();
        if let Err(e) = page.execute(params).await {
            tracing::debug!(error = %e, "could not accept the dialog");
        }
    }
}

/// Runs `fut` with a time limit and the run's cancellation, classifying its failures.
async fn with_limit<T>(
    what: &str,
    limit: Duration,
    cancel: &CancellationToken,
    fut: impl Future<Output = Result<T, CdpError>>,
) -> Result<T, BrowserError> {
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(BrowserError::Cancelled),
        r = tokio::time::timeout(limit, fut) => match r {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(BrowserError::from_cdp(e, what)),
            Err(_) => Err(BrowserError::Page(format!(
                "{what} timed out after {}: the page did not respond",
                secs(limit)
            ))),
        },
    }
}

fn died_at_start() -> BrowserError {
    BrowserError::Unavailable("Chromium exited before it was ready".to_string())
}

/// A failed start, with what Chromium said about it.
async fn start_failed(e: BrowserError, process: &mut ChromiumProcess) -> BrowserError {
    match e {
        BrowserError::Cancelled => BrowserError::Cancelled,
        other => BrowserError::Unavailable(format!("{other} ({})", process.explain().await)),
    }
}

async fn sleep(d: Duration, cancel: &CancellationToken) -> Result<(), BrowserError> {
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(BrowserError::Cancelled),
        _ = tokio::time::sleep(d) => Ok(()),
    }
}

/// The first lines of a JavaScript exception.
fn exception_text(ex: &ExceptionDetails) -> String {
    let text = ex
        .exception
        .as_ref()
        .and_then(|e| {
            e.description
                .clone()
                .or_else(|| e.value.as_ref().map(Value::to_string))
        })
        .unwrap_or_else(|| ex.text.clone());
    let lines: Vec<&str> = text.lines().take(4).collect();
    lines.join("\n")
}

/// `s` cut to `max` characters, with a marker.
fn clip(s: &str, max: usize) -> String {
    let count = s.chars().count();
    if count <= max {
        return s.to_string();
    }
    let kept: String = s.chars().take(max).collect();
    format!("{kept}\n[… cut: {max} of {count} characters shown …]")
}

/// `2s`, `1.5s`.
fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0}s")
    } else {
        format!("{s:.1}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_and_secs() {
        assert_eq!(clip("abc", 5), "abc");
        assert!(clip(&"x".repeat(10), 4).starts_with("xxxx\n[… cut: 4 of 10"));
        assert_eq!(secs(Duration::from_secs(2)), "2s");
        assert_eq!(secs(Duration::from_millis(1500)), "1.5s");
    }
}
