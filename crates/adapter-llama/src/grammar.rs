//! JSON schema → llama.cpp GBNF grammar, bounded everywhere.
//!
//! A 135M model given an unbounded grammar rambles until the token cap and ends with
//! invalid JSON, so every string, array, object and number produced here has a maximum
//! size, and whitespace is at most one space between tokens. Supported schema keywords:
//! `type` (also a list), `properties`, `required`, `items`, `enum`, `const`, `anyOf`,
//! `oneOf`, `minLength`/`maxLength`, `minItems`/`maxItems`, `minimum`/`maximum` (and the
//! exclusive ones: integers get bounded digit counts and a sign only when negatives are
//! allowed). Anything else (`$ref`,
//! `allOf`, `pattern`, `format`, ...) falls back to a generic bounded JSON value.

use domain::llm::ToolSchema;
use serde_json::Value;

/// The longest string the grammar lets the model write (characters).
pub const MAX_STRING_CHARS: u32 = 400;
/// The longest plain answer (`{"content": ...}`) the grammar lets the model write.
pub const MAX_CONTENT_CHARS: u32 = 2000;
/// The most items of an array.
pub const MAX_ARRAY_ITEMS: u32 = 16;
/// The most members of an object whose properties the schema does not name.
pub const MAX_FREE_MEMBERS: u32 = 12;
/// How deep a generic (schema-less) JSON value may nest.
const GENERIC_DEPTH: u32 = 3;
/// The deepest schema nesting followed before falling back to a generic value.
const MAX_SCHEMA_DEPTH: u32 = 8;

/// Shared primitive rules every grammar gets.
const PRIMITIVES: &str = r#"sp ::= " "?
char ::= [^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F])
int ::= "-"? ("0" | [1-9] [0-9]{0,15})
num ::= int ("." [0-9]{1,8})? ([eE] [-+]? [0-9]{1,3})?
bool ::= "true" | "false"
null ::= "null"
key ::= "\"" char{1,40} "\""
"#;

/// Builds a grammar; rules are numbered `r1`, `r2`, ... and deduplicated by body.
struct Builder {
    rules: Vec<(String, String)>,
}

impl Builder {
    fn new() -> Builder {
        Builder { rules: Vec::new() }
    }

    /// Adds `body` as a rule (or finds an identical one) and returns its name.
    fn rule(&mut self, body: String) -> String {
        if let Some((name, _)) = self.rules.iter().find(|(_, b)| *b == body) {
            return name.clone();
        }
        let name = format!("r{}", self.rules.len() + 1);
        self.rules.push((name.clone(), body));
        name
    }

    fn finish(self, root: &str) -> String {
        let mut out = format!("root ::= {root}\n");
        out.push_str(PRIMITIVES);
        for (name, body) in &self.rules {
            out.push_str(&format!("{name} ::= {body}\n"));
        }
        out
    }

    /// A JSON string of `min..=max` characters.
    fn string(&mut self, min: u32, max: u32) -> String {
        let max = max.max(min);
        self.rule(format!(r#""\"" char{{{min},{max}}} "\"""#))
    }

    /// A generic JSON value nested at most `depth` levels.
    fn generic_value(&mut self, depth: u32) -> String {
        let s = self.string(0, MAX_STRING_CHARS);
        if depth == 0 {
            return self.rule(format!("{s} | num | bool | null"));
        }
        let inner = self.generic_value(depth - 1);
        let obj = self.generic_object_with(&inner);
        let max_more = MAX_ARRAY_ITEMS - 1;
        let arr = self.rule(format!(
            r#""[" sp ({inner} ("," sp {inner}){{0,{max_more}}})? sp "]""#
        ));
        self.rule(format!("{s} | num | bool | null | {obj} | {arr}"))
    }

    /// An object with free keys whose values follow rule `value`.
    fn generic_object_with(&mut self, value: &str) -> String {
        let member = self.rule(format!(r#"key ":" sp {value}"#));
        let max_more = MAX_FREE_MEMBERS - 1;
        self.rule(format!(
            r#""{{" sp ({member} ("," sp {member}){{0,{max_more}}})? sp "}}""#
        ))
    }

    /// A generic JSON object (any keys, bounded).
    fn generic_object(&mut self) -> String {
        let value = self.generic_value(GENERIC_DEPTH - 1);
        self.generic_object_with(&value)
    }

    /// The rule for a value matching `schema`.
    fn schema(&mut self, schema: &Value, depth: u32) -> String {
        if depth > MAX_SCHEMA_DEPTH {
            return self.generic_value(1);
        }
        let Some(obj) = schema.as_object() else {
            // `true`, `{}`-like or invalid schemas: anything (bounded).
            return self.generic_value(GENERIC_DEPTH - 1);
        };
        if let Some(c) = obj.get("const") {
            return self.rule(literal(c));
        }
        if let Some(Value::Array(options)) = obj.get("enum") {
            if !options.is_empty() {
                let alts: Vec<String> = options.iter().map(literal).collect();
                return self.rule(alts.join(" | "));
            }
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(options)) = obj.get(key) {
                if !options.is_empty() {
                    let alts: Vec<String> =
                        options.iter().map(|o| self.schema(o, depth + 1)).collect();
                    return self.rule(alts.join(" | "));
                }
            }
        }
        match obj.get("type") {
            Some(Value::String(t)) => self.typed(t, obj, depth),
            Some(Value::Array(types)) => {
                let alts: Vec<String> = types
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|t| self.typed(t, obj, depth))
                    .collect();
                if alts.is_empty() {
                    self.generic_value(GENERIC_DEPTH - 1)
                } else {
                    self.rule(alts.join(" | "))
                }
            }
            _ if obj.contains_key("properties") => self.typed("object", obj, depth),
            _ if obj.contains_key("items") => self.typed("array", obj, depth),
            _ => self.generic_value(GENERIC_DEPTH - 1),
        }
    }

    fn typed(&mut self, t: &str, obj: &serde_json::Map<String, Value>, depth: u32) -> String {
        let bound = |k: &str| {
            obj.get(k)
                .and_then(Value::as_u64)
                .map(|n| u32::try_from(n).unwrap_or(u32::MAX))
        };
        match t {
            "string" => {
                let max = bound("maxLength").map_or(MAX_STRING_CHARS, |m| m.min(MAX_STRING_CHARS));
                let min = bound("minLength").unwrap_or(0).min(max);
                self.string(min, max)
            }
            "integer" | "number" => {
                let (lo, hi) = numeric_bounds(obj, t == "integer");
                if lo.is_none() && hi.is_none() {
                    return if t == "integer" { "int" } else { "num" }.to_string();
                }
                let int = self.rule(bounded_int(lo, hi));
                if t == "integer" {
                    int
                } else {
                    // No exponent: it would escape the bounds.
                    self.rule(format!(r#"{int} ("." [0-9]{{1,8}})?"#))
                }
            }
            "boolean" => "bool".to_string(),
            "null" => "null".to_string(),
            "array" => {
                let item = match obj.get("items") {
                    Some(items) => self.schema(items, depth + 1),
                    None => self.generic_value(1),
                };
                let max = bound("maxItems").map_or(MAX_ARRAY_ITEMS, |m| m.min(MAX_ARRAY_ITEMS));
                let min = bound("minItems").unwrap_or(0).min(max);
                if max == 0 {
                    return self.rule(r#""[" sp "]""#.to_string());
                }
                let more_max = max - 1;
                let body = if min == 0 {
                    format!(r#""[" sp ({item} ("," sp {item}){{0,{more_max}}})? sp "]""#)
                } else {
                    let more_min = min - 1;
                    format!(r#""[" sp {item} ("," sp {item}){{{more_min},{more_max}}} sp "]""#)
                };
                self.rule(body)
            }
            "object" => self.object(obj, depth),
            _ => self.generic_value(GENERIC_DEPTH - 1),
        }
    }

    /// An object with the schema's properties: required ones first (in declared order),
    /// then the optional ones, each at most once, in declared order.
    fn object(&mut self, obj: &serde_json::Map<String, Value>, depth: u32) -> String {
        let props = match obj.get("properties") {
            Some(Value::Object(p)) if !p.is_empty() => p,
            _ => return self.generic_object(),
        };
        let required: Vec<&str> = match obj.get("required") {
            Some(Value::Array(r)) => r.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let mut req_members = Vec::new();
        let mut opt_members = Vec::new();
        for (name, sub) in props {
            let value = self.schema(sub, depth + 1);
            let member = format!(
                r#"{} ":" sp {value}"#,
                literal(&Value::String(name.clone()))
            );
            if required.contains(&name.as_str()) {
                req_members.push(member);
            } else {
                opt_members.push(member);
            }
        }
        // rest[i]: the optional members i.., each optional, each after a comma.
        let n = opt_members.len();
        let mut rest = vec![String::new(); n + 1];
        for i in (0..n).rev() {
            let tail = if rest[i + 1].is_empty() {
                String::new()
            } else {
                format!(" {}", rest[i + 1])
            };
            rest[i] = self.rule(format!(r#"("," sp {})?{tail}"#, opt_members[i]));
        }
        let body = if req_members.is_empty() {
            // first: the first present optional member is i, then any of the later ones.
            let mut first = String::new();
            for i in (0..n).rev() {
                let with_tail = if rest[i + 1].is_empty() {
                    opt_members[i].clone()
                } else {
                    format!("{} {}", opt_members[i], rest[i + 1])
                };
                first = if first.is_empty() {
                    self.rule(with_tail)
                } else {
                    self.rule(format!("{with_tail} | {first}"))
                };
            }
            format!(r#""{{" sp ({first})? sp "}}""#)
        } else {
            let mut body = format!(r#""{{" sp {}"#, req_members.join(r#" "," sp "#));
            if !rest[0].is_empty() {
                body.push(' ');
                body.push_str(&rest[0]);
            }
            body.push_str(r#" sp "}""#);
            body
        };
        self.rule(body)
    }
}

/// The integer bounds of a numeric schema: `minimum`/`maximum`, or the exclusive ones (for
/// an integer, the next integer inside). For a number, the integer part's bounds.
fn numeric_bounds(
    obj: &serde_json::Map<String, Value>,
    integer: bool,
) -> (Option<i64>, Option<i64>) {
    let get = |k: &str| obj.get(k).and_then(Value::as_f64).filter(|v| v.is_finite());
    let clamp = |v: f64| v.clamp(-1e15, 1e15) as i64;
    let lo = match (get("minimum"), get("exclusiveMinimum")) {
        (Some(m), _) => Some(clamp(m.ceil())),
        (None, Some(m)) if integer => Some(clamp(m.floor()) + 1),
        (None, Some(m)) => Some(clamp(m.floor())),
        (None, None) => None,
    };
    let hi = match (get("maximum"), get("exclusiveMaximum")) {
        (Some(m), _) => Some(clamp(m.floor())),
        (None, Some(m)) if integer => Some(clamp(m.ceil()) - 1),
        (None, Some(m)) => Some(clamp(m.ceil())),
        (None, None) => None,
    };
    (lo, hi)
}

/// A GBNF body for integers whose digit count (and leading digit) keep them near
/// `lo..=hi`: no `-` unless `lo` is negative (or unknown), at most as many digits as the
/// bound (with a first digit no larger than the bound's), no `0` when `lo` > 0. Not exact
/// (`1..3600` also lets 3999 through), but a model cannot write 3000000000000000.
fn bounded_int(lo: Option<i64>, hi: Option<i64>) -> String {
    const UNBOUNDED: u64 = 9_999_999_999_999_999;
    let mut alts = Vec::new();
    if hi.is_none_or(|h| h >= 0) {
        if lo.is_none_or(|l| l <= 0) {
            alts.push(r#""0""#.to_string());
        }
        if hi != Some(0) {
            let max = hi.map_or(UNBOUNDED, |h| h.unsigned_abs());
            alts.push(positive_digits(max));
        }
    }
    if lo.is_none_or(|l| l < 0) {
        let max = lo.map_or(UNBOUNDED, |l| l.unsigned_abs());
        let max = match hi {
            // Every allowed value is negative: at least as close to zero as -hi.
            Some(h) if h < 0 => max.max(h.unsigned_abs()),
            _ => max,
        };
        alts.push(format!(r#""-" ({})"#, positive_digits(max)));
    }
    if alts.is_empty() {
        // lo > hi: an impossible schema; any small integer.
        alts.push(r#""0""#.to_string());
    }
    alts.join(" | ")
}

/// Positive integers (no leading zero) up to the digit count and leading digit of `max` ≥ 1.
fn positive_digits(max: u64) -> String {
    let digits = max.max(1).to_string();
    let n = digits.len();
    let lead = digits.as_bytes()[0] - b'0';
    let full = if n == 1 {
        format!("[1-{lead}]")
    } else {
        format!("[1-{lead}] [0-9]{{{}}}", n - 1)
    };
    match n {
        1 => full,
        2 => format!("[1-9] | {full}"),
        _ => format!("[1-9] [0-9]{{0,{}}} | {full}", n - 2),
    }
}

/// A GBNF literal matching exactly the JSON text of `value`.
fn literal(value: &Value) -> String {
    gbnf_quote(&value.to_string())
}

/// `text` as a GBNF double-quoted literal.
fn gbnf_quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\x{:02X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The rules of one JSON tool call `{"tool": NAME, "arguments": {...}}` for each of `tools`.
fn tool_call_alts(b: &mut Builder, tools: &[&ToolSchema]) -> Vec<String> {
    let mut alts = Vec::new();
    for tool in tools {
        let mut params = tool.parameters.clone();
        // A tool's parameters are an object even when the schema forgets to say so.
        if let Value::Object(o) = &mut params {
            o.entry("type")
                .or_insert_with(|| Value::String("object".into()));
        }
        let args = if params.is_object() {
            b.schema(&params, 0)
        } else {
            b.generic_object()
        };
        let name = literal(&Value::String(tool.name.clone()));
        alts.push(b.rule(format!(
            r#""{{" sp "\"tool\":" sp {name} "," sp "\"arguments\":" sp {args} sp "}}""#
        )));
    }
    alts
}

/// The grammar for one tool call `{"tool": NAME, "arguments": {...}}` over `tools` (each
/// tool's arguments shaped by its JSON schema), plus, when `allow_content`, the plain
/// answer `{"content": "..."}`.
pub fn tool_call_grammar(tools: &[&ToolSchema], allow_content: bool) -> String {
    let mut b = Builder::new();
    let mut alts = tool_call_alts(&mut b, tools);
    if allow_content || alts.is_empty() {
        let s = b.string(1, MAX_CONTENT_CHARS);
        alts.push(b.rule(format!(r#""{{" sp "\"content\":" sp {s} sp "}}""#)));
    }
    let root = alts.join(" | ");
    b.finish(&root)
}

/// The longest question or final answer of the code surface.
pub const MAX_QUESTION_CHARS: u32 = 400;
pub const MAX_ANSWER_CHARS: u32 = 1500;

/// What the code surface (docs/code-actions.md) lets a reply be.
#[derive(Debug, Clone, Default)]
pub struct CodeForms<'a> {
    /// A program in a fenced block: ```` ```python ```` or ```` ```bash ````.
    pub program: bool,
    /// `ASK: question`.
    pub ask: bool,
    /// `DONE: answer` and `FAILED: why`.
    pub finish: bool,
    /// Other tools, as JSON calls.
    pub others: Vec<&'a ToolSchema>,
}

/// The grammar of the code surface: a fenced program, a question, the final answer, or a
/// JSON call of another tool.
pub fn code_action_grammar(forms: &CodeForms<'_>) -> String {
    let mut b = Builder::new();
    let mut alts = Vec::new();
    if forms.program {
        // At least one character that is not a backtick: no empty program. Nor one that
        // starts with `<`, as no program does: a template's `<the program>` copied.
        let body = b.rule(r#"[^`<] ([^`] | "`" [^`] | "``" [^`])* "```""#.to_string());
        alts.push(b.rule(format!(r#""```" ("python" | "bash") "\n" {body}"#)));
    }
    if forms.ask {
        alts.push(b.rule(format!(r#""ASK: " [^\n]{{1,{MAX_QUESTION_CHARS}}}"#)));
    }
    if forms.finish {
        alts.push(b.rule(format!(
            r#"("DONE: " | "FAILED: ") [^\x00]{{1,{MAX_ANSWER_CHARS}}}"#
        )));
    }
    alts.extend(tool_call_alts(&mut b, &forms.others));
    if alts.is_empty() {
        let s = b.string(1, MAX_CONTENT_CHARS);
        alts.push(b.rule(format!(r#""{{" sp "\"content\":" sp {s} sp "}}""#)));
    }
    b.finish(&alts.join(" | "))
}

/// The grammar for a JSON object: shaped by `schema` when given, else any bounded object.
pub fn json_grammar(schema: Option<&Value>) -> String {
    let mut b = Builder::new();
    let root = match schema {
        Some(s) => b.schema(s, 0),
        None => b.generic_object(),
    };
    b.finish(&root)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn shell_tool() -> ToolSchema {
        ToolSchema {
            name: "shell_exec".into(),
            description: "Run a shell command".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "command": {"type": "string"},
                    "timeout_secs": {"type": "integer"}
                },
                "required": ["command"]
            }),
        }
    }

    #[test]
    fn tool_grammar_names_every_tool_and_bounds_strings() {
        let t1 = shell_tool();
        let t2 = ToolSchema {
            name: "file_read".into(),
            description: "Read a file".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string", "maxLength": 100}}, "required": ["path"]}),
        };
        let g = tool_call_grammar(&[&t1, &t2], false);
        assert!(g.starts_with("root ::= "), "{g}");
        assert!(g.contains(r#""\"shell_exec\"""#), "{g}");
        assert!(g.contains(r#""\"file_read\"""#), "{g}");
        assert!(g.contains(r#""\"command\"""#), "{g}");
        assert!(g.contains(r#""\"timeout_secs\"""#), "{g}");
        assert!(g.contains("char{0,400}"), "{g}");
        assert!(g.contains("char{0,100}"), "{g}");
        assert!(!g.contains("\"content\""), "{g}");
        // no unbounded repetition anywhere
        assert!(
            !g.contains(")*") && !g.contains(")+") && !g.contains("]*"),
            "{g}"
        );
    }

    #[test]
    fn content_alternative_only_when_asked() {
        let t = shell_tool();
        let g = tool_call_grammar(&[&t], true);
        assert!(g.contains(r#""\"content\":""#), "{g}");
        assert!(g.contains("char{1,2000}"), "{g}");
    }

    #[test]
    fn enums_become_literal_alternatives_and_arrays_are_bounded() {
        let schema = json!({
            "type": "object",
            "properties": {
                "mode": {"enum": ["fast", "slow"]},
                "steps": {"type": "array", "items": {"type": "string"}, "maxItems": 5},
                "flag": {"type": "boolean"},
                "ratio": {"type": "number"}
            },
            "required": ["mode", "steps"]
        });
        let g = json_grammar(Some(&schema));
        assert!(g.contains(r#""\"fast\"" | "\"slow\"""#), "{g}");
        assert!(g.contains("{0,4}"), "{g}");
        assert!(g.contains("bool") && g.contains("num"), "{g}");
    }

    #[test]
    fn optional_only_objects_and_generic_objects_are_bounded() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}});
        let g = json_grammar(Some(&schema));
        assert!(g.contains(r#""\"a\"""#) && g.contains(r#""\"b\"""#), "{g}");
        let g = json_grammar(None);
        assert!(g.contains("{0,11}"), "{g}");
        assert!(g.contains("key"), "{g}");
    }

    #[test]
    fn bounded_integers_have_bounded_digits_and_sign() {
        assert_eq!(
            bounded_int(Some(1), Some(3600)),
            r#"[1-9] [0-9]{0,2} | [1-3] [0-9]{3}"#
        );
        assert_eq!(
            bounded_int(Some(0), Some(600)),
            r#""0" | [1-9] [0-9]{0,1} | [1-6] [0-9]{2}"#
        );
        assert_eq!(bounded_int(Some(0), Some(9)), r#""0" | [1-9]"#);
        assert_eq!(
            bounded_int(Some(0), Some(50)),
            r#""0" | [1-9] | [1-5] [0-9]{1}"#
        );
        assert_eq!(
            bounded_int(Some(-20), Some(5)),
            r#""0" | [1-5] | "-" ([1-9] | [1-2] [0-9]{1})"#
        );
        assert_eq!(bounded_int(Some(-5), Some(-2)), r#""-" ([1-5])"#);
        assert_eq!(bounded_int(Some(0), Some(0)), r#""0""#);
        // Only a minimum: sign fixed, digits as for any integer.
        assert_eq!(
            bounded_int(Some(1), None),
            r#"[1-9] [0-9]{0,14} | [1-9] [0-9]{15}"#
        );
        assert!(bounded_int(None, Some(10)).contains(r#""-""#));
    }

    #[test]
    fn schema_bounds_reach_the_grammar() {
        let schema = json!({
            "type": "object",
            "properties": {
                "wait_secs": {"type": "integer", "minimum": 1, "maximum": 600},
                "offset": {"type": "integer", "minimum": 0},
                "delta": {"type": "integer", "exclusiveMinimum": -11, "exclusiveMaximum": 10},
                "ratio": {"type": "number", "minimum": 0, "maximum": 1},
                "name": {"type": "string", "minLength": 2, "maxLength": 8}
            },
            "required": ["wait_secs"]
        });
        let g = json_grammar(Some(&schema));
        assert!(g.contains("[1-9] [0-9]{0,1} | [1-6] [0-9]{2}"), "{g}");
        assert!(g.contains(r#""-" ([1-9] | [1-1] [0-9]{1})"#), "{g}");
        assert!(g.contains(r#""0" | [1-1]"#), "{g}");
        assert!(g.contains(r#" ("." [0-9]{1,8})?"#), "{g}");
        assert!(g.contains("char{2,8}"), "{g}");
        // wait_secs's rule has no sign.
        let wait_rule = g
            .lines()
            .find(|l| l.ends_with("::= [1-9] [0-9]{0,1} | [1-6] [0-9]{2}"))
            .unwrap();
        assert!(!wait_rule.contains(r#""-""#), "{wait_rule}");
        let t = ToolSchema {
            name: "shell_wait".into(),
            description: "Wait".into(),
            parameters: json!({"type": "object", "properties": {"seconds": {"type": "integer", "minimum": 1, "maximum": 600}}, "required": ["seconds"]}),
        };
        let g = tool_call_grammar(&[&t], false);
        assert!(g.contains("[1-6] [0-9]{2}"), "{g}");
        let member = g.lines().find(|l| l.contains("seconds")).unwrap();
        assert!(!member.contains(" int"), "{member}");
    }

    #[test]
    fn literals_are_escaped() {
        assert_eq!(literal(&json!("a\"b")), r#""\"a\\\"b\"""#);
        assert_eq!(gbnf_quote("x\ny"), r#""x\ny""#);
    }

    mod fuzz {
        use proptest::prelude::*;

        use super::*;

        /// JSON schemas as tools and MCP servers write them: the keywords the builder
        /// reads, any values, nesting, references that go nowhere.
        fn arb_schema() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                Just(json!({"type": "string"})),
                Just(json!({"type": "integer", "minimum": 0, "maximum": 86_400})),
                Just(json!({"type": "integer", "minimum": 10, "maximum": 1})),
                Just(json!({"type": "number"})),
                Just(json!({"type": "boolean"})),
                Just(json!({"type": ["string", "null"]})),
                Just(json!({"enum": ["a", "b", 3, null]})),
                Just(json!({"const": "x"})),
                Just(json!({"$ref": "#/definitions/missing"})),
                Just(json!({})),
                Just(json!(true)),
                Just(json!("not a schema")),
                "\\PC{0,12}".prop_map(|k| json!({"type": k})),
            ];
            leaf.prop_recursive(4, 48, 5, |inner| {
                prop_oneof![
                    (
                        prop::collection::btree_map("[a-z_]{1,8}", inner.clone(), 0..5),
                        prop::collection::vec("[a-z_]{1,8}", 0..4)
                    )
                        .prop_map(|(props, required)| json!({
                            "type": "object",
                            "properties": Value::Object(props.into_iter().collect()),
                            "required": required,
                        })),
                    inner
                        .clone()
                        .prop_map(|items| json!({"type": "array", "items": items})),
                    prop::collection::vec(inner.clone(), 0..4).prop_map(|v| json!({"anyOf": v})),
                    prop::collection::vec(inner, 0..4).prop_map(|v| json!({"oneOf": v})),
                ]
            })
        }

        proptest! {
            /// Any schema gives a grammar (the builder falls back to "any JSON" for what it
            /// does not understand); it never panics or recurses without end.
            #[test]
            fn fuzz_any_schema_gives_a_grammar(schema in arb_schema()) {
                let grammar = json_grammar(Some(&schema));
                prop_assert!(grammar.contains("root"));
                let tool = ToolSchema {
                    name: "t".into(),
                    description: String::new(),
                    parameters: schema,
                };
                let grammar = tool_call_grammar(&[&tool], true);
                prop_assert!(grammar.contains("root"));
            }
        }
    }
}
