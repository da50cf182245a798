//! Workspace checkpoints as plain data (docs/checkpoints.md): a checkpoint's id and what it
//! recorded, the difference between two checkpoints ([`WorkspaceDiff`]), what an undo asks
//! and did. The `WorkspaceCheckpoints` port
//! (`ports/checkpoints.rs`) takes, compares and restores them; `CheckpointLog` there reads
//! them back from a run's events.

use serde::{Deserialize, Serialize};

/// The id of one checkpoint of a run (a digest of what it recorded: two checkpoints of the
/// same tree have the same id).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CheckpointId(String);

impl CheckpointId {
    pub fn new(id: impl Into<String>) -> CheckpointId {
        CheckpointId(id.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for CheckpointId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// When a checkpoint is taken.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "at", rename_all = "snake_case")]
pub enum CheckpointAt {
    /// Before attempt `attempt` (1, 2, ...) of step `step_id`.
    Step { step_id: String, attempt: u32 },
    /// When the run ended: what the run left.
    RunEnd,
    /// Before an undo: what the undo is about to replace (so the undo can be undone).
    BeforeRestore,
}

/// Why a path is in the workspace but not (fully) in a checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LeftOutReason {
    /// Bigger than the per-file cap, or past the per-checkpoint cap: its size and time are
    /// recorded (a change is seen), its content is not kept.
    TooLarge,
    /// It could not be read.
    Unreadable,
    /// It kept changing while it was read (read twice).
    Unstable,
    /// The checkpoint store could not keep it (disk full...): the checkpoint is incomplete.
    NotStored,
    /// A FIFO, a socket or a device: never read.
    Special,
    /// Its name is not UTF-8: left alone.
    NameNotUtf8,
}

/// A path a checkpoint does not hold the content of.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeftOut {
    /// Relative to the workspace, `/`-separated (lossy for a name that is not UTF-8).
    pub path: String,
    pub reason: LeftOutReason,
}

/// A checkpoint as it was taken.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub id: CheckpointId,
    /// Files and symbolic links recorded.
    pub files: u64,
    /// Their total size in bytes.
    pub bytes: u64,
    /// Bytes this checkpoint added to the store (0 when nothing changed).
    pub stored_bytes: u64,
    /// Paths whose content is not kept, and why.
    pub left_out: Vec<LeftOut>,
    /// False when the store could not keep something ([`LeftOutReason::NotStored`]): an
    /// undo to it refuses.
    pub complete: bool,
}

/// How a file differs between two checkpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileChange {
    Added,
    Deleted,
    Modified,
}

/// What can be shown of a file's change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DiffContent {
    /// Text on both sides (or on the one that exists): a unified diff (`--- a/PATH`,
    /// `+++ b/PATH`, hunks with 3 lines of context).
    Text { unified: String },
    /// Not text on some side: sizes only.
    Binary {
        old_size: Option<u64>,
        new_size: Option<u64>,
    },
    /// A side's content was not kept (too large, unreadable...): sizes only.
    NotKept {
        old_size: Option<u64>,
        new_size: Option<u64>,
    },
    /// Text too long to diff here: sizes only.
    TooLongToShow {
        old_size: Option<u64>,
        new_size: Option<u64>,
    },
    /// A symbolic link on some side: where it points.
    Link {
        old_target: Option<String>,
        new_target: Option<String>,
    },
    /// Same content, the permissions changed (`chmod`): whether it is executable now, and
    /// the permission bits on each side when both checkpoints recorded them.
    Mode {
        executable: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        old_mode: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        new_mode: Option<u32>,
    },
}

/// One changed path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileDiff {
    pub path: String,
    pub change: FileChange,
    pub content: DiffContent,
}

/// What changed in the workspace from one checkpoint to another, sorted by path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkspaceDiff {
    pub from: CheckpointId,
    pub to: CheckpointId,
    pub files: Vec<FileDiff>,
}

impl WorkspaceDiff {
    /// The paths with `change`.
    pub fn paths(&self, change: FileChange) -> Vec<&str> {
        self.files
            .iter()
            .filter(|f| f.change == change)
            .map(|f| f.path.as_str())
            .collect()
    }
}

/// An undo: put the workspace back as checkpoint `target` recorded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestoreRequest {
    pub target: CheckpointId,
    /// What the run left (its [`CheckpointAt::RunEnd`] checkpoint, else its last one): only
    /// the paths that differ between `target` and this are the run's changes and are put
    /// back; a path that changed since this (someone else's edit) is a conflict. `None`:
    /// every path that differs from `target` now is put back, no conflict.
    pub run_left: Option<CheckpointId>,
    /// Overwrite conflicting paths instead of refusing; paths whose content `target` did
    /// not keep are then left as they are.
    pub force: bool,
}

/// Why an undo would not put a path back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConflictReason {
    /// It changed after the run (it differs from `run_left`).
    ChangedAfterRun,
    /// The target checkpoint did not keep its content (too large, unreadable...).
    NotKept,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RestoreConflict {
    pub path: String,
    pub reason: ConflictReason,
}

/// What an undo did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Restored {
    /// The checkpoint taken before anything was changed: restoring it undoes this undo.
    pub before: Checkpoint,
    /// Paths written back (files and links), sorted.
    pub written: Vec<String>,
    /// Paths removed (the run created them), sorted.
    pub removed: Vec<String>,
    /// Conflicts `force` overwrote or left (see [`RestoreRequest::force`]).
    pub forced: Vec<RestoreConflict>,
}

/// A workspace path as shown to a person (a terminal, a message): control characters
/// (newlines, tabs, `ESC`, C1 controls, DEL) and the bidirectional-text overrides written
/// as escapes (`\n`, `\t`, `\r`, `\x1b`, `\u{202e}`), so a file name can neither send an
/// escape sequence to the terminal nor split or reorder a line. Borrows a plain name.
pub fn shown_path(path: &str) -> std::borrow::Cow<'_, str> {
    fn escaped(c: char) -> bool {
        c.is_control()
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    }
    if !path.chars().any(escaped) {
        return std::borrow::Cow::Borrowed(path);
    }
    let mut out = String::with_capacity(path.len() + 8);
    for c in path.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if escaped(c) && (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if escaped(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod shown_path_tests {
    use super::shown_path;

    #[test]
    fn control_characters_in_names_are_escaped_and_plain_names_borrowed() {
        assert!(matches!(
            shown_path("src/main.rs"),
            std::borrow::Cow::Borrowed("src/main.rs")
        ));
        assert_eq!(shown_path("ünïcode ✓.txt"), "ünïcode ✓.txt");
        assert_eq!(shown_path("a\nb.txt"), "a\\nb.txt");
        assert_eq!(
            shown_path("x\x1b]52;c;cm0=\x07.txt"),
            "x\\x1b]52;c;cm0=\\x07.txt"
        );
        assert_eq!(shown_path("\x1b[2J\r\t"), "\\x1b[2J\\r\\t");
        assert_eq!(shown_path("a\u{9b}31m"), "a\\u{9b}31m");
        assert_eq!(shown_path("evil\u{202e}txt.exe"), "evil\\u{202e}txt.exe");
        assert_eq!(shown_path("del\u{7f}"), "del\\x7f");
    }
}
