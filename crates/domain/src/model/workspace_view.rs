//! What a step is shown of the workspace before it acts (docs/code-actions.md, "The work up
//! front"): its files with their sizes, and the text of the small ones, within a budget, so
//! that a model does not spend calls listing and reading. Pure: the engine reads the files
//! through the `WorkspaceFiles` port (`engine/executor/workspace_view.rs`), this file holds
//! what was read and cuts it to the budget.

/// How much of the workspace a step is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ViewBudget {
    /// Files listed; the rest are counted.
    pub max_files: usize,
    /// Bytes read of each file to show its text.
    pub read_bytes: usize,
    /// Lines shown of one file.
    pub file_lines: usize,
    /// Characters shown of one file.
    pub file_chars: usize,
    /// Characters of file text shown in all.
    pub total_chars: usize,
}

impl Default for ViewBudget {
    fn default() -> Self {
        ViewBudget {
            max_files: 40,
            read_bytes: 8 * 1024,
            file_lines: 40,
            file_chars: 2000,
            total_chars: 5000,
        }
    }
}

/// One file as shown.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ViewedFile {
    pub path: String,
    pub size: u64,
    pub text: ViewedText,
}

/// What is shown of a file's content.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum ViewedText {
    /// Its text: `lines` of it shown, out of `total` when the whole file was read.
    Text {
        shown: String,
        lines: usize,
        total: Option<usize>,
    },
    /// Not text (a NUL byte, or not UTF-8).
    Binary,
    /// Text not shown: the budget was spent.
    NotShown,
}

/// The workspace as a step is shown it (journaled: a resumed attempt is shown the same).
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct WorkspaceView {
    pub files: Vec<ViewedFile>,
    /// Files not listed.
    pub more: usize,
}

impl WorkspaceView {
    /// Builds the view from `files` (path, size, the first bytes read: at most
    /// `budget.read_bytes`), in the order given, within `budget`.
    pub fn build(files: Vec<(String, u64, Option<Vec<u8>>)>, budget: ViewBudget) -> WorkspaceView {
        let total = files.len();
        let mut left = budget.total_chars;
        let mut out = Vec::new();
        for (path, size, head) in files.into_iter().take(budget.max_files) {
            let text = match head {
                None => ViewedText::NotShown,
                Some(bytes) => match text_of(&bytes) {
                    None => ViewedText::Binary,
                    Some(_) if left == 0 => ViewedText::NotShown,
                    Some(text) => {
                        let whole = u64::try_from(bytes.len()).is_ok_and(|n| n >= size);
                        // A line longer than the file's own cap is cut; one that only the
                        // total left would cut is not shown at all.
                        let cut_first = left >= budget.file_chars;
                        let (shown, lines) = first_lines(
                            text,
                            budget.file_lines,
                            budget.file_chars.min(left),
                            cut_first,
                        );
                        left = left.saturating_sub(shown.chars().count());
                        if lines == 0 && !text.is_empty() {
                            ViewedText::NotShown
                        } else {
                            ViewedText::Text {
                                shown,
                                lines,
                                total: whole.then(|| text.lines().count()),
                            }
                        }
                    }
                },
            };
            out.push(ViewedFile { path, size, text });
        }
        WorkspaceView {
            more: total.saturating_sub(out.len()),
            files: out,
        }
    }
}

/// The bytes as text: UTF-8 without NUL (a cut at the end of a multi-byte character is
/// taken off).
fn text_of(bytes: &[u8]) -> Option<&str> {
    if bytes.contains(&0) {
        return None;
    }
    match std::str::from_utf8(bytes) {
        Ok(s) => Some(s),
        Err(e) if e.error_len().is_none() => std::str::from_utf8(&bytes[..e.valid_up_to()]).ok(),
        Err(_) => None,
    }
}

/// The first lines of `text` within `max_lines` and `max_chars` (whole lines only, unless
/// the first is longer than that and `cut_first`), and how many lines that is.
fn first_lines(text: &str, max_lines: usize, max_chars: usize, cut_first: bool) -> (String, usize) {
    let mut shown = String::new();
    let mut lines = 0;
    for line in text.lines().take(max_lines) {
        let len = line.chars().count() + 1;
        if shown.chars().count() + len > max_chars {
            if lines == 0 && cut_first {
                shown = line.chars().take(max_chars).collect();
                lines = 1;
            }
            break;
        }
        shown.push_str(line);
        shown.push('\n');
        lines += 1;
    }
    (shown, lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, text: &str) -> (String, u64, Option<Vec<u8>>) {
        (
            path.to_string(),
            text.len() as u64,
            Some(text.as_bytes().to_vec()),
        )
    }

    #[test]
    fn small_text_files_are_shown_whole_and_binary_ones_are_not() {
        let view = WorkspaceView::build(
            vec![
                file("a.csv", "x,y\n1,2\n"),
                ("b.png".into(), 3, Some(vec![0x89, 0, 1])),
            ],
            ViewBudget::default(),
        );
        assert_eq!(
            view.files[0].text,
            ViewedText::Text {
                shown: "x,y\n1,2\n".into(),
                lines: 2,
                total: Some(2)
            }
        );
        assert_eq!(view.files[1].text, ViewedText::Binary);
        assert_eq!(view.more, 0);
    }

    #[test]
    fn budgets_cut_lines_files_and_the_total() {
        let long: String = (1..=100).map(|i| format!("line {i}\n")).collect();
        let budget = ViewBudget {
            max_files: 2,
            file_lines: 3,
            total_chars: 25,
            ..ViewBudget::default()
        };
        let view = WorkspaceView::build(
            vec![file("a", &long), file("b", &long), file("c", "x")],
            budget,
        );
        assert_eq!(view.more, 1);
        match &view.files[0].text {
            ViewedText::Text { lines, total, .. } => {
                assert_eq!(*lines, 3);
                assert_eq!(*total, Some(100));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(view.files[1].text, ViewedText::NotShown);
    }

    #[test]
    fn a_file_read_in_part_has_no_total_and_a_cut_character_is_dropped() {
        let view = WorkspaceView::build(
            vec![(
                "big.txt".into(),
                1000,
                Some("héllo\nwor".as_bytes()[..2].to_vec()),
            )],
            ViewBudget::default(),
        );
        assert_eq!(
            view.files[0].text,
            ViewedText::Text {
                shown: "h\n".into(),
                lines: 1,
                total: None
            }
        );
    }
}
