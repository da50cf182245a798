//! The nine `browser_*` tools: one [`BrowserTool`] type, told apart by its [`ToolKind`],
//! all sharing one [`Browsers`] pool.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use domain::ports::{Tool, ToolContext, ToolEffect, ToolFamily, ToolOutput};
use domain::tools::args::{self as tool_args, IntRange, NumberArg, NumberRange};
use domain::ToolError;

use crate::args::{
    self, ClickArgs, ConsoleExecArgs, InputArgs, NavigateArgs, PressKeyArgs, ScreenshotArgs,
    ScrollArgs, SelectOptionArgs, ViewArgs,
};
use crate::pool::Browsers;
use crate::session::{Action, ClickTarget};
use crate::view::MAX_ELEMENTS;

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
                "Open a URL (http:// or https://); returns the page text and its interactive \
                 elements numbered [0], [1]..."
            }
            ToolKind::View => {
                "Show the current page's text and interactive elements, renumbered each view."
            }
            ToolKind::Click => {
                "Click element [index] of the latest view, or the point x, y; returns the new \
                 view."
            }
            ToolKind::Input => {
                "Replace the text of field [index] with `text`; press_enter submits it."
            }
            ToolKind::Scroll => "Scroll the page (the view already shows all its text).",
            ToolKind::PressKey => "Press a key, e.g. Enter, Tab, Escape, ArrowDown, Control+a.",
            ToolKind::SelectOption => {
                "Choose an option, by its text or value, in the dropdown [index]."
            }
            ToolKind::ConsoleExec => {
                "Run JavaScript in the page; returns its last expression as JSON (await \
                 allowed)."
            }
            ToolKind::Screenshot => {
                "Save a PNG of the page as screenshots/<n>.png; returns its path."
            }
        }
    }

    /// The parameters' schema, with the ranges of the numbers declared (`window`: the
    /// window's width and height in CSS pixels, the range of a click's point).
    fn schema(self, window: (u32, u32)) -> Value {
        let mut schema = match self {
            ToolKind::Navigate => args::schema::<NavigateArgs>(),
            ToolKind::View => args::schema::<ViewArgs>(),
            ToolKind::Click => args::schema::<ClickArgs>(),
            ToolKind::Input => args::schema::<InputArgs>(),
            ToolKind::Scroll => args::schema::<ScrollArgs>(),
            ToolKind::PressKey => args::schema::<PressKeyArgs>(),
            ToolKind::SelectOption => args::schema::<SelectOptionArgs>(),
            ToolKind::ConsoleExec => args::schema::<ConsoleExecArgs>(),
            ToolKind::Screenshot => args::schema::<ScreenshotArgs>(),
        };
        if matches!(
            self,
            ToolKind::Click | ToolKind::Input | ToolKind::SelectOption
        ) {
            INDEX.declare(&mut schema, "index");
        }
        if self == ToolKind::Click {
            let (x, y) = point_ranges(window);
            x.declare(&mut schema, "x");
            y.declare(&mut schema, "y");
        }
        schema
    }

    /// Parses and checks the arguments of a call (`window` as for [`ToolKind::schema`]).
    fn action(self, raw: Value, window: (u32, u32)) -> Result<Action, ToolError> {
        let name = self.name();
        Ok(match self {
            ToolKind::Navigate => {
                let a: NavigateArgs = args::parse(name, raw)?;
                tool_args::non_empty(name, "url", &a.url)?;
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
                let (x_range, y_range) = point_ranges(window);
                Action::Click(match (a.index, a.x, a.y) {
                    (Some(index), None, None) => ClickTarget::Index(check_index(name, &index)?),
                    (None, Some(x), Some(y)) => ClickTarget::Point {
                        x: x_range.check(name, "x", &x)?,
                        y: y_range.check(name, "y", &y)?,
                    },
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
                    index: check_index(name, &a.index)?,
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
                // A space is a key; only nothing at all is refused.
                if a.key.is_empty() {
                    return Err(ToolError::InvalidArguments(format!(
                        "{name}: `key` must not be empty"
                    )));
                }
                Action::PressKey { key: a.key }
            }
            ToolKind::SelectOption => {
                let a: SelectOptionArgs = args::parse(name, raw)?;
                Action::SelectOption {
                    index: check_index(name, &a.index)?,
                    option: a.option,
                }
            }
            ToolKind::ConsoleExec => {
                let a: ConsoleExecArgs = args::parse(name, raw)?;
                tool_args::non_empty(name, "js", &a.js)?;
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

/// The range of an element number: a view numbers at most [`MAX_ELEMENTS`] elements.
const INDEX: IntRange = IntRange::between(0, MAX_ELEMENTS as u64 - 1);

fn check_index(tool: &str, index: &NumberArg) -> Result<u32, ToolError> {
    let index = INDEX.check(tool, "index", index)?;
    u32::try_from(index)
        .map_err(|_| ToolError::InvalidArguments(format!("{tool}: `index` {index} is too large")))
}

/// The ranges of a click's `x` and `y`: inside the window.
fn point_ranges((width, height): (u32, u32)) -> (NumberRange, NumberRange) {
    (
        NumberRange::between(0.0, f64::from(width)),
        NumberRange::between(0.0, f64::from(height)),
    )
}

/// Only http and https pages may be opened (no `file:`, `javascript:`, `chrome:`...).
fn check_url(url: &str) -> Result<String, ToolError> {
    const OTHER_SCHEMES: [&str; 11] = [
        "javascript",
        "file",
        "filesystem",
        "devtools",
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

impl Browsers {
    /// All nine tools, sharing this pool: `browser_navigate`, `browser_view`,
    /// `browser_click`, `browser_input`, `browser_scroll`, `browser_press_key`,
    /// `browser_select_option`, `browser_console_exec`, `browser_screenshot`.
    pub fn tools(&self) -> Vec<Arc<dyn Tool>> {
        ToolKind::ALL
            .into_iter()
            .map(|kind| Arc::new(BrowserTool::new(kind, self.clone())) as Arc<dyn Tool>)
            .collect()
    }
}

/// One browser tool.
pub(crate) struct BrowserTool {
    kind: ToolKind,
    browsers: Browsers,
    schema: Value,
}

impl BrowserTool {
    pub(crate) fn new(kind: ToolKind, browsers: Browsers) -> BrowserTool {
        let schema = kind.schema(browsers.config().window);
        BrowserTool {
            kind,
            browsers,
            schema,
        }
    }
}

#[async_trait]
impl Tool for BrowserTool {
    fn name(&self) -> &str {
        self.kind.name()
    }
    fn family(&self) -> ToolFamily {
        ToolFamily::Browser
    }
    fn effect(&self) -> ToolEffect {
        ToolEffect::Network
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
        let action = self.kind.action(args, self.browsers.config().window)?;
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
mod tests {
    use serde_json::json;

    use super::*;

    const W: (u32, u32) = (1280, 800);

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
            "devtools://devtools/bundled/inspector.html",
            "devtools:x",
            "filesystem:http://x/temporary/a",
            "data:text/html,<p>x</p>",
            "FILE:///etc/shadow",
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
            k.action(json!({"index": 2}), W).unwrap(),
            Action::Click(ClickTarget::Index(2))
        );
        assert_eq!(
            k.action(json!({"x": 10.5, "y": 20}), W).unwrap(),
            Action::Click(ClickTarget::Point { x: 10.5, y: 20.0 })
        );
        for bad in [
            json!({}),
            json!({"x": 1}),
            json!({"index": 1, "x": 1, "y": 2}),
        ] {
            assert!(matches!(
                k.action(bad, W),
                Err(ToolError::InvalidArguments(_))
            ));
        }
        assert!(matches!(
            k.action(json!({"index": -1}), W),
            Err(ToolError::InvalidArguments(m)) if m.contains("between 0 and 399, got -1")
        ));
    }

    #[test]
    fn arguments_are_checked() {
        assert!(matches!(
            ToolKind::Scroll.action(json!({"direction": "sideways"}), W),
            Err(ToolError::InvalidArguments(m)) if m.contains("sideways")
        ));
        assert_eq!(
            ToolKind::Scroll
                .action(json!({"direction": "bottom"}), W)
                .unwrap(),
            Action::Scroll(crate::args::ScrollDirection::Bottom)
        );
        assert_eq!(ToolKind::View.action(Value::Null, W).unwrap(), Action::View);
        assert!(ToolKind::View.action(json!({"x": 1}), W).is_err());
        assert!(ToolKind::ConsoleExec
            .action(json!({"js": "  "}), W)
            .is_err());
        assert_eq!(
            ToolKind::Input
                .action(json!({"index": 1, "text": "Ada"}), W)
                .unwrap(),
            Action::Input {
                index: 1,
                text: "Ada".into(),
                press_enter: false
            }
        );
        assert_eq!(
            ToolKind::Screenshot.action(json!({}), W).unwrap(),
            Action::Screenshot { full_page: false }
        );
    }

    fn invalid(kind: ToolKind, args: Value) -> String {
        match kind.action(args.clone(), W) {
            Err(ToolError::InvalidArguments(m)) => m,
            other => panic!("{args}: {other:?}"),
        }
    }

    #[test]
    fn numbers_are_range_checked() {
        for (kind, args, message) in [
            (
                ToolKind::Click,
                json!({"index": -1}),
                "browser_click: `index` must be a whole number between 0 and 399, got -1",
            ),
            (
                ToolKind::Click,
                json!({"index": 400}),
                "browser_click: `index` must be a whole number between 0 and 399, got 400",
            ),
            (
                ToolKind::Click,
                json!({"index": 1.5}),
                "browser_click: `index` must be a whole number between 0 and 399, got 1.5",
            ),
            (
                ToolKind::Input,
                json!({"index": 3_000_000_000_000_000_u64, "text": "a"}),
                "browser_input: `index` must be a whole number between 0 and 399, got \
                 3000000000000000",
            ),
            (
                ToolKind::SelectOption,
                json!({"index": "first", "option": "a"}),
                "browser_select_option: `index` must be a whole number between 0 and 399, got \
                 \"first\"",
            ),
            (
                ToolKind::Click,
                json!({"x": 1281, "y": 10}),
                "browser_click: `x` must be a number between 0 and 1280, got 1281",
            ),
            (
                ToolKind::Click,
                json!({"x": 10, "y": -0.5}),
                "browser_click: `y` must be a number between 0 and 800, got -0.5",
            ),
            (
                ToolKind::Click,
                json!({"x": 10, "y": 1e300}),
                "browser_click: `y` must be a number between 0 and 800, got 1e+300",
            ),
            (
                ToolKind::Navigate,
                json!({"url": " "}),
                "browser_navigate: `url` must not be empty",
            ),
            (
                ToolKind::PressKey,
                json!({"key": ""}),
                "browser_press_key: `key` must not be empty",
            ),
            (
                ToolKind::ConsoleExec,
                json!({"js": "\n"}),
                "browser_console_exec: `js` must not be empty",
            ),
        ] {
            assert_eq!(invalid(kind, args), message);
        }
        // The ends of the ranges, and quoted numbers.
        assert_eq!(
            ToolKind::Click.action(json!({"index": 399}), W).unwrap(),
            Action::Click(ClickTarget::Index(399))
        );
        assert_eq!(
            ToolKind::Click
                .action(json!({"x": 1280, "y": 0}), W)
                .unwrap(),
            Action::Click(ClickTarget::Point { x: 1280.0, y: 0.0 })
        );
        assert_eq!(
            ToolKind::SelectOption
                .action(json!({"index": "0", "option": "a"}), W)
                .unwrap(),
            Action::SelectOption {
                index: 0,
                option: "a".into()
            }
        );
        assert_eq!(
            ToolKind::PressKey.action(json!({"key": " "}), W).unwrap(),
            Action::PressKey { key: " ".into() }
        );
    }

    #[test]
    fn schemas_declare_the_ranges() {
        let click = ToolKind::Click.schema((1024, 768));
        assert_eq!(
            click["properties"],
            json!({
                "index": {"type": "integer", "minimum": 0, "maximum": 399},
                "x": {"type": "number", "minimum": 0, "maximum": 1024},
                "y": {"type": "number", "minimum": 0, "maximum": 768}
            })
        );
        for kind in [ToolKind::Input, ToolKind::SelectOption] {
            let schema = kind.schema(W);
            assert_eq!(schema["properties"]["index"]["maximum"], 399, "{schema}");
            assert_eq!(schema["properties"]["index"]["minimum"], 0, "{schema}");
        }
    }
}
