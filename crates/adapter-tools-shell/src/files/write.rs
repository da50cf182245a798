//! The `file_write` tool.

use std::fs::OpenOptions;
use std::io::Write;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use domain::ports::{Tool, ToolContext, ToolEffect, ToolFamily, ToolOutput};
use domain::{tools::args as tool_args, ToolError};

use super::facts::is_facts_line;
use super::{blocking, io_error, Target};
use crate::{args, FILE_WRITE};

const DESCRIPTION: &str = "Create or overwrite a file with the whole `content` (append=true \
adds to the end), taken from tool output or the user's answer, never a placeholder. To edit \
part of a file, use file_str_replace.";

/// Arguments of `file_write`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileWriteArgs {
    // The file, relative to the workspace; missing folders are created. (Plain comments:
    // the description says what the schema would.)
    pub path: String,
    // The text to write.
    pub content: String,
    // Add to the end instead of replacing.
    #[serde(default)]
    pub append: bool,
}

/// Writes (or appends to) a file of the workspace.
#[derive(Debug, Clone, Default)]
pub struct FileWriteTool {
    read_only: Vec<std::path::PathBuf>,
}

impl FileWriteTool {
    pub fn new() -> FileWriteTool {
        FileWriteTool::default()
    }

    /// Paths it refuses to change (and to create), in any workspace: the project's config
    /// and state (docs/security.md).
    pub fn with_read_only(mut self, paths: Vec<std::path::PathBuf>) -> FileWriteTool {
        self.read_only = paths;
        self
    }
}

#[async_trait]
impl Tool for FileWriteTool {
    fn name(&self) -> &str {
        FILE_WRITE
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
        args::schema::<FileWriteArgs>()
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: FileWriteArgs = args::parse(FILE_WRITE, args)?;
        tool_args::non_empty(FILE_WRITE, "path", &args.path)?;
        if domain::model::text::is_tool_status_message(&args.content) {
            return Err(ToolError::InvalidArguments(format!(
                "file_write: the content is a tool's status message ({:?}), not the result; \
                 write the actual text or value (e.g. the output of the command that computed \
                 it)",
                args.content.trim()
            )));
        }
        if let Some(line) = args.content.lines().find(|l| is_facts_line(l)) {
            return Err(ToolError::InvalidArguments(format!(
                "file_write: the content holds the line {:?}, which file_read adds after a \
                 file's text (its data facts); it is not part of the file: leave it out",
                line.trim()
            )));
        }
        let (content, unescaped) = line_breaks_unescaped(&args.path, &args.content);
        let workspace = ctx.workspace.clone();
        let read_only = self.read_only.clone();
        let mut out = blocking(move || {
            let target = Target::resolve(&workspace, &args.path)?;
            target.refuse_read_only(&read_only)?;
            write(&target, &content, args.append)
        })
        .await?;
        if unescaped > 0 {
            out.content.push_str(&format!(
                "\nNote: the content had no line break but {unescaped} literal \\n; they were \
                 written as line breaks."
            ));
        }
        Ok(out)
    }
}

/// Files whose `\n` inside quotes is code's own (`print('a\nb')`), kept as it is.
const CODE_EXTENSIONS: &[&str] = &[
    "py", "sh", "bash", "js", "ts", "rb", "pl", "php", "c", "h", "cpp", "rs", "go", "java",
];

/// `content` with its literal `\n` (backslash, n) written as line breaks when it has no real
/// line break at all: a small model escaped its newlines twice (`print(1)\n` ran into
/// "unexpected character after line continuation character", the eval's `python`). In a
/// code file a `\n` inside quotes stays (it is the program's). Returns how many were turned.
fn line_breaks_unescaped(path: &str, content: &str) -> (String, usize) {
    if content.contains('\n') || !content.contains("\\n") {
        return (content.to_string(), 0);
    }
    let ext = path
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    let code = CODE_EXTENSIONS.contains(&ext.as_str());
    let mut out = String::with_capacity(content.len());
    let mut turned = 0;
    let mut quote: Option<char> = None;
    let mut chars = content.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'n') && quote.is_none() => {
                chars.next();
                out.push('\n');
                turned += 1;
            }
            '\\' => {
                out.push(c);
                if let Some(next) = chars.next() {
                    out.push(next);
                }
            }
            '\'' | '"' if code => {
                quote = match quote {
                    None => Some(c),
                    Some(q) if q == c => None,
                    other => other,
                };
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    (out, turned)
}

fn write(target: &Target, content: &str, append: bool) -> Result<ToolOutput, ToolError> {
    let rel = &target.rel;
    let existed = match std::fs::metadata(&target.path) {
        Ok(meta) if meta.is_dir() => {
            return Err(ToolError::Failed(format!(
                "'{rel}' is a folder; give the path of a file"
            )))
        }
        Ok(_) => true,
        Err(_) => false,
    };
    if let Some(parent) = target.path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| io_error("create the folders for", rel, &e))?;
    }
    let mut file = OpenOptions::new()
        .create(true)
        .write(true)
        .append(append)
        .truncate(!append)
        .open(&target.path)
        .map_err(|e| io_error("open", rel, &e))?;
    file.write_all(content.as_bytes())
        .and_then(|()| file.flush())
        .map_err(|e| io_error("write", rel, &e))?;
    tracing::debug!(path = %rel, bytes = content.len(), append, "file_write");
    let verb = match (append, existed) {
        (true, true) => "appended",
        (_, false) => "wrote (new file)",
        (false, true) => "wrote (replacing the old content)",
    };
    Ok(ToolOutput {
        content: format!("{verb} {} bytes to '{rel}'", content.len()),
        is_error: false,
        attachments: vec![rel.clone()],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twice_escaped_line_breaks_are_written_as_line_breaks() {
        let (text, n) = line_breaks_unescaped("squares.py", r"print('1\n2')\n");
        assert_eq!((text.as_str(), n), ("print('1\\n2')\n", 1));
        let (text, n) = line_breaks_unescaped("s.py", r"import sys\nprint(sys.argv)\n");
        assert_eq!((text.as_str(), n), ("import sys\nprint(sys.argv)\n", 2));
        let (text, n) = line_breaks_unescaped("days.txt", r"Day 1\nDay 2\n");
        assert_eq!((text.as_str(), n), ("Day 1\nDay 2\n", 2));
        // Apostrophes in text do not count as quotes.
        let (text, n) = line_breaks_unescaped("a.txt", r"don't\nstop");
        assert_eq!((text.as_str(), n), ("don't\nstop", 1));
        // A real line break anywhere: the content is as the model meant it.
        let (text, n) = line_breaks_unescaped("a.py", "print('a\\nb')\nx = 1\n");
        assert_eq!((text.as_str(), n), ("print('a\\nb')\nx = 1\n", 0));
        // Other escapes stay.
        let (text, n) = line_breaks_unescaped("a.txt", r"a\tb\\c");
        assert_eq!((text.as_str(), n), (r"a\tb\\c", 0));
    }
}
