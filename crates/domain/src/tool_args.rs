//! Tool arguments shared by the tool adapters: parsing with a clear message naming the bad
//! field, and tidying a derived JSON schema (e.g. from schemars) into the plain object schema
//! a model reads best. Plain `serde_json` work: no schema generator is needed here.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::error::ToolError;

/// Deserializes a tool's arguments; serde's message names the bad or missing field.
pub fn parse_args<T: DeserializeOwned>(tool: &str, args: Value) -> Result<T, ToolError> {
    let args = match args {
        Value::Null => Value::Object(Map::new()),
        other => other,
    };
    serde_json::from_value(args).map_err(|e| ToolError::InvalidArguments(format!("{tool}: {e}")))
}

/// A derived JSON schema as a plain object schema, ready to show to a model: no `$schema`,
/// `title` or top-level `description` (the tool's own description says it better), and
/// plainer properties (see [`tidy_property`]).
pub fn tidy_schema(mut value: Value) -> Value {
    if let Value::Object(map) = &mut value {
        map.remove("$schema");
        map.remove("title");
        map.remove("description");
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
pub fn tidy_property(property: &mut Value) {
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
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Demo {
        name: String,
        #[serde(default)]
        count: Option<u32>,
    }

    #[test]
    fn a_derived_schema_is_tidied() {
        let s = tidy_schema(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Demo",
            "description": "Demo arguments.",
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The name,\n on two lines."},
                "count": {"type": ["integer", "null"], "format": "uint32", "default": null}
            },
            "required": ["name"],
            "additionalProperties": false
        }));
        assert_eq!(
            s,
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "The name, on two lines."},
                    "count": {"type": "integer"}
                },
                "required": ["name"],
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn parse_errors_name_the_field_and_null_means_no_arguments() {
        let e = parse_args::<Demo>("demo", json!({})).expect_err("missing");
        assert!(
            matches!(&e, ToolError::InvalidArguments(m) if m.contains("`name`")),
            "{e}"
        );
        let e = parse_args::<Demo>("demo", json!({"name": "a", "nmae": 1})).expect_err("unknown");
        assert!(
            matches!(&e, ToolError::InvalidArguments(m) if m.contains("nmae")),
            "{e}"
        );
        let e = parse_args::<Demo>("demo", Value::Null).expect_err("null");
        assert!(matches!(&e, ToolError::InvalidArguments(m) if m.contains("missing field")));
    }
}
