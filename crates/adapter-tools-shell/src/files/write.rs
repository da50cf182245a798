//! The `file_write` tool.

use std::fs::OpenOptions;
use std::io::Write;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use domain::ports::{Tool, ToolContext, ToolEffect, ToolFamily, ToolOutput};
use domain::{tools::args as tool_args, ToolError};

use super::{blocking, io_error, Target};
use crate::{args, FILE_WRITE};

const DESCRIPTION: &str = "Create or overwrite a file with the whole `content` (append=true \
adds to the end). To edit part of a file, use file_str_replace.";

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
        let workspace = ctx.workspace.clone();
        let read_only = self.read_only.clone();
        blocking(move || {
            let target = Target::resolve(&workspace, &args.path)?;
            target.refuse_read_only(&read_only)?;
            write(&target, &args.content, args.append)
        })
        .await
    }
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
        attachments: vec![rel.clone()],
        ..ToolOutput::default()
    })
}
