//! The tools' argument structs, their parsing and the JSON schemas derived from them
//! (the same pattern as `adapter-tools-shell`).

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{Map, Value};

use domain::ToolError;

/// Arguments of `browser_navigate`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NavigateArgs {
    /// The address to open; it must start with http:// or https://.
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
    /// The number of the element to click, as listed by browser_view, e.g. 3 for [3].
    #[serde(default)]
    #[schemars(range(min = 0))]
    pub index: Option<u32>,
    /// Instead of index: the horizontal position in CSS pixels from the left of the window.
    #[serde(default)]
    pub x: Option<f64>,
    /// Instead of index: the vertical position in CSS pixels from the top of the window.
    #[serde(default)]
    pub y: Option<f64>,
}

/// Arguments of `browser_input`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InputArgs {
    /// The number of the text field, as listed by browser_view.
    pub index: u32,
    /// The text to type; it replaces what the field held.
    pub text: String,
    /// Press Enter after typing (e.g. to submit a search form).
    #[serde(default)]
    pub press_enter: bool,
}

/// Which way `browser_scroll` goes.
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
    /// up or down (by most of a screen), top or bottom (of the page).
    pub direction: ScrollDirection,
}

/// Arguments of `browser_press_key`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PressKeyArgs {
    /// A key name such as Enter, Tab, Escape, Backspace, ArrowDown, PageDown, a single
    /// character, or a combination such as Control+a.
    pub key: String,
}

/// Arguments of `browser_select_option`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SelectOptionArgs {
    /// The number of the select element, as listed by browser_view.
    pub index: u32,
    /// The option to choose, by its visible text or its value.
    pub option: String,
}

/// Arguments of `browser_console_exec`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConsoleExecArgs {
    /// JavaScript to run in the page, e.g. document.title or
    /// [...document.querySelectorAll('h2')].map(h => h.innerText). The value of the last
    /// expression is returned as JSON; await is allowed.
    pub js: String,
}

/// Arguments of `browser_screenshot`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScreenshotArgs {
    /// Capture the whole page instead of the visible window.
    #[serde(default)]
    pub full_page: bool,
}

/// Deserializes a tool's arguments; serde's message names the bad or missing field.
pub(crate) fn parse<T: DeserializeOwned>(tool: &str, args: Value) -> Result<T, ToolError> {
    let args = match args {
        Value::Null => Value::Object(Map::new()),
        other => other,
    };
    serde_json::from_value(args).map_err(|e| ToolError::InvalidArguments(format!("{tool}: {e}")))
}

/// The JSON schema of `T` as a plain object schema, ready to show to a model.
pub(crate) fn schema<T: JsonSchema>() -> Value {
    let mut value = schemars::schema_for!(T).to_value();
    if let Value::Object(map) = &mut value {
        map.remove("$schema");
        map.remove("title");
        map.remove("description"); // the tool's own description says it better
        map.insert("type".to_string(), Value::String("object".to_string()));
        let properties = map
            .entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(properties) = properties {
            properties.values_mut().for_each(tidy_property);
        }
    }
    value
}

/// Makes a property schema plainer for models:
/// `{"type": ["integer", "null"], "default": null}` → `{"type": "integer"}` (optional fields
/// are already marked by their absence from `required`), no `"format": "uint64"`, and doc
/// comment line breaks become spaces.
fn tidy_property(property: &mut Value) {
    let Value::Object(map) = property else {
        return;
    };
    if let Some(Value::String(description)) = map.get_mut("description") {
        *description = description.split_whitespace().collect::<Vec<_>>().join(" ");
    }
    if matches!(map.get("format"), Some(Value::String(f)) if f.starts_with("int") || f.starts_with("uint"))
    {
        map.remove("format");
    }
    if let Some(Value::Array(types)) = map.get("type") {
        let non_null: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
        if let [single] = non_null.as_slice() {
            let single = (*single).clone();
            map.insert("type".to_string(), single);
        }
    }
    if map.get("default") == Some(&Value::Null) {
        map.remove("default");
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    /// Demo arguments.
    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Demo {
        /// The name,
        /// on two lines.
        name: String,
        /// How many.
        #[serde(default)]
        count: Option<u32>,
        #[serde(default)]
        flag: bool,
    }

    #[test]
    fn schema_is_a_clean_object_schema() {
        let s = schema::<Demo>();
        assert!(s.get("$schema").is_none());
        assert!(s.get("title").is_none());
        assert_eq!(s["type"], "object");
        assert_eq!(s["required"], json!(["name"]));
        assert_eq!(s["additionalProperties"], json!(false));
        assert!(s.get("description").is_none());
        assert_eq!(
            s["properties"]["name"]["description"],
            "The name, on two lines."
        );
        assert_eq!(s["properties"]["count"]["type"], "integer");
        assert!(s["properties"]["count"].get("format").is_none());
        assert!(s["properties"]["count"].get("default").is_none());
        assert_eq!(s["properties"]["flag"]["type"], "boolean");
    }

    #[test]
    fn errors_name_the_field() {
        let e = parse::<Demo>("demo", json!({})).unwrap_err();
        assert!(
            matches!(&e, ToolError::InvalidArguments(m) if m.contains("`name`")),
            "{e}"
        );
        let e = parse::<Demo>("demo", json!({"name": 3})).unwrap_err();
        assert!(
            matches!(&e, ToolError::InvalidArguments(m) if m.contains("invalid type")),
            "{e}"
        );
        let e = parse::<Demo>("demo", json!({"name": "a", "nmae": 1})).unwrap_err();
        assert!(
            matches!(&e, ToolError::InvalidArguments(m) if m.contains("nmae")),
            "{e}"
        );
    }

    #[test]
    fn null_means_no_arguments() {
        let e = parse::<Demo>("demo", Value::Null).unwrap_err();
        assert!(matches!(&e, ToolError::InvalidArguments(m) if m.contains("missing field")));
    }
}
