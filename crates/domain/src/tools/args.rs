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

    fn num(v: Value) -> NumberArg {
        NumberArg(v)
    }

    #[test]
    fn whole_numbers_in_range_pass() {
        let r = IntRange::between(1, 600);
        for (v, want) in [
            (json!(1), 1),
            (json!(600), 600),
            (json!(30.0), 30),
            (json!("45"), 45),
            (json!(" 7 "), 7),
        ] {
            assert_eq!(
                r.check("t", "secs", &num(v.clone())).ok(),
                Some(want),
                "{v}"
            );
        }
        assert_eq!(r.check_opt("t", "secs", None).ok(), Some(None));
        assert_eq!(
            r.check_opt("t", "secs", Some(&num(json!(2)))).ok(),
            Some(Some(2))
        );
        let unbounded = IntRange::at_least(1);
        assert_eq!(
            unbounded.check("t", "line", &num(json!(u64::MAX))).ok(),
            Some(u64::MAX)
        );
    }

    #[test]
    fn out_of_range_values_name_the_tool_argument_range_and_value() {
        let r = IntRange::between(1, 600);
        let cases = [
            (json!(3_000_000_000_000_000_u64), "3000000000000000"),
            (json!(0), "got 0"),
            (json!(601), "got 601"),
            (json!(-5), "got -5"),
            (json!(2.5), "got 2.5"),
            (json!(1e300), "got 1e+300"),
            (json!("soon"), "got \"soon\""),
            (json!(true), "got true"),
            (json!([1]), "got [1]"),
        ];
        for (v, shown) in cases {
            let e = r
                .check("shell_exec", "wait_secs", &num(v.clone()))
                .expect_err("out of range");
            let ToolError::InvalidArguments(m) = &e else {
                panic!("{v}: {e}");
            };
            assert!(
                m.starts_with(
                    "shell_exec: `wait_secs` must be a whole number between 1 and 600, got "
                ),
                "{m}"
            );
            assert!(m.contains(shown), "{m}");
        }
        let e = IntRange::at_least(1)
            .check("file_read", "start_line", &num(json!(0)))
            .expect_err("zero");
        assert_eq!(
            e.to_string(),
            "invalid arguments: file_read: `start_line` must be a whole number of at least 1, got 0"
        );
    }

    #[test]
    fn fractional_ranges() {
        let r = NumberRange::between(0.0, 1280.0);
        assert_eq!(r.check("t", "x", &num(json!(10.5))).ok(), Some(10.5));
        assert_eq!(r.check("t", "x", &num(json!(0))).ok(), Some(0.0));
        assert_eq!(r.check("t", "x", &num(json!("12"))).ok(), Some(12.0));
        for bad in [
            json!(-1),
            json!(1280.5),
            json!(1e308),
            json!("NaN"),
            json!(null),
        ] {
            let e = r
                .check("browser_click", "x", &num(bad.clone()))
                .expect_err("bad");
            assert!(
                matches!(&e, ToolError::InvalidArguments(m)
                    if m.starts_with("browser_click: `x` must be a number between 0 and 1280, got")),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn ranges_are_declared_in_the_schema() {
        let mut s = json!({
            "type": "object",
            "properties": {
                "secs": {"type": "integer", "description": "d", "minimum": 0, "format": "uint64"},
                "x": {"type": "number"}
            }
        });
        IntRange::between(1, 600).declare(&mut s, "secs");
        IntRange::at_least(1).declare(&mut s, "line");
        NumberRange::between(0.0, 800.0).declare(&mut s, "x");
        NumberRange::between(-0.5, 2.5).declare(&mut s, "f");
        assert_eq!(
            s["properties"],
            json!({
                "secs": {"type": "integer", "description": "d", "minimum": 1, "maximum": 600},
                "line": {"type": "integer", "minimum": 1},
                "x": {"type": "number", "minimum": 0, "maximum": 800},
                "f": {"type": "number", "minimum": -0.5, "maximum": 2.5}
            })
        );
    }

    #[test]
    fn empty_strings_are_refused() {
        assert_eq!(non_empty("t", "path", "a.txt").ok(), Some("a.txt"));
        for empty in ["", "  ", "\n\t"] {
            let e = non_empty("file_read", "path", empty).expect_err("empty");
            assert_eq!(
                e.to_string(),
                "invalid arguments: file_read: `path` must not be empty"
            );
        }
    }

    #[test]
    fn number_arguments_parse_from_any_value() {
        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Args {
            #[serde(default)]
            secs: Option<NumberArg>,
        }
        let a: Args = parse_args("t", json!({"secs": -3})).expect("any value");
        assert_eq!(a.secs, Some(NumberArg(json!(-3))));
        let a: Args = parse_args("t", json!({"secs": null})).expect("null");
        assert_eq!(a.secs, None);
        let a: Args = parse_args("t", json!({})).expect("absent");
        assert_eq!(a.secs, None);
    }

    #[test]
    fn fractional_number_formats_are_dropped() {
        let mut p = json!({"type": ["number", "null"], "format": "double"});
        tidy_property(&mut p);
        assert_eq!(p, json!({"type": "number"}));
    }
}
