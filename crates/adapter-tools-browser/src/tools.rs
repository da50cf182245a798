//! The nine `browser_*` tools: one [`BrowserTool`] type, told apart by its [`ToolKind`],
//! all sharing one [`Browsers`] pool.

use async_trait::async_trait;
use serde_json::Value;

use domain::ports::{Tool, ToolContext, ToolOutput};
use domain::ToolError;

use crate::args::{
    self, ClickArgs, ConsoleExecArgs, InputArgs, NavigateArgs, PressKeyArgs, ScreenshotArgs,
    ScrollArgs, SelectOptionArgs, ViewArgs,
};
use crate::pool::Browsers;
use crate::session::{Action, ClickTarget};

/// Which browser tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ToolKind {
    Navigate,
    View,
    Click,
    Input,
    Scroll,
    PressKey,
    SelectOption,
    ConsoleExec,
    Screenshot,
}

impl ToolKind {
    pub(crate) const ALL: [ToolKind; 9] = [
        ToolKind::Navigate,
        ToolKind::View,
        ToolKind::Click,
        ToolKind::Input,
        ToolKind::Scroll,
        ToolKind::PressKey,
        ToolKind::SelectOption,
        ToolKind::ConsoleExec,
        ToolKind::Screenshot,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            ToolKind::Navigate => crate::BROWSER_NAVIGATE,
            ToolKind::View => crate::BROWSER_VIEW,
            ToolKind::Click => crate::BROWSER_CLICK,
            ToolKind::Input => crate::BROWSER_INPUT,
            ToolKind::Scroll => crate::BROWSER_SCROLL,
            ToolKind::PressKey => crate::BROWSER_PRESS_KEY,
            ToolKind::SelectOption => crate::BROWSER_SELECT_OPTION,
            ToolKind::ConsoleExec => crate::BROWSER_CONSOLE_EXEC,
            ToolKind::Screenshot => crate::BROWSER_SCREENSHOT,
        }
    }

    fn description(self) -> &'static str {
        match self {
            ToolKind::Navigate => {
                "Open a web page (http:// or https:// only) in this run's headless browser and \
                 return it as text: title, URL, the readable text, then the interactive elements \
                 numbered [0], [1], ... for browser_click, browser_input and \
                 browser_select_option. The page stays open for the following calls and steps."
            }
            ToolKind::View => {
                "Show the current page as text: title, URL, readable text, and the visible \
                 interactive elements numbered [0], [1], ... Call it when the page may have \
                 changed; it renumbers the elements, so use the numbers of the latest view."
            }
            ToolKind::Click => {
                "Click element [index] of the latest browser_view (or the point x, y in CSS \
                 pixels of the window), wait until a page it opens has loaded or the page \
                 stops changing, and return the new view."
            }
            ToolKind::Input => {
                "Type text into the text field [index] of the latest browser_view (input, \
                 textarea or editable element), replacing what it held; with press_enter=true \
                 Enter is pressed afterwards, e.g. to submit a search form."
            }
            ToolKind::Scroll => {
                "Scroll the page up or down by most of a window, or to its top or bottom. \
                 browser_view already shows the text of the whole page; scroll for pages that \
                 load more as you go, or before a screenshot."
            }
            ToolKind::PressKey => {
                "Press a key on the focused element (or the page): Enter, Tab, Escape, \
                 Backspace, Delete, ArrowUp, ArrowDown, PageDown, Home, End, a single character, \
                 or a combination such as Control+a."
            }
            ToolKind::SelectOption => {
                "Choose an option of the dropdown <select> [index] of the latest browser_view, \
                 by the option's visible text or its value."
            }
            ToolKind::ConsoleExec => {
                "Run JavaScript in the current page and return the value of its last expression \
                 as JSON, or the exception it threw. Use it to read what the view does not show \
                 or to drive pages that need scripting; await is allowed."
            }
            ToolKind::Screenshot => {
                "Save a PNG screenshot of the current page in the workspace as \
                 screenshots/<n>.png and return its path; full_page=true captures the whole \
                 page instead of the visible window."
            }
        }
    }

    fn schema(self) -> Value {
        match self {
            ToolKind::Navigate => args::schema::<NavigateArgs>(),
            ToolKind::View => args::schema::<ViewArgs>(),
            ToolKind::Click => args::schema::<ClickArgs>(),
            ToolKind::Input => args::schema::<InputArgs>(),
            ToolKind::Scroll => args::schema::<ScrollArgs>(),
            ToolKind::PressKey => args::schema::<PressKeyArgs>(),
            ToolKind::SelectOption => args::schema::<SelectOptionArgs>(),
            ToolKind::ConsoleExec => args::schema::<ConsoleExecArgs>(),
            ToolKind::Screenshot => args::schema::<ScreenshotArgs>(),
        }
    }

    /// Parses and checks the arguments of a call.
    fn action(self, raw: Value) -> Result<Action, ToolError> {
        let name = self.name();
        Ok(match self {
            ToolKind::Navigate => {
                let a: NavigateArgs = args::parse(name, raw)?;
                Action::Navigate {
                    url: check_url(&a.url)?,
                }
            }
            ToolKind::View => {
                let _: ViewArgs = args::parse(name, raw)?;
                Action::View
            }
            ToolKind::Click => {
                let a: ClickArgs = args::parse(name, raw)?;
                Action::Click(match (a.index, a.x, a.y) {
                    (Some(index), None, None) => ClickTarget::Index(index),
                    (None, Some(x), Some(y)) if x.is_finite() && y.is_finite() => {
                        ClickTarget::Point { x, y }
                    }
                    _ => {
                        return Err(ToolError::InvalidArguments(format!(
                            "{name}: give either index (an element number from browser_view) \
                             or both x and y, not both"
                        )))
                    }
                })
            }
            ToolKind::Input => {
                let a: InputArgs = args::parse(name, raw)?;
                Action::Input {
                    index: a.index,
                    text: a.text,
                    press_enter: a.press_enter,
                }
            }
            ToolKind::Scroll => {
                let a: ScrollArgs = args::parse(name, raw)?;
                Action::Scroll(a.direction)
            }
            ToolKind::PressKey => {
                let a: PressKeyArgs = args::parse(name, raw)?;
                if a.key.is_empty() {
                    return Err(ToolError::InvalidArguments(format!(
                        "{name}: key must not be empty"
                    )));
                }
                Action::PressKey { key: a.key }
            }
            ToolKind::SelectOption => {
                let a: SelectOptionArgs = args::parse(name, raw)?;
                Action::SelectOption {
                    index: a.index,
                    option: a.option,
                }
            }
            ToolKind::ConsoleExec => {
                let a: ConsoleExecArgs = args::parse(name, raw)?;
                if a.js.trim().is_empty() {
                    return Err(ToolError::InvalidArguments(format!(
                        "{name}: js must not be empty"
                    )));
                }
                Action::ConsoleExec { js: a.js }
            }
            ToolKind::Screenshot => {
                let a: ScreenshotArgs = args::parse(name, raw)?;
                Action::Screenshot {
                    full_page: a.full_page,
                }
            }
        })
    }
}

/// Only http and https pages may be opened (no `file:`, `javascript:`, `chrome:`...).
fn check_url(url: &str) -> Result<String, ToolError> {
    const OTHER_SCHEMES: [&str; 9] = [
        "javascript",
        "file",
        "data",
        "about",
        "chrome",
        "mailto",
        "blob",
        "view-source",
        "ws",
    ];
    let url = url.trim();
    let refused = |scheme: &str| {
        ToolError::Refused(format!(
            "browser_navigate only opens http:// and https:// addresses, not {scheme}: ('{url}')"
        ))
    };
    if let Some((scheme, rest)) = url.split_once("://") {
        let scheme = scheme.to_ascii_lowercase();
        return match scheme.as_str() {
            "http" | "https" if !rest.trim_start_matches('/').is_empty() => Ok(url.to_string()),
            "http" | "https" => Err(ToolError::InvalidArguments(format!(
                "browser_navigate: '{url}' has no host"
            ))),
            _ => Err(refused(&scheme)),
        };
    }
    match url.split_once(':') {
        Some((scheme, _)) if OTHER_SCHEMES.contains(&scheme.to_ascii_lowercase().as_str()) => {
            Err(refused(&scheme.to_ascii_lowercase()))
        }
        _ => Err(no_scheme(url)),
    }
}

fn no_scheme(url: &str) -> ToolError {
    ToolError::InvalidArguments(format!(
        "browser_navigate: '{url}' is not a full address; write it with http:// or https://"
    ))
}

/// One browser tool.
pub(crate) struct BrowserTool {
    kind: ToolKind,
    browsers: Browsers,
    schema: Value,
}

impl BrowserTool {
    pub(crate) fn new(kind: ToolKind, browsers: Browsers) -> BrowserTool {
        BrowserTool {
            kind,
            browsers,
            schema: kind.schema(),
        }
    }
}

#[async_trait]
impl Tool for BrowserTool {
    fn name(&self) -> &str {
        self.kind.name()
    }

    fn description(&self) -> &str {
        self.kind.description()
    }

    fn parameters(&self) -> Value {
        self.schema.clone()
    }

    fn idempotent(&self) -> bool {
        matches!(self.kind, ToolKind::View | ToolKind::Screenshot)
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let action = self.kind.action(args)?;
        tracing::debug!(tool = self.kind.name(), run_id = %ctx.run_id, ?action, "browser call");
        self.browsers.perform(action, ctx).await
    }

    /// The run ended: its browser is closed (the nine tools share one pool, so the first
    /// call closes it and the others find nothing left).
    async fn close_run(&self, run_id: &str) {
        self.browsers.close_run(run_id).await;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn urls_must_be_http_or_https() {
        assert_eq!(
            check_url(" http://127.0.0.1:8/a ").unwrap(),
            "http://127.0.0.1:8/a"
        );
        assert!(check_url("HTTPS://example.com").is_ok());
        for refused in [
            "file:///etc/passwd",
            "javascript:alert(1)",
            "chrome://version",
            "ftp://x/y",
        ] {
            assert!(
                matches!(check_url(refused), Err(ToolError::Refused(m)) if m.contains("only opens http")),
                "{refused}"
            );
        }
        for bare in ["example.com", "www.example.com/path", "localhost:8080"] {
            let e = check_url(bare).unwrap_err();
            assert!(e.to_string().contains("http://"), "{bare}: {e}");
        }
        assert!(check_url("http://").is_err());
    }

    #[test]
    fn click_takes_an_index_or_a_point() {
        let k = ToolKind::Click;
        assert_eq!(
            k.action(json!({"index": 2})).unwrap(),
            Action::Click(ClickTarget::Index(2))
        );
        assert_eq!(
            k.action(json!({"x": 10.5, "y": 20})).unwrap(),
            Action::Click(ClickTarget::Point { x: 10.5, y: 20.0 })
        );
        for bad in [
            json!({}),
            json!({"x": 1}),
            json!({"index": 1, "x": 1, "y": 2}),
        ] {
            assert!(matches!(k.action(bad), Err(ToolError::InvalidArguments(_))));
        }
        assert!(matches!(
            k.action(json!({"index": -1})),
            Err(ToolError::InvalidArguments(m)) if m.contains("invalid value")
        ));
    }

    #[test]
    fn arguments_are_checked() {
        assert!(matches!(
            ToolKind::Scroll.action(json!({"direction": "sideways"})),
            Err(ToolError::InvalidArguments(m)) if m.contains("sideways")
        ));
        assert_eq!(
            ToolKind::Scroll
                .action(json!({"direction": "bottom"}))
                .unwrap(),
            Action::Scroll(crate::args::ScrollDirection::Bottom)
        );
        assert_eq!(ToolKind::View.action(Value::Null).unwrap(), Action::View);
        assert!(ToolKind::View.action(json!({"x": 1})).is_err());
        assert!(ToolKind::ConsoleExec.action(json!({"js": "  "})).is_err());
        assert_eq!(
            ToolKind::Input
                .action(json!({"index": 1, "text": "Ada"}))
                .unwrap(),
            Action::Input {
                index: 1,
                text: "Ada".into(),
                press_enter: false
            }
        );
        assert_eq!(
            ToolKind::Screenshot.action(json!({})).unwrap(),
            Action::Screenshot { full_page: false }
        );
    }
}
