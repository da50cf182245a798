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
            m.starts_with("shell_exec: `wait_secs` must be a whole number between 1 and 600, got "),
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
