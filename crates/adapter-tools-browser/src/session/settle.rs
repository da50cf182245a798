//! Waiting for the effect of an action, without a fixed sleep.

use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use domain::ports::ToolOutput;

use super::{secs, sleep, Session, POLL};
use crate::error::BrowserError;
use crate::scripts::{self, call};

/// After an action, the DOM must have been quiet (and no fetch in flight) this long...
const QUIET: Duration = Duration::from_millis(300);
/// ...but the wait for quiet never lasts longer than this (animations, polling pages).
const SETTLE_CAP: Duration = Duration::from_secs(3);

impl Session {
    /// Starts watching the page before an action; `None` if the page cannot be watched.
    pub(super) async fn watch(
        &self,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, BrowserError> {
        match self
            .eval(
                "preparing the page",
                call(scripts::INSTRUMENT_JS, &[]),
                cancel,
            )
            .await
        {
            Ok(Value::String(token)) => Ok(Some(token)),
            Ok(_) => Ok(None),
            Err(e @ (BrowserError::Disconnected(_) | BrowserError::Cancelled)) => Err(e),
            Err(e) => {
                tracing::debug!(error = %e, "cannot watch the page");
                Ok(None)
            }
        }
    }

    /// Waits for the effect of an action: a navigation it started to finish loading (at
    /// most `navigation_timeout`), else the DOM to be quiet with no fetch in flight (at most
    /// [`SETTLE_CAP`]). Not a fixed sleep: a page that does nothing returns after [`QUIET`].
    pub(super) async fn settle(
        &self,
        token: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<Settled, BrowserError> {
        let start = Instant::now();
        let Some(token) = token else {
            sleep(QUIET, cancel).await?;
            return Ok(Settled {
                changed: true,
                ..Settled::default()
            });
        };
        let idle_cap = SETTLE_CAP.min(self.config.action_timeout);
        let nav_deadline = start + self.config.navigation_timeout;
        let poll_limit = self.config.action_timeout.min(Duration::from_secs(2));
        loop {
            sleep(POLL, cancel).await?;
            let elapsed = start.elapsed();
            let probe = self
                .eval_limit(
                    "watching the page",
                    call(scripts::SETTLE_POLL_JS, &[json!(token)]),
                    poll_limit,
                    cancel,
                )
                .await;
            match probe {
                Err(e @ (BrowserError::Disconnected(_) | BrowserError::Cancelled)) => {
                    return Err(e)
                }
                // The document is being replaced, or busy: keep waiting.
                Err(_) => {}
                Ok(value) => {
                    let p: Probe = serde_json::from_value(value).unwrap_or_default();
                    if p.nav {
                        if p.ready == "complete" {
                            return Ok(Settled {
                                navigated: true,
                                changed: true,
                                still_loading: false,
                            });
                        }
                    } else if !p.unloading {
                        let quiet = p.quiet_ms >= QUIET.as_secs_f64() * 1000.0 && p.pending <= 0;
                        if quiet || elapsed >= idle_cap {
                            return Ok(Settled {
                                navigated: false,
                                changed: p.changed,
                                still_loading: false,
                            });
                        }
                    }
                }
            }
            if Instant::now() >= nav_deadline {
                self.stop_loading().await;
                return Ok(Settled {
                    navigated: true,
                    changed: true,
                    still_loading: true,
                });
            }
        }
    }

    /// The text after an action: `summary`, then the new view if the page changed (always
    /// for clicks), else a hint.
    pub(super) async fn report(
        &mut self,
        summary: String,
        settled: Settled,
        always_view: bool,
        cancel: &CancellationToken,
    ) -> Result<ToolOutput, BrowserError> {
        let mut out = summary;
        if settled.still_loading {
            out.push_str(&format!(
                " The next page was still loading after {}; loading was stopped.",
                secs(self.config.navigation_timeout)
            ));
        }
        if always_view || settled.navigated || settled.changed {
            let view = self.view(cancel).await?;
            out.push_str("\n\n");
            out.push_str(&view);
        } else {
            out.push_str(" The page did not change; call browser_view to see it.");
        }
        Ok(ToolOutput::ok(out))
    }
}

/// What [`Session::settle`] saw.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Settled {
    navigated: bool,
    changed: bool,
    still_loading: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Probe {
    nav: bool,
    unloading: bool,
    ready: String,
    quiet_ms: f64,
    pending: i64,
    changed: bool,
}
