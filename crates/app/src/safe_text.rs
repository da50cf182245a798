//! Text from tools, models and MCP servers made safe to write on a terminal: escape
//! sequences (colours, cursor moves, `ESC[2J`, window titles, OSC 52 clipboard writes, DCS
//! strings) and control characters are removed, newlines and tabs kept. The CLI's output
//! layer (`view`, `report`, `terminal_user`) passes every text it did not write itself
//! through [`terminal_safe`] (docs/security.md, "Terminal output").

use std::borrow::Cow;

/// Where the scanner is inside an escape sequence.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Text,
    /// After ESC.
    Escape,
    /// Inside a control sequence (`ESC [` or C1 CSI): parameters until a final byte.
    Csi,
    /// Inside a string (OSC, DCS, SOS, PM, APC) until BEL or the string terminator.
    String,
    /// ESC inside a string: the start of the terminator `ESC \`.
    StringEscape,
}

/// Whether `c` may start something [`terminal_safe`] removes.
fn is_control(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || c == '\u{7f}'
}

/// `s` without escape sequences and control characters other than newline and tab.
/// Borrows when there is nothing to remove.
pub fn terminal_safe(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_control) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut state = State::Text;
    for c in s.chars() {
        state = match (state, c) {
            (State::Text, '\u{1b}') => State::Escape,
            (State::Text, '\u{9b}') => State::Csi,
            (State::Text, '\u{90}' | '\u{98}' | '\u{9d}' | '\u{9e}' | '\u{9f}') => State::String,
            (State::Text, c) => {
                if !is_control(c) {
                    out.push(c);
                }
                State::Text
            }
            (State::Escape, '[') => State::Csi,
            (State::Escape, ']' | 'P' | 'X' | '^' | '_') => State::String,
            // Intermediate bytes, then one final byte.
            (State::Escape, ' '..='/') => State::Escape,
            (State::Escape, _) => State::Text,
            (State::Csi, '0'..='?' | ' '..='/') => State::Csi,
            (State::Csi, _) => State::Text,
            (State::String, '\u{7}' | '\u{9c}') => State::Text,
            (State::String, '\u{1b}') => State::StringEscape,
            (State::String, _) => State::String,
            (State::StringEscape, _) => State::Text,
        };
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        let s = "line one\n\tindented — ünïcode ✓";
        assert!(matches!(terminal_safe(s), Cow::Borrowed(t) if t == s));
    }

    #[test]
    fn hostile_sequences_are_removed_and_the_text_around_them_kept() {
        let cases = [
            // OSC 52: write the clipboard, ended by BEL and by ST.
            ("a\x1b]52;c;cm0gLXJmIH4=\x07b", "ab"),
            ("a\x1b]52;c;cm0gLXJmIH4=\x1b\\b", "ab"),
            // Clear the screen, move the cursor, colours.
            ("x\x1b[2J\x1b[H\x1b[1;31mred\x1b[0m", "xred"),
            // Window title.
            ("\x1b]0;pwned\x07title", "title"),
            // DCS string, C1 CSI and C1 OSC.
            ("\x1bPq#0;2;0;0;0\x1b\\ok", "ok"),
            ("a\u{9b}2Jb", "ab"),
            ("a\u{9d}0;t\u{9c}b", "ab"),
            // Carriage return (overwrites a line), backspace, bell, DEL, NUL.
            ("safe\rEVIL\x08\x07\x7f\0!", "safeEVIL!"),
            // Two-character escapes (keypad mode, charset selection).
            ("\x1b=\x1b(Bz", "z"),
            // Newlines and tabs stay.
            ("a\n\tb\x1b[K\n", "a\n\tb\n"),
        ];
        for (input, expected) in cases {
            assert_eq!(terminal_safe(input), expected, "{input:?}");
        }
    }
}
