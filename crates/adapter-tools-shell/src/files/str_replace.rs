//! The `file_str_replace` tool: replace exact text in a file: one unique occurrence, every
//! occurrence (`replace_all`), or several edits in order, all or none (`edits`), as Claude
//! Code's Edit and MultiEdit do.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use domain::ports::{Tool, ToolContext, ToolEffect, ToolFamily, ToolOutput};
use domain::{tools::args as tool_args, ToolError};

use super::{binary_message, blocking, io_error, looks_binary, Target};
use crate::{args, FILE_STR_REPLACE};

/// Files larger than this are not edited in memory.
const MAX_EDIT_BYTES: u64 = 16 * 1024 * 1024;
/// Occurrences listed (by line) when `old` is not unique.
const MAX_LISTED: usize = 10;

const DESCRIPTION: &str = "Replace `old` with `new` in a file (exact text, whitespace \
included, no line numbers): `old` must occur exactly once, or set replace_all=true to replace \
every occurrence. Several edits at once: `edits` [{old, new, replace_all?}], applied in \
order, all or none.";

/// Arguments of `file_str_replace`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileStrReplaceArgs {
    // The file, relative to the workspace. (Plain comments: the description says what the
    // schema would.)
    pub path: String,
    // Exact text to replace; nearby lines make it unique.
    #[serde(default)]
    pub old: Option<String>,
    // Replacement text; empty deletes `old`.
    #[serde(default)]
    pub new: Option<String>,
    // Replace every occurrence of `old`, not exactly one.
    #[serde(default)]
    pub replace_all: bool,
    // Several edits, applied in order; none is written unless all apply.
    #[serde(default)]
    pub edits: Vec<StrEdit>,
}

/// One edit of `file_str_replace`'s `edits`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StrEdit {
    pub old: String,
    pub new: String,
    #[serde(default)]
    pub replace_all: bool,
}

impl FileStrReplaceArgs {
    /// The edits asked for: `edits`, or the one of `old`/`new`.
    fn into_edits(self) -> Result<(String, Vec<StrEdit>), ToolError> {
        let bad = |why: &str| ToolError::InvalidArguments(format!("{FILE_STR_REPLACE}: {why}"));
        let edits = match (self.old, self.new, self.edits.is_empty()) {
            (Some(old), Some(new), true) => vec![StrEdit {
                old,
                new,
                replace_all: self.replace_all,
            }],
            (None, None, false) => self.edits,
            (None, None, true) => return Err(bad("give `old` and `new`, or `edits`")),
            (_, _, false) => return Err(bad("give either `old`/`new` or `edits`, not both")),
            (Some(_), None, true) => {
                return Err(bad("`new` is missing (empty text deletes `old`)"))
            }
            (None, Some(_), true) => return Err(bad("`old` is missing")),
        };
        if edits.iter().any(|e| e.old.is_empty()) {
            return Err(bad(
                "`old` must not be empty; use file_write to create a file",
            ));
        }
        Ok((self.path, edits))
    }
}

/// Replaces a unique piece of text in a file of the workspace.
#[derive(Debug, Clone, Default)]
pub struct FileStrReplaceTool {
    read_only: Vec<std::path::PathBuf>,
}

impl FileStrReplaceTool {
    pub fn new() -> FileStrReplaceTool {
        FileStrReplaceTool::default()
    }

    /// Paths it refuses to change (and to create), in any workspace: the project's config
    /// and state (docs/security.md).
    pub fn with_read_only(mut self, paths: Vec<std::path::PathBuf>) -> FileStrReplaceTool {
        self.read_only = paths;
        self
    }
}

#[async_trait]
impl Tool for FileStrReplaceTool {
    fn name(&self) -> &str {
        FILE_STR_REPLACE
    }
    fn family(&self) -> ToolFamily {
        ToolFamily::Files
    }
    fn effect(&self) -> ToolEffect {
        ToolEffect::Acts
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> Value {
        args::schema::<FileStrReplaceArgs>()
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: FileStrReplaceArgs = args::parse(FILE_STR_REPLACE, args)?;
        tool_args::non_empty(FILE_STR_REPLACE, "path", &args.path)?;
        let (path, edits) = args.into_edits()?;
        let workspace = ctx.workspace.clone();
        let read_only = self.read_only.clone();
        blocking(move || {
            let target = Target::resolve(&workspace, &path)?;
            target.refuse_read_only(&read_only)?;
            replace(&target, &edits)
        })
        .await
    }
}

fn replace(target: &Target, edits: &[StrEdit]) -> Result<ToolOutput, ToolError> {
    let rel = &target.rel;
    let meta = match std::fs::metadata(&target.path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ToolError::Failed(format!(
                "'{rel}' does not exist, so there is nothing to replace in it; to create the \
                 file, use file_write with its whole content"
            )))
        }
        Err(e) => return Err(io_error("edit", rel, &e)),
    };
    if meta.is_dir() {
        return Err(ToolError::Failed(format!(
            "'{rel}' is a folder, not a file"
        )));
    }
    if meta.len() > MAX_EDIT_BYTES {
        return Err(ToolError::Failed(format!(
            "'{rel}' is too large to edit this way ({} bytes); use a program",
            meta.len()
        )));
    }
    let bytes = std::fs::read(&target.path).map_err(|e| io_error("read", rel, &e))?;
    let mut text = match String::from_utf8(bytes) {
        Ok(text) if !looks_binary(text.as_bytes()) => text,
        _ => return Err(binary_message(rel, meta.len())),
    };
    let mut done = Vec::with_capacity(edits.len());
    for (n, edit) in edits.iter().enumerate() {
        let which = if edits.len() > 1 {
            format!("edit {} of {}: ", n + 1, edits.len())
        } else {
            String::new()
        };
        let (edited, count, line) = apply(&text, edit).map_err(|why| {
            let nothing = if edits.len() > 1 {
                " Nothing was written."
            } else {
                ""
            };
            ToolError::Failed(format!("{which}{why} in '{rel}'.{nothing}"))
        })?;
        text = edited;
        done.push(match count {
            1 => format!("1 occurrence at line {line}"),
            n => format!("{n} occurrences"),
        });
    }
    std::fs::write(&target.path, text.as_bytes()).map_err(|e| io_error("write", rel, &e))?;
    tracing::debug!(path = %rel, edits = edits.len(), "file_str_replace");
    Ok(ToolOutput {
        content: format!("replaced in '{rel}': {}", done.join("; ")),
        attachments: vec![rel.clone()],
        ..ToolOutput::default()
    })
}

/// `text` with `edit` made: the new text, how many occurrences, the line of the first;
/// why not, when `old` is missing or (without `replace_all`) not unique.
fn apply(text: &str, edit: &StrEdit) -> Result<(String, usize, usize), String> {
    let limit = if edit.replace_all {
        usize::MAX
    } else {
        MAX_LISTED + 1
    };
    let positions = occurrences(text, &edit.old, limit);
    let Some(&first) = positions.first() else {
        return Err(
            "`old` was not found; it must match the file exactly, including \
                    whitespace and indentation (read the file again to see its current text)"
                .to_string(),
        );
    };
    if edit.replace_all {
        let count = text.matches(edit.old.as_str()).count();
        return Ok((
            text.replace(&edit.old, &edit.new),
            count,
            line_of(text, first),
        ));
    }
    if positions.len() > 1 {
        let lines: Vec<String> = positions
            .iter()
            .take(MAX_LISTED)
            .map(|&p| line_of(text, p).to_string())
            .collect();
        let count = if positions.len() > MAX_LISTED {
            format!("more than {MAX_LISTED} times")
        } else {
            format!("{} times", positions.len())
        };
        return Err(format!(
            "`old` occurs {count} (at lines {}); it must occur exactly once: include more \
             surrounding text, or set replace_all=true to replace every occurrence",
            lines.join(", ")
        ));
    }
    let mut edited = String::with_capacity(text.len() + edit.new.len());
    edited.push_str(&text[..first]);
    edited.push_str(&edit.new);
    edited.push_str(&text[first + edit.old.len()..]);
    Ok((edited, 1, line_of(text, first)))
}

/// Byte offsets where `needle` starts, overlapping matches included, at most `limit`.
fn occurrences(haystack: &str, needle: &str, limit: usize) -> Vec<usize> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(i) = haystack[from..].find(needle) {
        let at = from + i;
        found.push(at);
        if found.len() >= limit {
            break;
        }
        // Step one character forward so overlapping matches count too.
        from = at + haystack[at..].chars().next().map_or(1, char::len_utf8);
    }
    found
}

/// 1-based line number of byte offset `at`.
fn line_of(text: &str, at: usize) -> usize {
    text[..at].matches('\n').count() + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn occurrences_overlap_and_stop_at_the_limit() {
        assert_eq!(occurrences("aaa", "aa", 10), [0, 1]);
        assert_eq!(occurrences("abcabc", "bc", 10), [1, 4]);
        assert_eq!(occurrences("xxxx", "x", 2), [0, 1]);
        assert!(occurrences("abc", "d", 10).is_empty());
        assert_eq!(occurrences("éaé", "é", 10), [0, 3]);
    }

    #[test]
    fn lines() {
        assert_eq!(line_of("a\nb\nc", 4), 3);
        assert_eq!(line_of("abc", 0), 1);
    }

    fn edit(old: &str, new: &str, replace_all: bool) -> StrEdit {
        StrEdit {
            old: old.into(),
            new: new.into(),
            replace_all,
        }
    }

    #[test]
    fn one_occurrence_every_occurrence_or_a_refusal() {
        let text = "colour=red\nborder colour=blue\n";
        let (out, n, line) = apply(text, &edit("colour", "color", true)).unwrap();
        assert_eq!(
            (out.as_str(), n, line),
            ("color=red\nborder color=blue\n", 2, 1)
        );
        let why = apply(text, &edit("colour", "color", false)).unwrap_err();
        assert!(
            why.contains("occurs 2 times") && why.contains("replace_all"),
            "{why}"
        );
        let (out, n, _) = apply(text, &edit("red", "green", false)).unwrap();
        assert_eq!((out.as_str(), n), ("colour=green\nborder colour=blue\n", 1));
        assert!(apply(text, &edit("purple", "x", true)).is_err());
    }

    #[test]
    fn arguments_name_one_edit_or_several() {
        let parse = |v: serde_json::Value| {
            serde_json::from_value::<FileStrReplaceArgs>(v)
                .unwrap()
                .into_edits()
        };
        let (_, one) = parse(serde_json::json!({"path": "a", "old": "x", "new": "y"})).unwrap();
        assert_eq!(one, vec![edit("x", "y", false)]);
        let (_, many) = parse(serde_json::json!({"path": "a", "edits": [
            {"old": "x", "new": "y"}, {"old": "p", "new": "q", "replace_all": true}
        ]}))
        .unwrap();
        assert_eq!(many.len(), 2);
        assert!(parse(serde_json::json!({"path": "a"})).is_err());
        assert!(parse(serde_json::json!({"path": "a", "old": "x"})).is_err());
        assert!(parse(serde_json::json!({"path": "a", "old": "", "new": "y"})).is_err());
        assert!(
            parse(serde_json::json!({"path": "a", "old": "x", "new": "y",
            "edits": [{"old": "p", "new": "q"}]}))
            .is_err()
        );
    }
}
