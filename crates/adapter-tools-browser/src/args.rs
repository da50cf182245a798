//! The tools' argument structs, their parsing and the JSON schemas derived from them
//! (the same pattern as `adapter-tools-shell`). Numbers arrive as [`NumberArg`] and are
//! range-checked in `tools.rs`, which also declares the ranges in the schemas. Fields with
//! plain `//` comments show no description to the model: the tool's description covers
//! them.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;

use domain::tools::args::NumberArg;
use domain::ToolError;

/// Arguments of `browser_navigate`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NavigateArgs {
    // The address to open, with http:// or https://.
    pub url: String,
}

/// Arguments of `browser_view` (none).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ViewArgs {}

/// Arguments of `browser_click`: an element number, or a point.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClickArgs {
    // The number of the element to click, as listed by browser_view, e.g. 3 for [3].
    #[serde(default)]
    #[schemars(with = "Option<u32>")]
    pub index: Option<NumberArg>,
    // Instead of index: CSS pixels from the left of the window.
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub x: Option<NumberArg>,
    // Instead of index: CSS pixels from the top of the window.
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub y: Option<NumberArg>,
}

/// Arguments of `browser_input`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InputArgs {
    // The number of the text field, as listed by browser_view.
    #[schemars(with = "u32")]
    pub index: NumberArg,
    // The text to type; it replaces what the field held.
    pub text: String,
    // Press Enter after typing (e.g. to submit a search form).
    #[serde(default)]
    pub press_enter: bool,
}

// Which way `browser_scroll` goes. (A plain comment: schemars would show a doc comment to
// the model.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
pub enum ScrollDirection {
    Up,
    Down,
    Top,
    Bottom,
}

impl ScrollDirection {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ScrollDirection::Up => "up",
            ScrollDirection::Down => "down",
            ScrollDirection::Top => "top",
            ScrollDirection::Bottom => "bottom",
        }
    }
}

/// Arguments of `browser_scroll`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScrollArgs {
    // up or down (by most of a screen), top or bottom (of the page).
    pub direction: ScrollDirection,
}

/// Arguments of `browser_press_key`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PressKeyArgs {
    // A key name such as Enter, Tab, Escape, Backspace, ArrowDown, PageDown, a single
    // character, or a combination such as Control+a.
    pub key: String,
}

/// Arguments of `browser_select_option`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SelectOptionArgs {
    // The number of the select element, as listed by browser_view.
    #[schemars(with = "u32")]
    pub index: NumberArg,
    // The option to choose, by its visible text or its value.
    pub option: String,
}

/// Arguments of `browser_console_exec`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConsoleExecArgs {
    /// e.g. document.title
    pub js: String,
}

/// Arguments of `browser_screenshot`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScreenshotArgs {
    // The whole page, not just the window.
    #[serde(default)]
    pub full_page: bool,
}

/// Deserializes a tool's arguments; serde's message names the bad or missing field.
pub(crate) fn parse<T: DeserializeOwned>(tool: &str, args: Value) -> Result<T, ToolError> {
    domain::tools::args::parse_args(tool, args)
}

/// The JSON schema of `T` as a plain object schema, ready to show to a model.
pub(crate) fn schema<T: JsonSchema>() -> Value {
    domain::tools::args::tidy_schema(schemars::schema_for!(T).to_value())
}
