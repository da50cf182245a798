//! The tool section of the system prompt, compact: one signature line per tool
//! (`- shell_exec(command: string, timeout_secs?: integer 1..3600): what it does`), then
//! one indented line per described parameter, then the answer format. A full JSON schema
//! per tool costs a small model several times the tokens for the same facts, and every
//! call re-reads it.
//!
//! Types: `string`, `integer`, `number`, `boolean`, `null`; bounds as `1..3600`, `≥1`,
//! `≤600`, string lengths as `string ≤120 chars`; enums and constants as `"a"|"b"`;
//! arrays as `[item]`; objects with properties as `{name: type, opt?: type}`; anything
//! else as `object` / `any`. Required parameters first, optional ones marked `?`.

use domain::llm::ToolSchema;
use serde_json::{Map, Value};

/// How deep nested schemas are spelled out before `object`/`any` stands for them.
const MAX_DEPTH: u32 = 4;

/// The tool section: the tools, then the answer format (and the plain-answer format when
/// `allow_content`).
pub fn describe_tools(tools: &[&ToolSchema], allow_content: bool) -> String {
    let mut out = String::from("You can call these tools:\n");
    for t in tools {
        out.push_str(&describe_tool(t));
    }
    out.push_str(
        "\nTo call a tool, answer with one JSON object and nothing else: \
         {\"tool\": \"<tool name>\", \"arguments\": {<the tool's parameters>}}",
    );
    if allow_content {
        out.push_str("\nTo answer without a tool, answer with {\"content\": \"<your answer>\"}.");
    }
    out
}

/// One tool: `- name(params): description`, then `    param: description` lines.
fn describe_tool(tool: &ToolSchema) -> String {
    let root = &tool.parameters;
    let params = ordered_properties(root);
    let signature: Vec<String> = params
        .iter()
        .map(|(name, schema, required)| {
            let mark = if *required { "" } else { "?" };
            format!("{name}{mark}: {}", type_text(schema, root, 0))
        })
        .collect();
    let description = one_line(tool.description.trim());
    let mut out = format!("- {}({})", tool.name, signature.join(", "));
    if !description.is_empty() {
        out.push_str(": ");
        out.push_str(&description);
    }
    out.push('\n');
    for (name, schema, _) in &params {
        let mut notes = Vec::new();
        if let Some(d) = schema
            .get("description")
            .and_then(Value::as_str)
            .map(one_line)
            .filter(|d| !d.is_empty())
        {
            notes.push(d);
        }
        if let Some(default) = schema.get("default").filter(|d| !d.is_null()) {
            notes.push(format!("default {default}"));
        }
        if !notes.is_empty() {
            out.push_str(&format!("    {name}: {}\n", notes.join("; ")));
        }
    }
    out
}

/// An object schema's properties: required ones first, each group in the schema's key order.
fn ordered_properties(schema: &Value) -> Vec<(&str, &Value, bool)> {
    let Some(Value::Object(props)) = schema.get("properties") else {
        return Vec::new();
    };
    let required: Vec<&str> = match schema.get("required") {
        Some(Value::Array(r)) => r.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let mut out: Vec<(&str, &Value, bool)> = props
        .iter()
        .map(|(k, v)| (k.as_str(), v, required.contains(&k.as_str())))
        .collect();
    // Stable: key order kept within each group.
    out.sort_by_key(|(_, _, required)| !required);
    out
}

/// The compact type of `schema`; `root` resolves local `$ref`s.
fn type_text(schema: &Value, root: &Value, depth: u32) -> String {
    let Some(obj) = schema.as_object() else {
        return "any".to_string();
    };
    if depth > MAX_DEPTH {
        return "any".to_string();
    }
    if let Some(target) = obj.get("$ref").and_then(Value::as_str) {
        return match resolve(root, target) {
            Some(s) => type_text(s, root, depth + 1),
            None => "object".to_string(),
        };
    }
    if let Some(c) = obj.get("const") {
        return c.to_string();
    }
    if let Some(Value::Array(options)) = obj.get("enum") {
        if !options.is_empty() {
            return options
                .iter()
                .map(Value::to_string)
                .collect::<Vec<_>>()
                .join("|");
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(options)) = obj.get(key) {
            if !options.is_empty() {
                return options
                    .iter()
                    .map(|o| type_text(o, root, depth + 1))
                    .collect::<Vec<_>>()
                    .join(" | ");
            }
        }
    }
    match obj.get("type") {
        Some(Value::String(t)) => typed(t, obj, root, depth),
        Some(Value::Array(types)) => {
            let alts: Vec<String> = types
                .iter()
                .filter_map(Value::as_str)
                .map(|t| typed(t, obj, root, depth))
                .collect();
            if alts.is_empty() {
                "any".to_string()
            } else {
                alts.join("|")
            }
        }
        _ if obj.contains_key("properties") => typed("object", obj, root, depth),
        _ if obj.contains_key("items") => typed("array", obj, root, depth),
        _ => "any".to_string(),
    }
}

fn typed(t: &str, obj: &Map<String, Value>, root: &Value, depth: u32) -> String {
    match t {
        "integer" | "number" => {
            let bound = |k: &str| obj.get(k).filter(|v| v.is_number()).map(Value::to_string);
            match (bound("minimum"), bound("maximum")) {
                (Some(lo), Some(hi)) => format!("{t} {lo}..{hi}"),
                (Some(lo), None) => format!("{t} ≥{lo}"),
                (None, Some(hi)) => format!("{t} ≤{hi}"),
                (None, None) => t.to_string(),
            }
        }
        "string" => match obj.get("maxLength").and_then(Value::as_u64) {
            Some(max) => format!("string ≤{max} chars"),
            None => "string".to_string(),
        },
        "array" => {
            let item = obj
                .get("items")
                .map_or_else(|| "any".to_string(), |i| type_text(i, root, depth + 1));
            let mut text = format!("[{item}]");
            match (
                obj.get("minItems").and_then(Value::as_u64),
                obj.get("maxItems").and_then(Value::as_u64),
            ) {
                (Some(lo), Some(hi)) => text.push_str(&format!(" {lo}..{hi} items")),
                (Some(lo), None) if lo > 0 => text.push_str(&format!(" ≥{lo} items")),
                (_, Some(hi)) => text.push_str(&format!(" ≤{hi} items")),
                _ => {}
            }
            text
        }
        "object" => {
            let schema = Value::Object(obj.clone());
            let props = ordered_properties(&schema);
            if props.is_empty() {
                return "object".to_string();
            }
            let members: Vec<String> = props
                .iter()
                .map(|(name, sub, required)| {
                    let mark = if *required { "" } else { "?" };
                    format!("{name}{mark}: {}", type_text(sub, root, depth + 1))
                })
                .collect();
            format!("{{{}}}", members.join(", "))
        }
        "boolean" | "null" => t.to_string(),
        _ => "any".to_string(),
    }
}

/// A local reference `#/$defs/Name` (or `#/definitions/Name`) in `root`.
fn resolve<'a>(root: &'a Value, target: &str) -> Option<&'a Value> {
    let path = target.strip_prefix("#/")?;
    path.split('/').try_fold(root, |node, part| {
        node.get(part.replace("~1", "/").replace("~0", "~"))
    })
}

/// `text` on one line (line breaks and runs of spaces become one space).
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, description: &str, parameters: Value) -> ToolSchema {
        ToolSchema {
            name: name.into(),
            description: description.into(),
            parameters,
        }
    }

    fn tools() -> Vec<ToolSchema> {
        vec![
            tool(
                "shell_exec",
                "Run a bash command in the workspace\nand return its output.",
                json!({
                    "type": "object",
                    "properties": {
                        "timeout_secs": {"type": "integer", "minimum": 1, "maximum": 3600, "description": "seconds before the command is killed", "default": 60},
                        "command": {"type": "string", "description": "the bash command"}
                    },
                    "required": ["command"]
                }),
            ),
            tool(
                "file_write",
                "Write a file.",
                json!({
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "maxLength": 200},
                        "mode": {"enum": ["overwrite", "append"]},
                        "lines": {"type": "array", "items": {"type": "string"}, "maxItems": 50},
                        "meta": {"type": "object", "properties": {"owner": {"type": "string"}, "public": {"type": "boolean"}}, "required": ["owner"]},
                        "offset": {"type": ["integer", "null"], "minimum": 0}
                    },
                    "required": ["path", "mode"]
                }),
            ),
            tool(
                "planning",
                "Create or update the plan.",
                json!({
                    "type": "object",
                    "$defs": {"Step": {"type": "object", "properties": {"title": {"type": "string"}, "done": {"type": "boolean"}}, "required": ["title"]}},
                    "properties": {
                        "action": {"const": "create"},
                        "steps": {"type": "array", "items": {"$ref": "#/$defs/Step"}, "minItems": 1, "maxItems": 16},
                        "ratio": {"type": "number", "maximum": 1.5},
                        "target": {"anyOf": [{"type": "string"}, {"type": "integer"}]}
                    },
                    "required": ["action", "steps"]
                }),
            ),
            tool("message_notify", "Tell the user something.", json!({})),
        ]
    }

    #[test]
    fn tools_render_compactly() {
        let tools = tools();
        let refs: Vec<&ToolSchema> = tools.iter().collect();
        insta::assert_snapshot!(describe_tools(&refs, true));
    }

    #[test]
    fn required_come_first_and_optional_are_marked() {
        let t = &tools()[0];
        let line = describe_tool(t);
        assert!(
            line.starts_with(
                "- shell_exec(command: string, timeout_secs?: integer 1..3600): Run a bash command in the workspace and return its output.\n"
            ),
            "{line}"
        );
        assert!(
            line.contains("    timeout_secs: seconds before the command is killed; default 60\n"),
            "{line}"
        );
    }

    #[test]
    fn the_compact_form_is_much_shorter_than_the_schema() {
        let tools = tools();
        let compact: usize = tools.iter().map(|t| describe_tool(t).len()).sum();
        let full: usize = tools
            .iter()
            .map(|t| t.description.len() + t.parameters.to_string().len())
            .sum();
        assert!(compact * 10 < full * 7, "compact {compact} vs full {full}");
    }
}
