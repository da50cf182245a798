//! Argument parsing and JSON schemas derived from the argument structs (the clean-up itself
//! is `domain::tools::args`, shared with the browser tools).

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use domain::ToolError;

/// Deserializes a tool's arguments; serde's message names the bad or missing field.
pub(crate) fn parse<T: DeserializeOwned>(tool: &str, args: Value) -> Result<T, ToolError> {
    domain::tools::args::parse_args(tool, args)
}

/// The JSON schema of `T` as a plain object schema, ready to show to a model.
pub(crate) fn schema<T: JsonSchema>() -> Value {
    domain::tools::args::tidy_schema(schemars::schema_for!(T).to_value())
}

#[cfg(test)]
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
