//! The files a run wrote, as the approval rules know them (docs/approvals.md, "Scripts"):
//! a script the run wrote with `file_write` is judged by its content when it is run; one it
//! wrote by other means (`file_str_replace`, a shell redirection) has a content the rules
//! cannot see, so running it is asked.

use std::collections::HashMap;

/// Canonical workspace-relative path → the content the run wrote there, when known.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WrittenFiles {
    files: HashMap<String, Option<String>>,
}

/// What the run wrote at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Written<'a> {
    /// Not written by this run (as far as the rules know).
    No,
    /// Written; this is the whole content.
    Content(&'a str),
    /// Written, content unknown.
    Unknown,
}

impl WrittenFiles {
    /// The run wrote `content` to `path` (canonical); `append` adds to what was known.
    pub fn wrote(&mut self, path: String, content: &str, append: bool) {
        match self.files.get_mut(&path) {
            Some(Some(known)) if append => known.push_str(content),
            // Added to a file whose content is not known: still not known.
            Some(None) if append => {}
            None if append => {
                self.files.insert(path, None);
            }
            _ => {
                self.files.insert(path, Some(content.to_string()));
            }
        }
    }

    /// The run changed `path` in a way whose result is not known here.
    pub fn changed(&mut self, path: String) {
        self.files.insert(path, None);
    }

    pub(crate) fn get(&self, path: &str) -> Written<'_> {
        match self.files.get(path) {
            None => Written::No,
            Some(Some(content)) => Written::Content(content),
            Some(None) => Written::Unknown,
        }
    }
}
