//! `code_run`, the action that is a whole program (docs/code-actions.md): its name, its
//! arguments and their schema, shared by the tool that runs it (adapter-tools-shell) and by
//! the model adapters that let a model write it as a fenced code block instead of JSON
//! (adapter-llama). The domain itself never runs code.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

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
/// The argument the runtime adds when it runs a program again after asking the user what
/// its `input()` asked (docs/code-actions.md, "A program that asks"); never offered to a
/// model.
pub const ANSWERS: &str = "answers";

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
    /// What the program's `input()` calls return, in order: the user's answers, given by
    /// the runtime when it runs the program again after asking (not in the schema).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answers: Vec<String>,
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
