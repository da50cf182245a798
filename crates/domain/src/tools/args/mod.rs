//! Tool arguments shared by the tool adapters: parsing with a clear message naming the bad
//! field, range checks of numeric arguments and non-empty checks of strings (each error
//! names the tool, the argument, the value and what was expected), declaring those ranges
//! in a schema, and tidying a derived JSON schema (e.g. from schemars) into the plain object
//! schema a model reads best. Plain `serde_json` work: no schema generator is needed here.

use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{Map, Number, Value};

use crate::error::ToolError;

/// Deserializes a tool's arguments; serde's message names the bad or missing field.
pub fn parse_args<T: DeserializeOwned>(tool: &str, args: Value) -> Result<T, ToolError> {
    let args = match args {
        Value::Null => Value::Object(Map::new()),
        other => other,
    };
    serde_json::from_value(args).map_err(|e| ToolError::InvalidArguments(format!("{tool}: {e}")))
}

/// A numeric argument exactly as the model sent it (any JSON value), checked later by an
/// [`IntRange`] or a [`NumberRange`]. Parsing into `u64` directly would turn a negative,
/// fractional or huge number into a serde message that does not say which argument it was.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(transparent)]
pub struct NumberArg(pub Value);

impl From<Value> for NumberArg {
    fn from(value: Value) -> Self {
        NumberArg(value)
    }
}

impl NumberArg {
    /// The value as a number: a JSON number, or a string holding one (small models quote
    /// numbers now and then).
    fn as_f64(&self) -> Option<f64> {
        match &self.0 {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => s.trim().parse::<f64>().ok().filter(|f| f.is_finite()),
            _ => None,
        }
    }

    /// The value as a whole number, when it is one that fits `u64` (`30`, `30.0`, `"30"`).
    fn as_u64(&self) -> Option<u64> {
        let exact = match &self.0 {
            Value::Number(n) => n.as_u64(),
            Value::String(s) => s.trim().parse::<u64>().ok(),
            _ => None,
        };
        exact.or_else(|| {
            let f = self.as_f64()?;
            // 2^64 as f64; anything at or above it does not fit.
            (f.fract() == 0.0 && (0.0..18_446_744_073_709_551_616.0).contains(&f))
                .then_some(f as u64)
        })
    }

    /// The value as the model wrote it, for messages: `-5`, `2.5`, `"abc"`.
    fn shown(&self) -> String {
        match &self.0 {
            Value::String(s) => format!("{s:?}"),
            other => other.to_string(),
        }
    }
}

/// The inclusive range a whole-number argument must fall in (`max: None`: no upper bound).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntRange {
    pub min: u64,
    pub max: Option<u64>,
}

impl IntRange {
    /// `min..=max`.
    pub const fn between(min: u64, max: u64) -> IntRange {
        IntRange {
            min,
            max: Some(max),
        }
    }

    /// `min..` with no upper bound.
    pub const fn at_least(min: u64) -> IntRange {
        IntRange { min, max: None }
    }

    /// `value` as a whole number in the range, or an error naming the tool, the argument,
    /// the range and the value, e.g. "shell_exec: `wait_secs` must be a whole number between
    /// 1 and 600, got 3000000000000000".
    pub fn check(&self, tool: &str, arg: &str, value: &NumberArg) -> Result<u64, ToolError> {
        match value.as_u64() {
            Some(n) if n >= self.min && self.max.is_none_or(|max| n <= max) => Ok(n),
            _ => Err(ToolError::InvalidArguments(format!(
                "{tool}: `{arg}` must be a whole number {}, got {}",
                self.describe(),
                value.shown()
            ))),
        }
    }

    /// [`IntRange::check`] of an optional argument: `None` stays `None`.
    pub fn check_opt(
        &self,
        tool: &str,
        arg: &str,
        value: Option<&NumberArg>,
    ) -> Result<Option<u64>, ToolError> {
        value.map(|v| self.check(tool, arg, v)).transpose()
    }

    /// Declares the range in `schema` (an object schema): `minimum` and `maximum` of
    /// property `arg`, which becomes an integer.
    pub fn declare(&self, schema: &mut Value, arg: &str) {
        let mut bounds = vec![("minimum", Value::from(self.min))];
        if let Some(max) = self.max {
            bounds.push(("maximum", Value::from(max)));
        }
        declare_bounds(schema, arg, "integer", bounds);
    }

    fn describe(&self) -> String {
        match self.max {
            Some(max) => format!("between {} and {max}", self.min),
            None => format!("of at least {}", self.min),
        }
    }
}

/// The inclusive range a number argument (fractions allowed) must fall in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NumberRange {
    pub min: f64,
    pub max: f64,
}

impl NumberRange {
    /// `min..=max`.
    pub const fn between(min: f64, max: f64) -> NumberRange {
        NumberRange { min, max }
    }

    /// `value` as a number in the range, or an error naming the tool, the argument, the
    /// range and the value.
    pub fn check(&self, tool: &str, arg: &str, value: &NumberArg) -> Result<f64, ToolError> {
        match value.as_f64() {
            Some(n) if (self.min..=self.max).contains(&n) => Ok(n),
            _ => Err(ToolError::InvalidArguments(format!(
                "{tool}: `{arg}` must be a number between {} and {}, got {}",
                self.min,
                self.max,
                value.shown()
            ))),
        }
    }

    /// Declares the range in `schema`: `minimum` and `maximum` of property `arg`, which
    /// becomes a number.
    pub fn declare(&self, schema: &mut Value, arg: &str) {
        let bound = |f: f64| Number::from_f64(f).map_or(Value::Null, Value::Number);
        // Whole bounds are written as integers: `1280`, not `1280.0`.
        let whole = |f: f64| {
            if f.fract() == 0.0 && (0.0..9.0e15).contains(&f) {
                Value::from(f as u64)
            } else {
                bound(f)
            }
        };
        declare_bounds(
            schema,
            arg,
            "number",
            vec![("minimum", whole(self.min)), ("maximum", whole(self.max))],
        );
    }
}

/// Sets the type and bounds of property `arg` of an object schema (created if missing).
fn declare_bounds(schema: &mut Value, arg: &str, kind: &str, bounds: Vec<(&str, Value)>) {
    let Some(properties) = schema
        .as_object_mut()
        .map(|s| {
            s.entry("properties")
                .or_insert_with(|| Value::Object(Map::new()))
        })
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    let property = properties
        .entry(arg)
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(property) = property {
        property.insert("type".to_string(), Value::String(kind.to_string()));
        property.remove("format");
        for (key, value) in bounds {
            property.insert(key.to_string(), value);
        }
    }
}

/// `value` if it holds more than whitespace, else an error naming the tool and the
/// argument: "file_read: `path` must not be empty".
pub fn non_empty<'a>(tool: &str, arg: &str, value: &'a str) -> Result<&'a str, ToolError> {
    if value.trim().is_empty() {
        Err(ToolError::InvalidArguments(format!(
            "{tool}: `{arg}` must not be empty"
        )))
    } else {
        Ok(value)
    }
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
/// are already marked by their absence from `required`), no `"format": "uint64"` or
/// `"double"`, and doc
/// comment line breaks become spaces.
pub fn tidy_property(property: &mut Value) {
    let Value::Object(map) = property else {
        return;
    };
    if let Some(Value::String(description)) = map.get_mut("description") {
        *description = description.split_whitespace().collect::<Vec<_>>().join(" ");
    }
    let numeric =
        |f: &str| f.starts_with("int") || f.starts_with("uint") || f == "double" || f == "float";
    if matches!(map.get("format"), Some(Value::String(f)) if numeric(f)) {
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
mod tests;
