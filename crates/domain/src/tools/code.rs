//! `code_run`, the action that is a whole program (docs/code-actions.md): its name, its
//! arguments and their schema, shared by the tool that runs it (adapter-tools-shell) and by
//! the model adapters that let a model write it as a fenced code block instead of JSON
//! (adapter-llama). The domain itself never runs code.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::ports::llm::ToolSchema;

/// Name of the tool that runs a program in the workspace.
pub const CODE_RUN: &str = "code_run";
/// Its argument naming the language.
pub const LANGUAGE: &str = "language";
/// Its argument holding the program's text.
pub const CODE: &str = "code";
/// The argument (of `shell_exec`; of `code_run` in older transcripts) listing the existing
/// files the call will change, move or delete; any other existing file it changes is put
/// back.
pub const CHANGES: &str = "changes";
/// The argument the runtime adds when it runs a program again after making the calls it
/// stopped at (docs/code-actions.md, "Tools in a program"): their results, in order; never
/// offered to a model.
pub const RESULTS: &str = "results";
/// The argument the runtime adds naming the tools a program may call as functions; never
/// offered to a model.
pub const FUNCTIONS: &str = "functions";

/// The function a program calls with the step's result, which finishes the step
/// (smolagents' `final_answer`): `final_answer(text)` in Python, `final_answer TEXT` in bash.
pub const FINAL_ANSWER: &str = "final_answer";

/// Largest program `code_run` takes, in bytes (a program travels as one argument of `bash
/// -c`, which the kernel caps at 128 KiB).
pub const MAX_CODE_BYTES: usize = 96 * 1024;

/// The languages a program may be written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CodeLanguage {
    Python,
    Bash,
}

impl CodeLanguage {
    pub const ALL: [CodeLanguage; 2] = [CodeLanguage::Python, CodeLanguage::Bash];

    /// The name a model writes (`python`, `bash`), also the fence's info string.
    pub fn name(self) -> &'static str {
        match self {
            CodeLanguage::Python => "python",
            CodeLanguage::Bash => "bash",
        }
    }

    /// The language named `name`, as a fence's info string may say it (`py`, `sh`, `shell`
    /// and `python3` too).
    pub fn from_fence(name: &str) -> Option<CodeLanguage> {
        match name.trim().to_ascii_lowercase().as_str() {
            "python" | "python3" | "py" => Some(CodeLanguage::Python),
            "bash" | "sh" | "shell" => Some(CodeLanguage::Bash),
            _ => None,
        }
    }
}

/// The arguments of `code_run`. `changes` is no longer offered (a program's changes stand,
/// checked by the check of the answer; docs/code-actions.md, "Which existing files a call
/// may change") but still read, for transcripts and models that send it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodeArgs {
    pub language: CodeLanguage,
    pub code: String,
    /// Existing files the program will change, move or delete (new files need not be named).
    #[serde(default)]
    pub changes: Vec<String>,
    /// What the program's calls of the runtime (`input()`, the tool functions) return, in
    /// order: given by the runtime when it runs the program again (not in the schema).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub results: Vec<CallResult>,
    /// The tools the program may call as functions, given by the runtime (not in the
    /// schema).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub functions: Vec<ProgramFunction>,
}

/// What one call a program made of the runtime gave back: `input()`'s answer, a tool's
/// output (`ok` false: the program's call raises an error with `value` as its message).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallResult {
    pub ok: bool,
    pub value: String,
}

/// A tool a program may call as a function: its name and the names its positional
/// arguments stand for (keyword arguments are passed as they are named).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProgramFunction {
    pub name: String,
    pub params: Vec<String>,
}

impl ProgramFunction {
    /// How a program calls it: `name(param, …)`.
    pub fn signature(&self) -> String {
        format!("{}({})", self.name, self.params.join(", "))
    }

    /// `schema`'s tool as a function, when its name is one a program can call (an
    /// identifier): its positional arguments are the required parameters in order, then
    /// the others in the order of their names.
    pub fn of(schema: &ToolSchema) -> Option<ProgramFunction> {
        let mut chars = schema.name.chars();
        let first = chars.next()?;
        let identifier = (first.is_ascii_alphabetic() || first == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !identifier {
            return None;
        }
        let mut params: Vec<String> = schema.parameters["required"]
            .as_array()
            .map(|r| {
                r.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        if let Some(properties) = schema.parameters["properties"].as_object() {
            let mut others: Vec<&String> =
                properties.keys().filter(|n| !params.contains(n)).collect();
            others.sort();
            params.extend(others.into_iter().cloned());
        }
        Some(ProgramFunction {
            name: schema.name.clone(),
            params,
        })
    }
}

/// The JSON schema of [`CodeArgs`].
pub fn parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            LANGUAGE: {"type": "string", "enum": ["python", "bash"]},
            CODE: {
                "type": "string",
                "description": "the whole program; it runs in the workspace folder"
            },
        },
        "required": [LANGUAGE, CODE],
        "additionalProperties": false
    })
}

/// What `code_run` tells the model about itself.
pub fn description() -> &'static str {
    "Run a whole program (python or bash) in the workspace folder. Returns its exit code, \
     its output and the files it created, changed or deleted. Compute every number, list \
     and text in the program from the files; print what you need to see. When the program \
     finishes the step, end it with final_answer(result) (bash: final_answer \"result\"): \
     the result, computed, finishes the step."
}

/// The files a call says it will change: its `changes` argument, whatever the tool (`./`
/// taken off, empty names and duplicates dropped).
pub fn declared_changes(args: &Value) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    if let Some(Value::Array(items)) = args.get(CHANGES) {
        for item in items.iter().filter_map(Value::as_str) {
            let path = item.trim().trim_start_matches("./").to_string();
            if !path.is_empty() && !out.contains(&path) {
                out.push(path);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_is_a_function_when_its_name_is_an_identifier() {
        let schema = |name: &str| ToolSchema {
            name: name.into(),
            description: String::new(),
            parameters: json!({
                "type": "object",
                "properties": {"wait": {}, "url": {}, "a": {}},
                "required": ["url"]
            }),
        };
        assert_eq!(
            ProgramFunction::of(&schema("browser_navigate")),
            Some(ProgramFunction {
                name: "browser_navigate".into(),
                params: vec!["url".into(), "a".into(), "wait".into()],
            })
        );
        assert_eq!(ProgramFunction::of(&schema("server.read-file")), None);
        assert_eq!(ProgramFunction::of(&schema("9lives")), None);
    }

    #[test]
    fn arguments_parse_with_and_without_changes() {
        let a: CodeArgs = serde_json::from_value(json!({"language": "python", "code": "print(1)"}))
            .expect("parses");
        assert_eq!(a.language, CodeLanguage::Python);
        assert!(a.changes.is_empty());
        let b: CodeArgs =
            serde_json::from_value(json!({"language": "bash", "code": "mv a b", "changes": ["a"]}))
                .expect("parses");
        assert_eq!(b.changes, vec!["a".to_string()]);
        assert!(
            serde_json::from_value::<CodeArgs>(json!({"language": "ruby", "code": "x"})).is_err()
        );
    }

    #[test]
    fn fences_name_languages_loosely() {
        assert_eq!(CodeLanguage::from_fence("py"), Some(CodeLanguage::Python));
        assert_eq!(CodeLanguage::from_fence(" Bash"), Some(CodeLanguage::Bash));
        assert_eq!(CodeLanguage::from_fence("sh"), Some(CodeLanguage::Bash));
        assert_eq!(CodeLanguage::from_fence("rust"), None);
    }

    #[test]
    fn declared_changes_are_cleaned() {
        let args = json!({"changes": ["./a.txt", "a.txt", " ", "b/c.md"]});
        assert_eq!(declared_changes(&args), vec!["a.txt", "b/c.md"]);
        assert!(declared_changes(&json!({"path": "x"})).is_empty());
    }
}
