//! The workspace's files as a run sees them (docs/security.md, "Input files"): the inputs
//! recorded when it started and what each may undergo ([`Permit`]), what the runtime did
//! about a change ([`InputAction`]), and what the run changed in the end ([`FileChanges`]).

use serde::{Deserialize, Serialize};

/// What the run may do to an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Permit {
    /// Nothing: read it only, until a call says it will change it.
    #[default]
    Read,
    /// Rename or move it, its content unchanged (recorded by runs before declarations;
    /// never given now).
    Move,
    /// Change, move or delete it: a call said so (`changes`, a file tool's `path`), or
    /// `--allow-input-edits`.
    Change,
    /// Never: `--protect` names it.
    Protected,
}

/// One input as recorded when the run started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedInput {
    pub path: String,
    pub size: u64,
    pub modified_ns: u64,
    /// Its permission bits when the run started (absent: not known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<u32>,
    /// Digest of its content, when a copy was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// A copy was kept, so a change can be undone.
    #[serde(default)]
    pub copied: bool,
    #[serde(default)]
    pub permit: Permit,
}

/// What the runtime did about a change to an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InputAction {
    /// A file tool was refused before it wrote.
    Refused,
    /// A call said it will change this input (its `changes` argument, or a file tool's
    /// `path`): from then on the run may change it.
    Declared,
    /// The change was undone from the kept copy.
    Restored,
    /// The change could not be undone (no copy: too large); it is reported.
    NotRestored,
}

impl InputAction {
    pub fn as_str(self) -> &'static str {
        match self {
            InputAction::Refused => "refused",
            InputAction::Declared => "declared",
            InputAction::Restored => "restored",
            InputAction::NotRestored => "not restored",
        }
    }
}

/// An input renamed or moved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MovedFile {
    pub from: String,
    pub to: String,
}

/// What a run left changed in its workspace, from the files themselves (not from what the
/// model said).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FileChanges {
    /// Files that were not there when the run started.
    pub created: Vec<String>,
    /// Inputs whose content changed.
    pub changed: Vec<String>,
    /// Inputs that are gone (and not found elsewhere with the same content).
    pub deleted: Vec<String>,
    /// Inputs renamed or moved, content unchanged.
    pub moved: Vec<MovedFile>,
    /// Inputs the runtime put back after an unpermitted change.
    pub restored: Vec<String>,
}

impl FileChanges {
    pub fn is_empty(&self) -> bool {
        self.created.is_empty()
            && self.changed.is_empty()
            && self.deleted.is_empty()
            && self.moved.is_empty()
            && self.restored.is_empty()
    }

    /// A few lines for the end of the summary; empty when nothing changed.
    pub fn text(&self) -> String {
        let mut lines: Vec<String> = Vec::new();
        let mut line = |label: &str, names: &[String]| {
            if !names.is_empty() {
                lines.push(format!("- {label}: {}", names.join(", ")));
            }
        };
        line("created", &self.created);
        line("changed (existed before the run)", &self.changed);
        line("deleted (existed before the run)", &self.deleted);
        let moved: Vec<String> = self
            .moved
            .iter()
            .map(|m| format!("{} → {}", m.from, m.to))
            .collect();
        line("moved (existed before the run)", &moved);
        line("restored (changes undone by the runtime)", &self.restored);
        if lines.is_empty() {
            return String::new();
        }
        format!("Files:\n{}", lines.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_lists_what_changed() {
        assert_eq!(FileChanges::default().text(), "");
        let changes = FileChanges {
            created: vec!["total.txt".into()],
            changed: vec!["notes.md".into()],
            deleted: vec![],
            moved: vec![MovedFile {
                from: "a.txt".into(),
                to: "b.txt".into(),
            }],
            restored: vec!["data.txt".into()],
        };
        assert_eq!(
            changes.text(),
            "Files:\n- created: total.txt\n- changed (existed before the run): notes.md\n\
             - moved (existed before the run): a.txt → b.txt\n\
             - restored (changes undone by the runtime): data.txt"
        );
    }
}
