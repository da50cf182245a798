//! The reader's only view of the text it reads: one character at a time, every look
//! counted. The count ([`Cursor::steps`]) is what keeps the reader linear: the tests read
//! hostile texts and bound the steps per character (docs/approvals.md, "Limits"), so a scan
//! that goes back over the text shows up as a count, not as a slow test. The characters
//! themselves are private to this module: the parser cannot look at them uncounted.

use std::cell::Cell;

pub(crate) struct Cursor {
    chars: Vec<char>,
    pos: usize,
    steps: Cell<usize>,
}

impl Cursor {
    pub(crate) fn new(text: &str) -> Cursor {
        Cursor {
            chars: text.chars().collect(),
            pos: 0,
            steps: Cell::new(0),
        }
    }

    fn count(&self, n: usize) {
        self.steps.set(self.steps.get().saturating_add(n));
    }

    /// Characters looked at so far (each look counts, also a look at the same one again).
    pub(crate) fn steps(&self) -> usize {
        self.steps.get()
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// Moves to `pos`, at or after the current position (never back): counted by the
    /// characters passed.
    pub(crate) fn seek(&mut self, pos: usize) {
        debug_assert!(pos >= self.pos, "the reader never goes back");
        self.count(pos.saturating_sub(self.pos));
        self.pos = pos.min(self.chars.len());
    }

    pub(crate) fn advance(&mut self, n: usize) {
        self.seek(self.pos + n);
    }

    pub(crate) fn at_end(&self) -> bool {
        self.pos >= self.chars.len()
    }

    /// The character at the current position.
    pub(crate) fn peek(&self) -> Option<char> {
        self.at(self.pos)
    }

    /// The character `n` after the current position.
    pub(crate) fn peek_at(&self, n: usize) -> Option<char> {
        self.at(self.pos + n)
    }

    /// The character at `i` (a position the caller reached by counted steps).
    pub(crate) fn at(&self, i: usize) -> Option<char> {
        self.count(1);
        self.chars.get(i).copied()
    }

    /// Whether a line continuation (a backslash before a newline) starts at `i`.
    pub(crate) fn continuation_at(&self, i: usize) -> bool {
        self.at(i) == Some('\\') && self.at(i + 1) == Some('\n')
    }

    /// The characters from `start` to the current position (a word just read), counted
    /// again.
    pub(crate) fn since(&self, start: usize) -> &[char] {
        let range = &self.chars[start.min(self.pos)..self.pos];
        self.count(range.len());
        range
    }

    /// The rest of the current line (up to, not including, the next newline or the end);
    /// the cursor moves past the newline.
    pub(crate) fn line(&mut self) -> String {
        let start = self.pos;
        let mut end = start;
        while end < self.chars.len() && self.chars[end] != '\n' {
            end += 1;
        }
        let line: String = self.chars[start..end].iter().collect();
        self.seek((end + 1).min(self.chars.len()));
        line
    }
}

#[cfg(test)]
mod tests {
    use super::Cursor;

    #[test]
    fn every_look_is_counted() {
        let mut c = Cursor::new("ab\ncd");
        assert_eq!(c.peek(), Some('a'));
        assert_eq!(c.peek_at(1), Some('b'));
        assert_eq!(c.steps(), 2);
        assert_eq!(c.line(), "ab");
        assert_eq!(c.steps(), 5);
        assert_eq!(c.since(3), ['c', 'd'][..0].to_vec().as_slice());
        c.advance(2);
        assert!(c.at_end());
        assert_eq!(c.since(3), &['c', 'd']);
        assert_eq!(c.steps(), 9);
    }
}
