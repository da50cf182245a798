//! What `planwright runs diff` and `runs undo` print as text (docs/checkpoints.md): each
//! changed file with its unified diff (text) or a line (binary, too large, a link), coloured
//! when stdout is a terminal; their JSON shapes are the runner's (`runner::json`).

use std::fmt::Write as _;

use domain::ports::{shown_path, DiffContent, FileChange, FileDiff, Restored, WorkspaceDiff};

use crate::safe_text::terminal_safe;
use crate::terminal::{paint, Colour};

/// The diff as text; `colour`: ANSI colours on the added, removed and hunk lines.
pub fn diff_text(diff: &WorkspaceDiff, colour: bool) -> String {
    if diff.files.is_empty() {
        return "No changes.\n".to_string();
    }
    let mut s = String::new();
    for file in &diff.files {
        let _ = writeln!(s, "{}", header(file, colour));
        match &file.content {
            DiffContent::Text { unified } => {
                for line in unified.lines() {
                    let line = terminal_safe(line);
                    let painted = if line.starts_with("+++") || line.starts_with("---") {
                        line.into_owned()
                    } else if line.starts_with('+') {
                        paint(&line, Colour::Green, colour)
                    } else if line.starts_with('-') {
                        paint(&line, Colour::Red, colour)
                    } else if line.starts_with("@@") {
                        paint(&line, Colour::Yellow, colour)
                    } else {
                        line.into_owned()
                    };
                    let _ = writeln!(s, "{painted}");
                }
            }
            other => {
                let _ = writeln!(s, "  {}", described(other));
            }
        }
    }
    let count = |c| diff.files.iter().filter(|f| f.change == c).count();
    let _ = writeln!(
        s,
        "{} file(s) changed: {} created, {} modified, {} deleted",
        diff.files.len(),
        count(FileChange::Added),
        count(FileChange::Modified),
        count(FileChange::Deleted)
    );
    s
}

fn header(file: &FileDiff, colour: bool) -> String {
    let (word, c) = match file.change {
        FileChange::Added => ("created ", Colour::Green),
        FileChange::Modified => ("modified", Colour::Yellow),
        FileChange::Deleted => ("deleted ", Colour::Red),
    };
    format!("{} {}", paint(word, c, colour), shown_path(&file.path))
}

fn sizes(old: Option<u64>, new: Option<u64>) -> String {
    match (old, new) {
        (Some(o), Some(n)) => format!("{o} → {n} bytes"),
        (None, Some(n)) => format!("{n} bytes"),
        (Some(o), None) => format!("was {o} bytes"),
        (None, None) => "size unknown".into(),
    }
}

/// One line for a change that is not shown as a diff.
fn described(content: &DiffContent) -> String {
    match content {
        DiffContent::Text { .. } => String::new(),
        DiffContent::Binary { old_size, new_size } => {
            format!("binary file, {}", sizes(*old_size, *new_size))
        }
        DiffContent::NotKept { old_size, new_size } => format!(
            "content not kept (too large or unreadable), {}",
            sizes(*old_size, *new_size)
        ),
        DiffContent::TooLongToShow { old_size, new_size } => {
            format!("too long to show, {}", sizes(*old_size, *new_size))
        }
        DiffContent::Link {
            old_target,
            new_target,
        } => format!(
            "symbolic link: {} → {}",
            old_target.as_deref().map_or("(none)".into(), shown_path),
            new_target.as_deref().map_or("(none)".into(), shown_path)
        ),
        DiffContent::Mode {
            old_mode: Some(old),
            new_mode: Some(new),
            ..
        } => format!("permissions {old:03o} → {new:03o}"),
        DiffContent::Mode { executable, .. } => format!(
            "executable bit {}",
            if *executable { "set" } else { "cleared" }
        ),
    }
}

/// What an undo did, and how to undo it.
pub fn undo_text(run_id: &str, restored: &Restored) -> String {
    let mut s = String::new();
    if restored.written.is_empty() && restored.removed.is_empty() {
        let _ = writeln!(s, "Nothing to undo: the workspace is as it was.");
    }
    for path in &restored.written {
        let _ = writeln!(s, "restored {}", shown_path(path));
    }
    for path in &restored.removed {
        let _ = writeln!(s, "removed  {}", shown_path(path));
    }
    for c in &restored.forced {
        let _ = writeln!(s, "forced   {} ({:?})", shown_path(&c.path), c.reason);
    }
    let _ = writeln!(
        s,
        "To undo this undo: planwright runs undo {run_id} --checkpoint {}",
        restored.before.id
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::ports::CheckpointId;

    fn diff(files: Vec<FileDiff>) -> WorkspaceDiff {
        WorkspaceDiff {
            from: CheckpointId::new("a"),
            to: CheckpointId::new("b"),
            files,
        }
    }

    #[test]
    fn a_text_change_is_a_unified_diff_coloured_only_when_asked() {
        let d = diff(vec![FileDiff {
            path: "a.txt".into(),
            change: FileChange::Modified,
            content: DiffContent::Text {
                unified: "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new\n".into(),
            },
        }]);
        let plain = diff_text(&d, false);
        assert!(plain.contains("modified a.txt\n"), "{plain}");
        assert!(plain.contains("\n-old\n+new\n"), "{plain}");
        assert!(!plain.contains('\u{1b}'));
        let coloured = diff_text(&d, true);
        assert!(coloured.contains("\u{1b}[32m+new"), "{coloured}");
        assert!(coloured.contains("\u{1b}[31m-old"), "{coloured}");
    }

    #[test]
    fn other_changes_are_one_line_each() {
        let d = diff(vec![
            FileDiff {
                path: "img.png".into(),
                change: FileChange::Added,
                content: DiffContent::Binary {
                    old_size: None,
                    new_size: Some(10),
                },
            },
            FileDiff {
                path: "big.csv".into(),
                change: FileChange::Deleted,
                content: DiffContent::NotKept {
                    old_size: Some(99),
                    new_size: None,
                },
            },
        ]);
        let text = diff_text(&d, false);
        assert!(
            text.contains("created  img.png\n  binary file, 10 bytes"),
            "{text}"
        );
        assert!(
            text.contains("deleted  big.csv\n  content not kept"),
            "{text}"
        );
        assert!(text.contains("2 file(s) changed: 1 created, 0 modified, 1 deleted"));
        assert_eq!(diff_text(&diff(Vec::new()), false), "No changes.\n");
    }

    /// Issue 41 (Low): file names reached the terminal raw in `runs diff` and `runs undo`
    /// output; a newline split a line, an escape sequence reached the terminal.
    #[test]
    fn file_names_are_shown_escaped_one_line_each() {
        use domain::ports::{Checkpoint, ConflictReason, RestoreConflict};
        let hostile = "evil\x1b]52;c;cm0gLXJm\x07\nfake line\x1b[2J.txt";
        let d = diff(vec![FileDiff {
            path: hostile.into(),
            change: FileChange::Added,
            content: DiffContent::Link {
                old_target: None,
                new_target: Some("/etc\n\x1b[31m".into()),
            },
        }]);
        let undone = Restored {
            before: Checkpoint {
                id: CheckpointId::new("c0"),
                files: 1,
                bytes: 1,
                stored_bytes: 0,
                left_out: Vec::new(),
                complete: true,
            },
            written: vec![hostile.into()],
            removed: vec![hostile.into()],
            forced: vec![RestoreConflict {
                path: hostile.into(),
                reason: ConflictReason::ChangedAfterRun,
            }],
        };
        for text in [diff_text(&d, false), undo_text("run_1", &undone)] {
            assert!(
                !text.contains('\u{1b}') && !text.contains('\u{7}'),
                "{text:?}"
            );
            assert!(
                !text.lines().any(|l| l.starts_with("fake line")),
                "a name split a line: {text:?}"
            );
            assert!(
                text.contains("evil\\x1b]52;c;cm0gLXJm\\x07\\nfake line\\x1b[2J.txt"),
                "{text:?}"
            );
        }
    }
}
