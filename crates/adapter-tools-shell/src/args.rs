//! Argument parsing and JSON schemas derived from the argument structs.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use domain::ToolError;

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
