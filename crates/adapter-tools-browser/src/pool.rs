//! [`Browsers`]: one browser per run, started on first use, reused by every step of the
//! run, restarted once if it crashed, and closed when the run ends.
//!
//! The pool knows nothing of the tools: `tools.rs` builds the nine `browser_*` tools over
//! it ([`Browsers::tools`]), so the imports point one way (tools → pool).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::Mutex;

use domain::ports::{ToolContext, ToolOutput};
use domain::ToolError;

use crate::config::BrowserConfig;
use crate::error::BrowserError;
use crate::session::{Action, Session};

/// What the model is told after a restart.
pub(crate) const CRASH_NOTE: &str =
    "the browser had crashed and was restarted; the page state was lost";

/// The per-run browser pool shared by the nine `browser_*` tools. Cloning is cheap (one
/// `Arc`). Each run (`ToolContext::run_id`) gets its own Chromium with a fresh profile,
/// started by its first `browser_*` call; calls of one run take turns on its single tab.
///
/// The app must call [`Browsers::close_run`] when a run ends (and may call
/// [`Browsers::close_all`] at exit). Dropping the last clone also kills every browser.
#[derive(Clone)]
pub struct Browsers {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Browsers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Browsers")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

struct Inner {
    config: Arc<BrowserConfig>,
    runs: Mutex<HashMap<String, Arc<Mutex<RunSlot>>>>,
}

/// One run's browser, if started, and its screenshot counter.
#[derive(Default)]
struct RunSlot {
    session: Option<Session>,
    next_screenshot: u32,
}

impl Browsers {
    pub fn new(config: BrowserConfig) -> Browsers {
        Browsers {
            inner: Arc::new(Inner {
                config: Arc::new(config),
                runs: Mutex::new(HashMap::new()),
            }),
        }
    }

    pub fn config(&self) -> &BrowserConfig {
        &self.inner.config
    }

    /// The Chromium binary the tools would start, or why there is none (for a future
    /// `planwright tools list`, and to decide whether to offer the tools at all).
    pub fn is_available(&self) -> Result<PathBuf, String> {
        match &self.inner.config.chromium {
            Some(path) if crate::is_executable(path) => Ok(path.clone()),
            Some(path) => Err(format!(
                "the configured Chromium {} is not an executable file",
                path.display()
            )),
            None => crate::find_chromium().ok_or_else(crate::not_found_reason),
        }
    }

    /// Closes the run's browser: Chromium is asked to quit, then its whole process group is
    /// killed and its profile deleted. Waits for a call in progress on that run to end.
    /// The run's next `browser_*` call (if any) would start a new browser.
    pub async fn close_run(&self, run_id: &str) {
        let slot = self.inner.runs.lock().await.remove(run_id);
        if let Some(slot) = slot {
            let session = slot.lock().await.session.take();
            if let Some(session) = session {
                session.close().await;
            }
        }
    }

    /// Closes every run's browser.
    pub async fn close_all(&self) {
        let slots: Vec<_> = self.inner.runs.lock().await.drain().collect();
        for (_, slot) in slots {
            let session = slot.lock().await.session.take();
            if let Some(session) = session {
                session.close().await;
            }
        }
    }

    /// The process id of the run's Chromium, if it has one running (diagnostics, tests).
    pub async fn browser_pid(&self, run_id: &str) -> Option<u32> {
        let slot = self.inner.runs.lock().await.get(run_id).cloned()?;
        let slot = slot.lock().await;
        slot.session.as_ref().map(Session::pid)
    }

    /// How many runs currently hold a browser.
    pub async fn open_runs(&self) -> usize {
        let slots: Vec<_> = self.inner.runs.lock().await.values().cloned().collect();
        let mut n = 0;
        for slot in slots {
            if slot.lock().await.session.is_some() {
                n += 1;
            }
        }
        n
    }

    async fn slot(&self, run_id: &str) -> Arc<Mutex<RunSlot>> {
        self.inner
            .runs
            .lock()
            .await
            .entry(run_id.to_string())
            .or_default()
            .clone()
    }

    async fn launch(&self, ctx: &ToolContext) -> Result<Session, BrowserError> {
        let exe = self.is_available().map_err(BrowserError::Unavailable)?;
        Session::launch(self.inner.config.clone(), &exe, &ctx.cancel).await
    }

    /// Runs `action` on the run's browser, starting it if needed and restarting it once if
    /// it crashed (before or during the call).
    pub(crate) async fn perform(
        &self,
        action: Action,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        if ctx.cancel.is_cancelled() {
            return Err(cancelled());
        }
        let slot = self.slot(&ctx.run_id).await;
        let mut guard = tokio::select! {
            biased;
            _ = ctx.cancel.cancelled() => return Err(cancelled()),
            g = slot.lock() => g,
        };
        let RunSlot {
            session,
            next_screenshot,
        } = &mut *guard;

        let mut restarted: Option<Option<String>> = None;
        let mut current = match session.take() {
            Some(mut s) => {
                if s.alive() {
                    s
                } else {
                    restarted = Some(self.bury(s, &ctx.run_id));
                    self.launch(ctx).await.map_err(|e| restart_failed(&e))?
                }
            }
            None => self.launch(ctx).await.map_err(start_failed)?,
        };
        loop {
            let result = current.perform(&action, ctx, next_screenshot).await;
            let crashed = match &result {
                Err(BrowserError::Disconnected(_)) => true,
                Err(_) => !current.alive(),
                Ok(_) => false,
            };
            if !crashed {
                *session = Some(current);
                return finish(result, restarted.as_ref());
            }
            if restarted.is_some() {
                drop(current);
                let reason = result.err().map(|e| e.to_string()).unwrap_or_default();
                tracing::error!(run_id = %ctx.run_id, %reason, "the browser crashed again");
                return Err(ToolError::Failed(format!(
                    "the browser crashed again right after being restarted ({reason}); it will \
                     be started afresh on the next browser call"
                )));
            }
            restarted = Some(self.bury(current, &ctx.run_id));
            current = self.launch(ctx).await.map_err(|e| restart_failed(&e))?;
        }
    }

    /// Kills a crashed browser; returns the address it was showing.
    fn bury(&self, dead: Session, run_id: &str) -> Option<String> {
        let pid = dead.pid();
        let url = dead.last_url().map(str::to_string);
        tracing::warn!(run_id, pid, "the browser crashed; restarting it");
        drop(dead);
        url
    }
}

fn finish(
    result: Result<ToolOutput, BrowserError>,
    restarted: Option<&Option<String>>,
) -> Result<ToolOutput, ToolError> {
    let mut out = match result {
        Ok(out) => out,
        Err(BrowserError::Page(message)) => ToolOutput::error(message),
        Err(BrowserError::Cancelled) => return Err(cancelled()),
        Err(e) => return Err(ToolError::Failed(e.to_string())),
    };
    if let Some(url) = restarted {
        let was = url
            .as_deref()
            .filter(|u| !u.is_empty() && *u != "about:blank")
            .map(|u| format!(" (it was showing {u}; call browser_navigate to go back)"))
            .unwrap_or_default();
        out.content = format!("Note: {CRASH_NOTE}{was}.\n\n{}", out.content);
    }
    Ok(out)
}

fn cancelled() -> ToolError {
    ToolError::Failed("the browser call was cancelled".to_string())
}

fn start_failed(e: BrowserError) -> ToolError {
    match e {
        BrowserError::Cancelled => cancelled(),
        other => ToolError::Failed(format!("the browser is not available: {other}")),
    }
}

fn restart_failed(e: &BrowserError) -> ToolError {
    match e {
        BrowserError::Cancelled => cancelled(),
        other => ToolError::Failed(format!(
            "the browser had crashed and could not be restarted: {other}"
        )),
    }
}
