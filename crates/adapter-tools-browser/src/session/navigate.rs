//! `browser_navigate` and `browser_view`: opening a page and reading it.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use chromiumoxide::cdp::browser_protocol::page::{NavigateParams, StopLoadingParams};
use chromiumoxide::error::CdpError;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use domain::ports::ToolOutput;

use super::{secs, sleep, Session, POLL};
use crate::error::BrowserError;
use crate::scripts::{self, call};
use crate::view::{self, RawView, MAX_ELEMENTS, VIEW_JS};

impl Session {
    pub(super) async fn navigate(
        &mut self,
        url: &str,
        cancel: &CancellationToken,
    ) -> Result<ToolOutput, BrowserError> {
        if self.nav_stuck {
            self.replace_tab(cancel).await?;
        }
        // Failures of earlier calls were told with them; only this navigation's count now.
        let _ = self.guard.take_failures();
        let started = Instant::now();
        let limit = self.config.navigation_timeout;
        let before = self.mark_document(cancel).await?;
        // chromiumoxide answers Page.navigate once the new page has loaded (or failed).
        let outcome = tokio::select! {
            biased;
            _ = cancel.cancelled() => None,
            r = tokio::time::timeout(limit, self.page.execute(NavigateParams::new(url))) => Some(r),
        };
        let returns = match outcome {
            None => {
                self.nav_stuck = true;
                self.stop_loading().await;
                return Err(BrowserError::Cancelled);
            }
            Some(Err(_)) | Some(Ok(Err(CdpError::Timeout))) => {
                self.nav_stuck = true;
                self.stop_loading().await;
                if !self.connected.load(Ordering::SeqCst) {
                    return Err(BrowserError::Disconnected(
                        "no answer to Page.navigate".into(),
                    ));
                }
                if self.document_replaced(before.as_deref(), cancel).await? {
                    // The page arrived but some of it never finished loading.
                    let view = self.view(cancel).await?;
                    return Ok(ToolOutput::ok(format!(
                        "Note: the page was still loading after {}; loading was stopped and \
                         the view may be incomplete.\n\n{view}",
                        secs(limit)
                    )));
                }
                return Err(BrowserError::Page(format!(
                    "opening {url} timed out after {}: the server did not answer. Loading was \
                     stopped and the browser is still usable.",
                    secs(limit)
                )));
            }
            Some(Ok(Err(e))) => return Err(BrowserError::from_cdp(e, &format!("opening {url}"))),
            Some(Ok(Ok(resp))) => resp.result,
        };
        if let Some(error) = returns.error_text.filter(|e| !e.is_empty()) {
            return Err(BrowserError::Page(self.explain_failure(url, &error)));
        }
        if returns.is_download == Some(true) {
            return Ok(ToolOutput::ok(format!(
                "{url} is a file download, not a page; the browser did not show it."
            )));
        }
        let loaded = self
            .wait_loaded(limit.saturating_sub(started.elapsed()), cancel)
            .await?;
        if !loaded {
            self.stop_loading().await;
        }
        let view = self.view(cancel).await?;
        Ok(ToolOutput::ok(if loaded {
            view
        } else {
            format!(
                "Note: the page was still loading after {}; loading was stopped and the view \
                 may be incomplete.\n\n{view}",
                secs(limit)
            )
        }))
    }

    /// The model-facing text of a failed navigation. Chromium reports any connection the
    /// address guard did not make as a proxy failure; the guard knows the real reason.
    fn explain_failure(&self, url: &str, error: &str) -> String {
        let through_guard = error.contains("SOCKS")
            || error.contains("PROXY")
            || error.contains("TUNNEL")
            || error.contains("ERR_BLOCKED");
        let mut failures = self.guard.take_failures();
        // The browser's own background requests fail through the guard too (a name it
        // could not resolve): the navigated host's failures come first.
        let host = url_host(url);
        failures.sort_by_key(|f| f.host.trim_matches(['[', ']']) == host);
        if through_guard {
            if let Some(refusal) = failures.iter().rev().find_map(|f| f.refusal()) {
                return format!("could not open {url}: {refusal}.");
            }
            if let Some(failure) = failures.last() {
                return navigation_error(url, failure.net_error());
            }
        }
        navigation_error(url, error)
    }

    /// Marks the current document so [`Session::document_replaced`] can tell a new one.
    pub(super) async fn mark_document(
        &self,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, BrowserError> {
        match self
            .eval(
                "preparing the page",
                call(scripts::MARK_DOCUMENT_JS, &[]),
                cancel,
            )
            .await
        {
            Ok(Value::String(token)) => Ok(Some(token)),
            Err(e @ (BrowserError::Disconnected(_) | BrowserError::Cancelled)) => Err(e),
            _ => Ok(None),
        }
    }

    /// Whether the marked document was replaced by a real page (not an error page).
    pub(super) async fn document_replaced(
        &self,
        token: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<bool, BrowserError> {
        let Some(token) = token else {
            return Ok(false);
        };
        match self
            .eval(
                "checking the page",
                call(scripts::DOCUMENT_REPLACED_JS, &[json!(token)]),
                cancel,
            )
            .await
        {
            Ok(Value::Bool(replaced)) => Ok(replaced),
            Err(e @ (BrowserError::Disconnected(_) | BrowserError::Cancelled)) => Err(e),
            _ => Ok(false),
        }
    }

    /// The page as the model reads it; renumbers the interactive elements.
    pub(super) async fn view(
        &mut self,
        cancel: &CancellationToken,
    ) -> Result<String, BrowserError> {
        let max = self.config.max_view_chars;
        let expression = call(VIEW_JS, &[json!(max), json!(MAX_ELEMENTS)]);
        let raw: RawView = self.eval_as("reading the page", expression, cancel).await?;
        self.last_url = Some(raw.url.clone());
        Ok(view::render(&raw, max))
    }

    pub(super) async fn stop_loading(&self) {
        let _ = tokio::time::timeout(
            Duration::from_secs(2),
            self.page.execute(StopLoadingParams::default()),
        )
        .await;
    }

    /// Waits (at most `budget`) for `document.readyState == "complete"`.
    pub(super) async fn wait_loaded(
        &self,
        budget: Duration,
        cancel: &CancellationToken,
    ) -> Result<bool, BrowserError> {
        let deadline = Instant::now() + budget;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let limit = left
                .min(self.config.action_timeout)
                .max(Duration::from_millis(500));
            match self
                .eval_limit(
                    "checking the page",
                    scripts::READY_STATE_JS.into(),
                    limit,
                    cancel,
                )
                .await
            {
                Ok(Value::String(state)) if state == "complete" => return Ok(true),
                Err(e @ (BrowserError::Disconnected(_) | BrowserError::Cancelled)) => {
                    return Err(e)
                }
                _ => {}
            }
            if Instant::now() >= deadline {
                return Ok(false);
            }
            sleep(POLL, cancel).await?;
        }
    }
}

/// The host of `url` (`http://[::1]:8/x` → `::1`), lower-cased; empty when there is none.
fn url_host(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => authority.split(':').next().unwrap_or_default(),
    };
    host.to_ascii_lowercase()
}

/// The model-facing text of a failed Page.navigate.
fn navigation_error(url: &str, error: &str) -> String {
    let why = if error.contains("ERR_CONNECTION_REFUSED") {
        "nothing is listening at that address (connection refused)"
    } else if error.contains("ERR_NAME_NOT_RESOLVED") || error.contains("ERR_NAME_RESOLUTION") {
        "the host name could not be resolved"
    } else if error.contains("TIMED_OUT") {
        "the server did not answer in time"
    } else if error.contains("ERR_INTERNET_DISCONNECTED")
        || error.contains("UNREACHABLE")
        || error.contains("ERR_NETWORK")
        || error.contains("ERR_PROXY")
    {
        "the network is unreachable from here"
    } else if error.contains("ERR_CERT") || error.contains("ERR_SSL") {
        "the site's TLS certificate or connection is not valid"
    } else if error.contains("ERR_EMPTY_RESPONSE")
        || error.contains("ERR_CONNECTION_RESET")
        || error.contains("ERR_CONNECTION_CLOSED")
    {
        "the server closed the connection without answering"
    } else if error.contains("ERR_ABORTED") {
        "the navigation was aborted (the server sent no page)"
    } else {
        "the browser could not load it"
    };
    format!("could not open {url}: {why} ({error}). The browser is still usable.")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_of_a_url() {
        assert_eq!(url_host("http://127.0.0.1:40173/"), "127.0.0.1");
        assert_eq!(url_host("https://user@Example.com/a?b"), "example.com");
        assert_eq!(url_host("http://[::1]:8080/x"), "::1");
        assert_eq!(url_host("about:blank"), "about");
    }

    #[test]
    fn navigation_errors_say_why() {
        let m = navigation_error("http://127.0.0.1:9/", "net::ERR_CONNECTION_REFUSED");
        assert!(m.contains("connection refused"), "{m}");
        assert!(m.contains("still usable"));
        assert!(
            navigation_error("http://x.invalid/", "net::ERR_NAME_NOT_RESOLVED")
                .contains("could not be resolved")
        );
    }
}
