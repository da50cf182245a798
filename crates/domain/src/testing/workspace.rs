//! [`MemoryWorkspace`]: the [`WorkspaceFiles`] port in memory (files, their modification
//! counter, the copies kept per run, and scratch folders made from them), and
//! [`WorkspaceToolbox`], tools that change it as the real file and shell tools would change
//! a folder: `file_write`, `file_str_replace`, `file_read`, and `shell_exec` understanding
//! `echo TEXT > PATH`, `expr A + B [> PATH]`, `rm PATH`, `mv A B`, `cat PATH`,
//! `chmod OCTAL PATH`, `touch PATH` (anything else just succeeds); `code_run` runs its
//! program's lines as such commands, in the folder its context names (the workspace, or a
//! scratch folder), a line `final_answer TEXT` ending it with that answer, a line `input
//! QUESTION` or `call TOOL URL` (`browser_navigate`, which answers `page of URL`) taking
//! the next of its `results` as `$REPLY` (none left: it stops there at that call, as the
//! real tool does when nothing was written yet). A
//! file's permissions are unknown (`None`) until a `chmod` sets them; a kept copy keeps them.

use std::collections::hash_map::DefaultHasher;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{json, Value};

use crate::model::tool_kind::{ToolEffect, ToolFamily};
use crate::ports::llm::ToolSchema;
use crate::ports::{
    FileFacts, Listing, ProgramCall, ScratchFile, ToolContext, ToolError, ToolOutput, Toolbox,
    WorkspaceError, WorkspaceFiles,
};
use crate::tools::builtin::ASK_USER;
use crate::tools::code::CallResult;

/// path → (content, modification counter)
type Folder = BTreeMap<String, (Vec<u8>, u64)>;

#[derive(Debug, Default)]
struct Files {
    files: Folder,
    /// path → permission bits, once a `chmod` set them
    modes: BTreeMap<String, u32>,
    /// (run, path) → content and permission bits
    copies: BTreeMap<(String, String), (Vec<u8>, Option<u32>)>,
    /// Scratch folders by their path.
    scratches: BTreeMap<String, Folder>,
    clock: u64,
}

impl Files {
    /// The folder `dir` names: a scratch folder, else the workspace.
    /// Whether `dir` is a scratch folder (any other folder is the workspace).
    fn is_scratch(&self, dir: &Path) -> bool {
        self.scratches.contains_key(&dir.display().to_string())
    }

    fn folder(&mut self, dir: &Path) -> &mut Folder {
        let key = dir.display().to_string();
        if self.scratches.contains_key(&key) {
            self.scratches.entry(key).or_default()
        } else {
            &mut self.files
        }
    }
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

    /// Writes `path` of the workspace (a new modification counter).
    pub fn write(&self, path: &str, content: &str) {
        self.write_in(Path::new(""), path, content);
    }

    fn write_in(&self, dir: &Path, path: &str, content: &str) {
        if let Ok(mut f) = self.inner.lock() {
            f.clock += 1;
            let now = f.clock;
            f.folder(dir)
                .insert(path.to_string(), (content.as_bytes().to_vec(), now));
        }
    }

    pub fn remove(&self, path: &str) -> bool {
        self.remove_in(Path::new(""), path)
    }

    fn remove_in(&self, dir: &Path, path: &str) -> bool {
        self.inner
            .lock()
            .map(|mut f| {
                if !f.is_scratch(dir) {
                    f.modes.remove(path);
                }
                f.folder(dir).remove(path).is_some()
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
        self.rename_in(Path::new(""), from, to)
    }

    fn rename_in(&self, dir: &Path, from: &str, to: &str) -> bool {
        let Ok(mut f) = self.inner.lock() else {
            return false;
        };
        let in_workspace = !f.is_scratch(dir);
        let folder = f.folder(dir);
        let Some(entry) = folder.remove(from) else {
            return false;
        };
        folder.insert(to.to_string(), entry);
        if in_workspace {
            if let Some(mode) = f.modes.remove(from) {
                f.modes.insert(to.to_string(), mode);
            }
        }
        true
    }

    /// The content of `path` of the workspace, if it exists.
    pub fn read(&self, path: &str) -> Option<String> {
        self.read_in(Path::new(""), path)
    }

    fn read_in(&self, dir: &Path, path: &str) -> Option<String> {
        self.inner.lock().ok().and_then(|mut f| {
            f.folder(dir)
                .get(path)
                .map(|(c, _)| String::from_utf8_lossy(c).into_owned())
        })
    }

    /// The paths of every file of the workspace.
    pub fn paths(&self) -> Vec<String> {
        self.paths_in(Path::new(""))
    }

    fn paths_in(&self, dir: &Path) -> Vec<String> {
        self.inner
            .lock()
            .map(|mut f| f.folder(dir).keys().cloned().collect())
            .unwrap_or_default()
    }

    /// The scratch folders made so far (their paths).
    pub fn scratch_folders(&self) -> Vec<String> {
        self.inner
            .lock()
            .map(|f| f.scratches.keys().cloned().collect())
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

    fn facts(&self, dir: &Path, path: &str) -> Option<FileFacts> {
        self.inner.lock().ok().and_then(|mut f| {
            let mode = if !f.is_scratch(dir) {
                f.modes.get(path).copied()
            } else {
                None
            };
            f.folder(dir).get(path).map(|(c, m)| FileFacts {
                path: path.to_string(),
                size: c.len() as u64,
                modified_ns: *m,
                mode,
            })
        })
    }
}

#[async_trait]
impl WorkspaceFiles for MemoryWorkspace {
    async fn list(&self, workspace: &Path, limit: usize) -> Result<Listing, WorkspaceError> {
        let paths = self.paths_in(workspace);
        let truncated = paths.len() > limit;
        Ok(Listing {
            files: paths
                .iter()
                .take(limit)
                .filter_map(|p| self.facts(workspace, p))
                .collect(),
            truncated,
        })
    }

    async fn stat(&self, w: &Path, path: &str) -> Result<Option<FileFacts>, WorkspaceError> {
        Ok(self.facts(w, path))
    }

    async fn digest(&self, w: &Path, path: &str) -> Result<Option<String>, WorkspaceError> {
        Ok(self
            .inner
            .lock()
            .ok()
            .and_then(|mut f| f.folder(w).get(path).map(|(c, _)| digest(c))))
    }

    async fn head(
        &self,
        w: &Path,
        path: &str,
        max_bytes: usize,
    ) -> Result<Option<Vec<u8>>, WorkspaceError> {
        Ok(self.inner.lock().ok().and_then(|mut f| {
            f.folder(w)
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
            let prefix = format!("/scratch/{run}/");
            f.scratches.retain(|dir, _| !dir.starts_with(&prefix));
        }
        Ok(())
    }

    async fn scratch(
        &self,
        run: &str,
        _w: &Path,
        name: &str,
        files: &[ScratchFile],
    ) -> Result<PathBuf, WorkspaceError> {
        let mut f = self
            .inner
            .lock()
            .map_err(|_| WorkspaceError::Io("poisoned".into()))?;
        let mut folder = Folder::new();
        for file in files {
            let content = if file.from_copy {
                f.copies
                    .get(&(run.to_string(), file.path.clone()))
                    .map(|(c, _)| c.clone())
            } else {
                f.files.get(&file.path).map(|(c, _)| c.clone())
            }
            .ok_or_else(|| WorkspaceError::Io(format!("no source for {}", file.path)))?;
            f.clock += 1;
            let now = f.clock;
            folder.insert(file.path.clone(), (content, now));
        }
        let dir = format!("/scratch/{run}/{name}");
        f.scratches.insert(dir.clone(), folder);
        Ok(PathBuf::from(dir))
    }
}

/// Tools over a [`MemoryWorkspace`].
#[derive(Debug, Clone)]
pub struct WorkspaceToolbox {
    ws: MemoryWorkspace,
}

impl WorkspaceToolbox {
    /// One command in folder `dir`: its output, and what it printed (`None`: it failed).
    fn command(&self, dir: &Path, command: &str) -> (ToolOutput, Option<String>) {
        let words: Vec<&str> = command.split_whitespace().collect();
        let ok = |printed: String| {
            (
                ToolOutput::ok(format!("exit code: 0\n--- stdout ---\n{printed}")),
                Some(printed),
            )
        };
        match words.as_slice() {
            ["rm", path] => {
                self.ws.remove_in(dir, path);
            }
            ["mv", from, to] if !self.ws.rename_in(dir, from, to) => {
                return (ToolOutput::error(format!("mv: cannot stat '{from}'")), None);
            }
            ["chmod", mode, path] => {
                let changed = u32::from_str_radix(mode, 8)
                    .ok()
                    .is_some_and(|m| self.ws.chmod(path, m));
                if !changed {
                    return (
                        ToolOutput::error(format!("chmod: cannot access '{path}'")),
                        None,
                    );
                }
            }
            ["cat", path] => {
                return match self.ws.read_in(dir, path) {
                    Some(c) => ok(c),
                    None => (
                        ToolOutput::error(format!("cat: {path}: No such file")),
                        None,
                    ),
                }
            }
            ["expr", a, "+", b] => {
                let sum = a.parse::<i64>().unwrap_or(0) + b.parse::<i64>().unwrap_or(0);
                return ok(format!("{sum}\n"));
            }
            ["expr", a, "+", b, ">", path] => {
                let sum = a.parse::<i64>().unwrap_or(0) + b.parse::<i64>().unwrap_or(0);
                self.ws.write_in(dir, path, &format!("{sum}\n"));
            }
            ["echo", .., ">", path] => {
                let text = command
                    .trim_start_matches("echo ")
                    .rsplit_once(" > ")
                    .map(|(t, _)| t.trim_matches('\'').to_string())
                    .unwrap_or_default();
                self.ws.write_in(dir, path, &format!("{text}\n"));
            }
            ["touch", path] if self.ws.read_in(dir, path).is_none() => {
                self.ws.write_in(dir, path, "");
            }
            ["fail", ..] => return (ToolOutput::error("exit code: 1"), None),
            _ => {}
        }
        ok(String::new())
    }

    fn shell(&self, dir: &Path, command: &str) -> ToolOutput {
        self.command(dir, command).0
    }

    /// A program: its lines as commands (comments skipped), stopping at the first failure;
    /// `final_answer TEXT` ends it with that answer. The files its `> PATH` and `touch`
    /// lines wrote are its attachments.
    fn program(&self, dir: &Path, code: &str, mut results: Vec<CallResult>) -> ToolOutput {
        let mut printed = String::new();
        let mut written: Vec<String> = Vec::new();
        let mut answer = None;
        let mut reply = String::new();
        results.reverse();
        for line in code.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let line = &line.replace("$REPLY", &reply);
            let called = match line.split_once(' ') {
                Some(("input", question)) => Some((ASK_USER, json!({ "question": question }))),
                Some(("call", rest)) => rest
                    .split_once(' ')
                    .map(|(tool, url)| (tool, json!({ "url": url }))),
                _ => None,
            };
            if let Some((tool, arguments)) = called {
                match results.pop() {
                    Some(r) if r.ok => reply = r.value,
                    Some(r) => return ToolOutput::error(format!("RuntimeError: {}", r.value)),
                    None if written.is_empty() => {
                        return ToolOutput {
                            content: format!("exit code: 0\n--- stdout ---\n{printed}"),
                            is_error: true,
                            program_call: Some(ProgramCall {
                                tool: tool.to_string(),
                                arguments,
                            }),
                            ..ToolOutput::default()
                        }
                    }
                    None => return ToolOutput::error("stopped at a call after writing"),
                }
                continue;
            }
            if let Some(text) = line.strip_prefix("final_answer") {
                answer = Some(text.trim().to_string());
                break;
            }
            let words: Vec<&str> = line.split_whitespace().collect();
            let target = match words.as_slice() {
                ["touch", path] => Some(path),
                [.., ">", path] => Some(path),
                _ => None,
            };
            match self.command(dir, line) {
                (_, Some(p)) => printed.push_str(&p),
                (out, None) => return out,
            }
            if let Some(path) = target.filter(|p| !written.iter().any(|w| w == **p)) {
                written.push((*path).to_string());
            }
        }
        ToolOutput {
            content: format!("exit code: 0\n--- stdout ---\n{printed}"),
            stdout: Some(printed),
            final_answer: answer,
            attachments: written,
            ..ToolOutput::default()
        }
    }
}

#[async_trait]
impl Toolbox for WorkspaceToolbox {
    fn schemas(&self) -> Vec<ToolSchema> {
        [
            "shell_exec",
            "code_run",
            "file_write",
            "file_str_replace",
            "file_read",
            "browser_navigate",
        ]
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
        match name {
            "shell_exec" => ToolFamily::Shell,
            "code_run" => ToolFamily::Code,
            "browser_navigate" => ToolFamily::Browser,
            _ => ToolFamily::Files,
        }
    }

    fn effect(&self, name: &str) -> ToolEffect {
        match name {
            "file_read" => ToolEffect::Reads,
            "browser_navigate" => ToolEffect::Network,
            _ => ToolEffect::Acts,
        }
    }

    async fn call(
        &self,
        name: &str,
        args: Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let text = |k: &str| {
            let value = args[k].as_str().unwrap_or_default();
            // Paths are relative to the workspace, `./` or not (as the real file tools).
            match k {
                "path" => value.trim_start_matches("./").to_string(),
                _ => value.to_string(),
            }
        };
        match name {
            "shell_exec" => Ok(self.shell(&ctx.workspace, &text("command"))),
            "code_run" => {
                let results = serde_json::from_value(args["results"].clone()).unwrap_or_default();
                Ok(self.program(&ctx.workspace, &text("code"), results))
            }
            "browser_navigate" => Ok(ToolOutput::ok(format!("page of {}", text("url")))),
            "file_write" => {
                let (path, mut content) = (text("path"), text("content"));
                if args.get("append") == Some(&Value::Bool(true)) {
                    content = self.ws.read(&path).unwrap_or_default() + &content;
                }
                self.ws.write(&path, &content);
                Ok(ToolOutput {
                    content: format!("wrote {} bytes to '{path}'", content.len()),
                    attachments: vec![path],
                    ..ToolOutput::default()
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
