//! The `file_list` tool: a recursive, bounded listing of a folder.
//!
//! Output format: a header line, then one entry per line with its path relative to the
//! listed folder, sorted by name, each folder followed by its contents: folders end with
//! `/`, files show their size (`a.txt (12 bytes)`), symbolic links show their target
//! (`link -> target`, never followed). Folders at the depth limit that have contents are
//! marked `(not expanded)`. A file named instead of a folder is said to be one, with its
//! content when it is short text.

use std::fs;
use std::path::Path;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use domain::ports::{Tool, ToolContext, ToolEffect, ToolFamily, ToolOutput};
use domain::ToolError;

use super::{blocking, io_error, Target, DEFAULT_LIST_DEPTH, DEFAULT_LIST_ENTRIES};

/// A file listed by mistake is shown whole up to this size.
const SHORT_FILE_BYTES: u64 = 4 * 1024;
use crate::{args, FILE_LIST};

/// Arguments of `file_list`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileListArgs {
    /// Default: the workspace.
    #[serde(default)]
    pub path: Option<String>,
}

/// Lists a folder of the workspace recursively.
#[derive(Debug, Clone)]
pub struct FileListTool {
    max_depth: usize,
    max_entries: usize,
    description: String,
}

impl Default for FileListTool {
    fn default() -> Self {
        FileListTool::new()
    }
}

impl FileListTool {
    pub fn new() -> FileListTool {
        FileListTool {
            max_depth: 0,
            max_entries: 0,
            description: String::new(),
        }
        .with_limits(DEFAULT_LIST_DEPTH, DEFAULT_LIST_ENTRIES)
    }

    /// How deep to descend (1 = only the folder's own entries) and how many entries to show.
    pub fn with_limits(mut self, max_depth: usize, max_entries: usize) -> FileListTool {
        self.max_depth = max_depth.max(1);
        self.max_entries = max_entries.max(1);
        self.description = format!(
            "List a folder recursively ({} levels, {} entries at most). Folders end with /.",
            self.max_depth, self.max_entries
        );
        self
    }
}

#[async_trait]
impl Tool for FileListTool {
    fn name(&self) -> &str {
        FILE_LIST
    }
    fn family(&self) -> ToolFamily {
        ToolFamily::Files
    }
    fn effect(&self) -> ToolEffect {
        ToolEffect::Reads
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> Value {
        args::schema::<FileListArgs>()
    }

    fn idempotent(&self) -> bool {
        true
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: FileListArgs = args::parse(FILE_LIST, args)?;
        // An empty path is the workspace, like an absent one.
        let path = args
            .path
            .filter(|p| !p.trim().is_empty())
            .unwrap_or_else(|| ".".to_string());
        let workspace = ctx.workspace.clone();
        let (max_depth, max_entries) = (self.max_depth, self.max_entries);
        blocking(move || {
            let target = Target::resolve(&workspace, &path)?;
            list(&target, max_depth, max_entries)
        })
        .await
    }
}

/// A file shown where a folder was asked for: a small model lists the file it means to
/// read, so a short text file's content comes with the answer (docs/direct.md).
fn a_file_listed(target: &Target, size: u64) -> String {
    let rel = &target.rel;
    let text = (size <= SHORT_FILE_BYTES)
        .then(|| fs::read(&target.path).ok())
        .flatten()
        .filter(|bytes| !bytes.contains(&0))
        .and_then(|bytes| String::from_utf8(bytes).ok());
    match text {
        Some(text) => {
            format!("'{rel}' is a file ({size} bytes), not a folder. Its content:\n{text}")
        }
        None => format!("'{rel}' is a file ({size} bytes), not a folder; use file_read to read it"),
    }
}

fn list(target: &Target, max_depth: usize, max_entries: usize) -> Result<ToolOutput, ToolError> {
    let rel = &target.rel;
    let meta = match fs::metadata(&target.path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(missing_folder(target, max_entries, &e));
        }
        Err(e) => return Err(io_error("list", rel, &e)),
    };
    if !meta.is_dir() {
        return Ok(ToolOutput::ok(a_file_listed(target, meta.len())));
    }
    let mut walk = Walk {
        lines: Vec::new(),
        max_depth,
        max_entries,
        truncated: false,
    };
    let entries = read_sorted(&target.path).map_err(|e| io_error("list", rel, &e))?;
    walk.visit(entries, "", 1);
    let mut content = format!("Contents of '{rel}' (up to {max_depth} levels deep):\n");
    if walk.lines.is_empty() {
        content.push_str("(empty folder)");
    } else {
        content.push_str(&walk.lines.join("\n"));
    }
    if walk.truncated {
        content.push_str(&format!(
            "\n[truncated after {max_entries} entries; list a subfolder to see more]"
        ));
    }
    Ok(ToolOutput::ok(content))
}

/// A folder that does not exist: the error shows what the nearest folder that does holds
/// (one level), so that a small model listing `workspace` or a made-up folder sees the
/// files it is after instead of trying the same path again (docs/direct.md).
fn missing_folder(target: &Target, max_entries: usize, e: &std::io::Error) -> ToolError {
    let not_found = io_error("list", &target.rel, e);
    let mut folder = target.path.parent();
    while let Some(f) = folder {
        if !f.starts_with(&target.root) {
            break;
        }
        if f.is_dir() {
            let existing = Target {
                path: f.to_path_buf(),
                rel: crate::workspace::relative(&target.root, f),
                root: target.root.clone(),
            };
            return match list(&existing, 1, max_entries) {
                Ok(shown) => ToolError::Failed(format!(
                    "cannot list '{}': it does not exist. {}",
                    target.rel,
                    shown
                        .content
                        .replacen("Contents of", "The nearest folder that does,", 1)
                )),
                Err(_) => not_found,
            };
        }
        folder = f.parent();
    }
    not_found
}

struct Walk {
    lines: Vec<String>,
    max_depth: usize,
    max_entries: usize,
    truncated: bool,
}

impl Walk {
    /// Adds `entries` (of a folder at `depth`, shown with `prefix`) and their contents.
    fn visit(&mut self, entries: Vec<fs::DirEntry>, prefix: &str, depth: usize) {
        for entry in entries {
            if self.lines.len() >= self.max_entries {
                self.truncated = true;
                return;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            let shown = format!("{prefix}{name}");
            // DirEntry::file_type and metadata do not follow symbolic links.
            let Ok(file_type) = entry.file_type() else {
                self.lines.push(format!("{shown} (unreadable)"));
                continue;
            };
            if file_type.is_symlink() {
                let target = fs::read_link(entry.path())
                    .map(|t| t.display().to_string())
                    .unwrap_or_else(|_| "?".to_string());
                self.lines.push(format!("{shown} -> {target}"));
            } else if file_type.is_dir() {
                self.visit_dir(&entry.path(), &shown, depth);
            } else if file_type.is_file() {
                let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
                self.lines.push(format!("{shown} ({size} bytes)"));
            } else {
                self.lines.push(format!("{shown} (special file)"));
            }
        }
    }

    fn visit_dir(&mut self, path: &Path, shown: &str, depth: usize) {
        let children = match read_sorted(path) {
            Ok(children) => children,
            Err(e) => {
                self.lines.push(format!("{shown}/ (cannot be read: {e})"));
                return;
            }
        };
        if depth >= self.max_depth {
            let mark = if children.is_empty() {
                ""
            } else {
                " (not expanded)"
            };
            self.lines.push(format!("{shown}/{mark}"));
        } else {
            self.lines.push(format!("{shown}/"));
            self.visit(children, &format!("{shown}/"), depth + 1);
        }
    }
}

/// A folder's entries sorted by name.
fn read_sorted(path: &Path) -> std::io::Result<Vec<fs::DirEntry>> {
    let mut entries: Vec<fs::DirEntry> = fs::read_dir(path)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    Ok(entries)
}
