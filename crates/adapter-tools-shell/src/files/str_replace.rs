//! The `file_str_replace` tool: replace one exact, unique piece of text in a file.

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

const DESCRIPTION: &str = "Replace `old`, which must occur exactly once in the file \
(whitespace included, no line numbers), with `new`.";

/// Arguments of `file_str_replace`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileStrReplaceArgs {
    // The file, relative to the workspace. (Plain comments: the description says what the
    // schema would.)
    pub path: String,
    // Exact text to replace; nearby lines make it unique.
    pub old: String,
    // Replacement text; empty deletes `old`.
    pub new: String,
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
        if args.old.is_empty() {
            return Err(ToolError::InvalidArguments(
                "file_str_replace: `old` must not be empty; use file_write to create a file"
                    .to_string(),
            ));
        }
        let workspace = ctx.workspace.clone();
        let read_only = self.read_only.clone();
        blocking(move || {
            let target = Target::resolve(&workspace, &args.path)?;
            target.refuse_read_only(&read_only)?;
            replace(&target, &args.old, &args.new)
        })
        .await
    }
}

fn replace(target: &Target, old: &str, new: &str) -> Result<ToolOutput, ToolError> {
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
            "'{rel}' is too large to edit this way ({} bytes); use shell_exec (e.g. sed)",
            meta.len()
        )));
    }
    let bytes = std::fs::read(&target.path).map_err(|e| io_error("read", rel, &e))?;
    let text = match String::from_utf8(bytes) {
        Ok(text) if !looks_binary(text.as_bytes()) => text,
        _ => return Err(binary_message(rel, meta.len())),
    };
    let positions = occurrences(&text, old, MAX_LISTED + 1);
    let at = match positions.as_slice() {
        [] => {
            return Err(ToolError::Failed(format!(
                "`old` was not found in '{rel}'. It must match the file exactly, including \
                 whitespace and indentation; use file_read to see the current text (leave out \
                 the `N│ ` line-number prefixes it shows)"
            )))
        }
        [at] => *at,
        many => {
            let lines: Vec<String> = many
                .iter()
                .take(MAX_LISTED)
                .map(|&p| line_of(&text, p).to_string())
                .collect();
            let count = if many.len() > MAX_LISTED {
                format!("more than {MAX_LISTED} times")
            } else {
                format!("{} times", many.len())
            };
            return Err(ToolError::Failed(format!(
                "`old` occurs {count} in '{rel}' (at lines {}); it must occur exactly once. \
                 Include more surrounding context in `old` so that it matches only the place \
                 you mean",
                lines.join(", ")
            )));
        }
    };
    let mut edited = String::with_capacity(text.len() - old.len() + new.len());
    edited.push_str(&text[..at]);
    edited.push_str(new);
    edited.push_str(&text[at + old.len()..]);
    std::fs::write(&target.path, edited.as_bytes()).map_err(|e| io_error("write", rel, &e))?;
    tracing::debug!(path = %rel, "file_str_replace");
    let line = line_of(&text, at);
    Ok(ToolOutput {
        content: format!(
            "replaced 1 occurrence in '{rel}' at line {line} ({} lines removed, {} lines inserted)",
            line_count(old),
            line_count(new)
        ),
        is_error: false,
        attachments: vec![rel.clone()],
    })
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

fn line_count(s: &str) -> usize {
    if s.is_empty() {
        0
    } else {
        s.trim_end_matches('\n').matches('\n').count() + 1
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
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
        assert_eq!(line_count(""), 0);
        assert_eq!(line_count("x"), 1);
        assert_eq!(line_count("x\ny\n"), 2);
    }
}
