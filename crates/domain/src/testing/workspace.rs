//! [`MemoryWorkspace`]: the [`WorkspaceFiles`] port in memory (files, their modification
//! counter, the copies kept per run), and [`WorkspaceToolbox`], tools that change it as the
//! real file and shell tools would change a folder: `file_write`, `file_str_replace`,
//! `file_read`, and `shell_exec` understanding `echo TEXT > PATH`, `expr A + B [> PATH]`, `rm PATH`, `mv A B`,
//! `cat PATH`, `chmod OCTAL PATH` (anything else just succeeds). A file's permissions are
//! unknown (`None`) until a `chmod` sets them; a kept copy keeps them.

use std::collections::hash_map::DefaultHasher;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{json, Value};

use crate::model::tool_kind::{ToolEffect, ToolFamily};
use crate::ports::llm::ToolSchema;
use crate::ports::{
    FileFacts, Listing, ToolContext, ToolError, ToolOutput, Toolbox, WorkspaceError, WorkspaceFiles,
};

#[derive(Debug, Default)]
struct Files {
    /// path → (content, modification counter)
    files: BTreeMap<String, (Vec<u8>, u64)>,
    /// path → permission bits, once a `chmod` set them
    modes: BTreeMap<String, u32>,
    /// (run, path) → content and permission bits
    copies: BTreeMap<(String, String), (Vec<u8>, Option<u32>)>,
    clock: u64,
}

/// A workspace in memory, shared by clones.
#[derive(Debug, Clone, Default)]
pub struct MemoryWorkspace {
    inner: Arc<Mutex<Files>>,
}

fn digest(bytes: &[u8]) -> String {
    let mut h = DefaultHasher::new();
    bytes.hash(&mut h);
    format!("{:016x}", h.finish())
}

impl MemoryWorkspace {
    pub fn new() -> MemoryWorkspace {
        MemoryWorkspace::default()
    }

    /// A workspace holding `files` (path, content) before the run.
    pub fn with(files: &[(&str, &str)]) -> MemoryWorkspace {
        let ws = MemoryWorkspace::new();
        for (path, content) in files {
            ws.write(path, content);
        }
        ws
    }

    /// Writes `path` (a new modification counter).
    pub fn write(&self, path: &str, content: &str) {
        if let Ok(mut f) = self.inner.lock() {
            f.clock += 1;
            let now = f.clock;
            f.files
                .insert(path.to_string(), (content.as_bytes().to_vec(), now));
        }
    }

    pub fn remove(&self, path: &str) -> bool {
        self.inner
            .lock()
            .map(|mut f| {
                f.modes.remove(path);
                f.files.remove(path).is_some()
            })
            .unwrap_or(false)
    }

    /// Sets the permission bits of `path` (its content and time unchanged, as `chmod`).
    pub fn chmod(&self, path: &str, mode: u32) -> bool {
        let Ok(mut f) = self.inner.lock() else {
            return false;
        };
        if !f.files.contains_key(path) {
            return false;
        }
        f.modes.insert(path.to_string(), mode);
        true
    }

    /// The permission bits of `path`, when a `chmod` (or a restore of a copy taken after
    /// one) set them.
    pub fn mode(&self, path: &str) -> Option<u32> {
        self.inner
            .lock()
            .ok()
            .and_then(|f| f.modes.get(path).copied())
    }

    /// Moves `from` to `to`, keeping its modification counter (as `mv` does).
    pub fn rename(&self, from: &str, to: &str) -> bool {
        let Ok(mut f) = self.inner.lock() else {
            return false;
        };
        match f.files.remove(from) {
            Some(entry) => {
                f.files.insert(to.to_string(), entry);
                if let Some(mode) = f.modes.remove(from) {
                    f.modes.insert(to.to_string(), mode);
                }
                true
            }
            None => false,
        }
    }

    /// The content of `path`, if it exists.
    pub fn read(&self, path: &str) -> Option<String> {
        self.inner.lock().ok().and_then(|f| {
            f.files
                .get(path)
                .map(|(c, _)| String::from_utf8_lossy(c).into_owned())
        })
    }

    /// The paths of every file.
    pub fn paths(&self) -> Vec<String> {
        self.inner
            .lock()
            .map(|f| f.files.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// How many copies are kept (all runs).
    pub fn copies(&self) -> usize {
        self.inner.lock().map(|f| f.copies.len()).unwrap_or(0)
    }

    /// The tools that act on this workspace.
    pub fn toolbox(&self) -> WorkspaceToolbox {
        WorkspaceToolbox { ws: self.clone() }
    }

    fn facts(&self, path: &str) -> Option<FileFacts> {
        self.inner.lock().ok().and_then(|f| {
            f.files.get(path).map(|(c, m)| FileFacts {
                path: path.to_string(),
                size: c.len() as u64,
                modified_ns: *m,
                mode: f.modes.get(path).copied(),
            })
        })
    }
}

#[async_trait]
impl WorkspaceFiles for MemoryWorkspace {
    async fn list(&self, _workspace: &Path, limit: usize) -> Result<Listing, WorkspaceError> {
        let paths = self.paths();
        let truncated = paths.len() > limit;
        Ok(Listing {
            files: paths
                .iter()
                .take(limit)
                .filter_map(|p| self.facts(p))
                .collect(),
            truncated,
        })
    }

    async fn stat(&self, _w: &Path, path: &str) -> Result<Option<FileFacts>, WorkspaceError> {
        Ok(self.facts(path))
    }

    async fn digest(&self, _w: &Path, path: &str) -> Result<Option<String>, WorkspaceError> {
        Ok(self
            .inner
            .lock()
            .ok()
            .and_then(|f| f.files.get(path).map(|(c, _)| digest(c))))
    }

    async fn head(
        &self,
        _w: &Path,
        path: &str,
        max_bytes: usize,
    ) -> Result<Option<Vec<u8>>, WorkspaceError> {
        Ok(self.inner.lock().ok().and_then(|f| {
            f.files
                .get(path)
                .map(|(c, _)| c[..c.len().min(max_bytes)].to_vec())
        }))
    }

    async fn keep_copy(&self, run: &str, _w: &Path, path: &str) -> Result<String, WorkspaceError> {
        let mut f = self
            .inner
            .lock()
            .map_err(|_| WorkspaceError::Io("poisoned".into()))?;
        let content = f
            .files
            .get(path)
            .map(|(c, _)| c.clone())
            .ok_or_else(|| WorkspaceError::Io(format!("no file {path}")))?;
        let d = digest(&content);
        let mode = f.modes.get(path).copied();
        f.copies
            .insert((run.to_string(), path.to_string()), (content, mode));
        Ok(d)
    }

    async fn restore(&self, run: &str, _w: &Path, path: &str) -> Result<(), WorkspaceError> {
        let mut f = self
            .inner
            .lock()
            .map_err(|_| WorkspaceError::Io("poisoned".into()))?;
        let content = f
            .copies
            .get(&(run.to_string(), path.to_string()))
            .cloned()
            .ok_or_else(|| WorkspaceError::NoCopy(path.to_string()))?;
        let (content, mode) = content;
        f.clock += 1;
        let now = f.clock;
        f.files.insert(path.to_string(), (content, now));
        match mode {
            Some(mode) => f.modes.insert(path.to_string(), mode),
            None => f.modes.remove(path),
        };
        Ok(())
    }

    async fn discard_copies(&self, run: &str) -> Result<(), WorkspaceError> {
        if let Ok(mut f) = self.inner.lock() {
            f.copies.retain(|(r, _), _| r != run);
        }
        Ok(())
    }
}

/// Tools over a [`MemoryWorkspace`].
#[derive(Debug, Clone)]
pub struct WorkspaceToolbox {
    ws: MemoryWorkspace,
}

impl WorkspaceToolbox {
    fn shell(&self, command: &str) -> ToolOutput {
        let words: Vec<&str> = command.split_whitespace().collect();
        match words.as_slice() {
            ["rm", path] => {
                self.ws.remove(path);
            }
            ["mv", from, to] if !self.ws.rename(from, to) => {
                return ToolOutput::error(format!("mv: cannot stat '{from}'"));
            }
            ["chmod", mode, path] => {
                let changed = u32::from_str_radix(mode, 8)
                    .ok()
                    .is_some_and(|m| self.ws.chmod(path, m));
                if !changed {
                    return ToolOutput::error(format!("chmod: cannot access '{path}'"));
                }
            }
            ["cat", path] => {
                return match self.ws.read(path) {
                    Some(c) => ToolOutput::ok(format!("exit code: 0\n--- stdout ---\n{c}")),
                    None => ToolOutput::error(format!("cat: {path}: No such file")),
                }
            }
            ["expr", a, "+", b] => {
                let sum = a.parse::<i64>().unwrap_or(0) + b.parse::<i64>().unwrap_or(0);
                return ToolOutput::ok(format!(
                    "exit code: 0\n--- stdout ---\n{sum}\n--- stderr: (empty) ---"
                ));
            }
            ["expr", a, "+", b, ">", path] => {
                let sum = a.parse::<i64>().unwrap_or(0) + b.parse::<i64>().unwrap_or(0);
                self.ws.write(path, &format!("{sum}\n"));
            }
            ["echo", .., ">", path] => {
                let text = command
                    .trim_start_matches("echo ")
                    .rsplit_once(" > ")
                    .map(|(t, _)| t.trim_matches('\'').to_string())
                    .unwrap_or_default();
                self.ws.write(path, &format!("{text}\n"));
            }
            _ => {}
        }
        ToolOutput::ok("exit code: 0")
    }
}

#[async_trait]
impl Toolbox for WorkspaceToolbox {
    fn schemas(&self) -> Vec<ToolSchema> {
        ["shell_exec", "file_write", "file_str_replace", "file_read"]
            .iter()
            .map(|name| ToolSchema {
                name: (*name).into(),
                description: "test".into(),
                parameters: json!({"type": "object"}),
            })
            .collect()
    }

    fn idempotent(&self, name: &str) -> bool {
        name == "file_read"
    }

    /// As the built-in tools it stands in for declare it.
    fn family(&self, name: &str) -> ToolFamily {
        if name == "shell_exec" {
            ToolFamily::Shell
        } else {
            ToolFamily::Files
        }
    }

    fn effect(&self, name: &str) -> ToolEffect {
        if name == "file_read" {
            ToolEffect::Reads
        } else {
            ToolEffect::Acts
        }
    }

    async fn call(
        &self,
        name: &str,
        args: Value,
        _ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let text = |k: &str| args[k].as_str().unwrap_or_default().to_string();
        match name {
            "shell_exec" => Ok(self.shell(&text("command"))),
            "file_write" => {
                let (path, mut content) = (text("path"), text("content"));
                if args.get("append") == Some(&Value::Bool(true)) {
                    content = self.ws.read(&path).unwrap_or_default() + &content;
                }
                self.ws.write(&path, &content);
                Ok(ToolOutput {
                    content: format!("wrote {} bytes to '{path}'", content.len()),
                    is_error: false,
                    attachments: vec![path],
                })
            }
            "file_str_replace" => {
                let path = text("path");
                let Some(old) = self.ws.read(&path) else {
                    return Err(ToolError::Failed(format!("'{path}' does not exist")));
                };
                if !old.contains(&text("old")) {
                    return Err(ToolError::Failed(format!(
                        "`old` was not found in '{path}'"
                    )));
                }
                self.ws
                    .write(&path, &old.replacen(&text("old"), &text("new"), 1));
                Ok(ToolOutput::ok(format!("replaced 1 occurrence in '{path}'")))
            }
            "file_read" => self
                .ws
                .read(&text("path"))
                .map(ToolOutput::ok)
                .ok_or_else(|| ToolError::Failed("it does not exist".into())),
            other => Err(ToolError::Refused(format!("unknown tool '{other}'"))),
        }
    }
}
