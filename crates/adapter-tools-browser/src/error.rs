//! The crate's error type and how its cases reach the model.

use chromiumoxide::error::CdpError;
use thiserror::Error;

/// Why a browser operation did not succeed.
#[derive(Debug, Error)]
pub(crate) enum BrowserError {
    /// Chromium is missing or would not start.
    #[error("{0}")]
    Unavailable(String),
    /// The DevTools connection is gone: Chromium died or closed it. The pool restarts the
    /// browser once per call.
    #[error("the connection to the browser was lost ({0})")]
    Disconnected(String),
    /// Something the model can act on: an unknown element, a failed navigation, a page that
    /// did not answer in time. The browser is still usable.
    #[error("{0}")]
    Page(String),
    /// The run was cancelled while waiting.
    #[error("the browser call was cancelled")]
    Cancelled,
}

impl BrowserError {
    /// Classifies a chromiumoxide error raised while doing `what` ("reading the page").
    pub(crate) fn from_cdp(error: CdpError, what: &str) -> BrowserError {
        match error {
            CdpError::Ws(_)
            | CdpError::ChannelSendError(_)
            | CdpError::NoResponse
            | CdpError::Io(_)
            | CdpError::UnexpectedWsMessage(_) => BrowserError::Disconnected(error.to_string()),
            CdpError::Timeout => {
                BrowserError::Page(format!("{what}: the browser did not answer in time"))
            }
            other => BrowserError::Page(format!("{what} failed: {other}")),
        }
    }
}

/// The message for an element index that is not (or no longer) on the page.
pub(crate) fn no_element(index: u32) -> String {
    format!("no element [{index}] on the page; call browser_view to refresh the element list")
}
