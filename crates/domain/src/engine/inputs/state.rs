//! [`InputGuard`]: a run's record of its input files (the files in the workspace when it
//! started), what the run may do to each (what its calls declared), and what happened to
//! them so far. Owned by the run context; the checks that use it are this folder's other
//! files (docs/security.md, "Input files").

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::model::inputs::{MovedFile, Permit, RecordedInput};
use crate::ports::{FileFacts, WorkspaceFiles};

/// Most files recorded as inputs; a bigger workspace is protected only this far (the run
/// says so).
pub(crate) const MAX_INPUTS: usize = 5_000;
/// Largest input a copy is kept of; a change to a bigger one is detected and reported, not
/// undone.
pub(crate) const MAX_COPY_BYTES: u64 = 1024 * 1024;
/// Most bytes of copies kept per run.
pub(crate) const MAX_COPIES_BYTES: u64 = 64 * 1024 * 1024;

/// One input and what the run did to it so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Input {
    pub(crate) recorded: RecordedInput,
    /// The file as last seen (after a restore, its new modification time).
    pub(crate) seen: FileFacts,
    /// Moved away (a permitted rename): where its content is now.
    pub(crate) moved_to: Option<String>,
}

/// What a run knows of its inputs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Inputs {
    pub(crate) files: BTreeMap<String, Input>,
    pub(crate) truncated: bool,
    /// Inputs whose unpermitted change the runtime undid, in order.
    pub(crate) restored: Vec<String>,
}

impl Inputs {
    /// The record of `inputs` (from the event a run wrote when it started).
    pub(crate) fn from_record(inputs: &[RecordedInput], truncated: bool) -> Inputs {
        let files = inputs
            .iter()
            .map(|r| {
                let seen = FileFacts {
                    path: r.path.clone(),
                    size: r.size,
                    modified_ns: r.modified_ns,
                    mode: r.mode,
                };
                (
                    r.path.clone(),
                    Input {
                        recorded: r.clone(),
                        seen,
                        moved_to: None,
                    },
                )
            })
            .collect();
        Inputs {
            files,
            truncated,
            restored: Vec::new(),
        }
    }

    pub(crate) fn moved(&self) -> Vec<MovedFile> {
        self.files
            .values()
            .filter_map(|i| {
                i.moved_to.as_ref().map(|to| MovedFile {
                    from: i.recorded.path.clone(),
                    to: to.clone(),
                })
            })
            .collect()
    }
}

/// `path` relative to `workspace`, `/`-separated, without `./`.
pub(crate) fn relative_path(workspace: &str, path: &str) -> String {
    let ws = workspace.trim_end_matches('/');
    let rel = path
        .strip_prefix(ws)
        .and_then(|r| r.strip_prefix('/'))
        .unwrap_or(path);
    let parts: Vec<&str> = rel
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    parts.join("/")
}

/// The guard of one run: the port, the run's settings, and the record (none until the run
/// recorded or reloaded its inputs, and never without a port).
pub(crate) struct InputGuard {
    pub(crate) port: Option<Arc<dyn WorkspaceFiles>>,
    /// `--allow-input-edits`: every input may change without a declaration.
    pub(crate) allow_edits: bool,
    /// `--protect` globs: inputs no call may change, declared or not.
    pub(crate) protect: Vec<String>,
    /// Held across a whole check, so parallel steps' checks do not interleave.
    pub(crate) state: tokio::sync::Mutex<Option<Inputs>>,
}

impl InputGuard {
    pub(crate) fn new(
        port: Option<Arc<dyn WorkspaceFiles>>,
        allow_edits: bool,
        protect: Vec<String>,
    ) -> InputGuard {
        InputGuard {
            port,
            allow_edits,
            protect,
            state: tokio::sync::Mutex::new(None),
        }
    }

    /// Whether `--protect` names `path`.
    pub(crate) fn protects(&self, path: &str) -> bool {
        self.protect
            .iter()
            .any(|g| crate::model::approval::glob(g, path, true))
    }

    /// What the run may do to input `path` when it starts.
    pub(crate) fn first_permit(&self, path: &str) -> Permit {
        if self.protects(path) {
            Permit::Protected
        } else if self.allow_edits {
            Permit::Change
        } else {
            Permit::Read
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_made_relative() {
        assert_eq!(relative_path("/w", "/w/a/b.txt"), "a/b.txt");
        assert_eq!(relative_path("/w/", "./a//b.txt"), "a/b.txt");
        assert_eq!(relative_path("/w", "data.txt"), "data.txt");
    }
}
