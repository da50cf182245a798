//! Checkers: small, strict-but-fair assertions on a task's workspace after the run.
//! Whitespace around a file's content, a trailing newline and CRLF line ends are accepted;
//! anything else must match. `Err` carries what was wrong, for the failure list.

use std::path::Path;

/// A checker's verdict: `Ok` or why not.
pub(crate) type Verdict = Result<(), String>;

/// The file's content with CRLF made LF, or why it cannot be read.
fn read(ws: &Path, file: &str) -> Result<String, String> {
    let path = ws.join(file);
    match std::fs::read(&path) {
        Ok(bytes) => Ok(String::from_utf8_lossy(&bytes).replace("\r\n", "\n")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(format!("{file} is missing")),
        Err(e) => Err(format!("{file} cannot be read: {e}")),
    }
}

/// Shortens a file's content for a failure message.
fn shown(text: &str) -> String {
    let one_line = text.trim().replace('\n', "\\n");
    if one_line.chars().count() > 60 {
        format!("{}…", one_line.chars().take(60).collect::<String>())
    } else {
        one_line
    }
}

/// The file holds exactly `expected` (surrounding whitespace aside).
pub(crate) fn text_is(ws: &Path, file: &str, expected: &str) -> Verdict {
    let text = read(ws, file)?;
    if text.trim() == expected.trim() {
        Ok(())
    } else {
        Err(format!(
            "{file} holds \"{}\", expected \"{}\"",
            shown(&text),
            shown(expected)
        ))
    }
}

/// The file's non-empty lines, each trimmed, are exactly `expected`.
pub(crate) fn lines_are(ws: &Path, file: &str, expected: &[&str]) -> Verdict {
    let text = read(ws, file)?;
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if lines == expected {
        Ok(())
    } else {
        Err(format!(
            "{file} has lines \"{}\", expected \"{}\"",
            shown(&lines.join("\n")),
            shown(&expected.join("\n"))
        ))
    }
}

/// The file's items, split on whitespace and commas, are exactly `expected`, in order.
pub(crate) fn items_are(ws: &Path, file: &str, expected: &[&str]) -> Verdict {
    let text = read(ws, file)?;
    let items: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|s| !s.is_empty())
        .collect();
    if items == expected {
        Ok(())
    } else {
        Err(format!(
            "{file} holds \"{}\", expected \"{}\"",
            shown(&text),
            expected.join(" ")
        ))
    }
}

/// The file holds one number equal to `expected` (`9`, `9.0` and `9\n` all count).
pub(crate) fn number_is(ws: &Path, file: &str, expected: f64) -> Verdict {
    let text = read(ws, file)?;
    match text.trim().parse::<f64>() {
        Ok(n) if (n - expected).abs() < 1e-9 => Ok(()),
        Ok(_) | Err(_) => Err(format!(
            "{file} holds \"{}\", expected the number {expected}",
            shown(&text)
        )),
    }
}

/// The file exists and contains `needle`.
pub(crate) fn contains(ws: &Path, file: &str, needle: &str) -> Verdict {
    let text = read(ws, file)?;
    if text.contains(needle) {
        Ok(())
    } else {
        Err(format!(
            "{file} holds \"{}\", which lacks \"{needle}\"",
            shown(&text)
        ))
    }
}

/// The file's first non-empty line is exactly `expected` (trimmed).
pub(crate) fn first_line_is(ws: &Path, file: &str, expected: &str) -> Verdict {
    let text = read(ws, file)?;
    let first = text.lines().map(str::trim).find(|l| !l.is_empty());
    if first == Some(expected) {
        Ok(())
    } else {
        Err(format!(
            "{file} starts with \"{}\", expected \"{expected}\"",
            first.unwrap_or_default()
        ))
    }
}

/// The file is gone (a rename or a move took it away).
pub(crate) fn absent(ws: &Path, file: &str) -> Verdict {
    if ws.join(file).symlink_metadata().is_ok() {
        Err(format!("{file} is still there"))
    } else {
        Ok(())
    }
}

/// Of `files`, those that are missing or hold only whitespace: a run that completed with
/// one of its outputs so is counted apart (docs/eval.md).
pub(crate) fn missing_or_empty(ws: &Path, files: &[&str]) -> Vec<String> {
    files
        .iter()
        .filter(|f| {
            std::fs::read(ws.join(f)).map_or(true, |b| b.iter().all(u8::is_ascii_whitespace))
        })
        .map(|f| (*f).to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh folder under the system temp dir, removed on drop.
    struct Scratch(std::path::PathBuf);

    impl Scratch {
        fn new(name: &str) -> Scratch {
            let dir =
                std::env::temp_dir().join(format!("xtask-checks-{}-{name}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).expect("scratch dir");
            Scratch(dir)
        }
        fn write(&self, file: &str, text: &str) -> &Path {
            std::fs::write(self.0.join(file), text).expect("write");
            &self.0
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn text_is_accepts_a_trailing_newline_and_crlf_but_not_other_text() {
        let s = Scratch::new("text");
        let ws = s.write("a.txt", "hello from planwright\r\n");
        assert_eq!(text_is(ws, "a.txt", "hello from planwright"), Ok(()));
        let ws = s.write("a.txt", "  hello from planwright\n\n");
        assert_eq!(text_is(ws, "a.txt", "hello from planwright"), Ok(()));
        let ws = s.write("a.txt", "'hello from planwright'\n");
        let err = text_is(ws, "a.txt", "hello from planwright").expect_err("quotes differ");
        assert!(err.contains("a.txt holds"), "{err}");
        let ws = s.write("a.txt", "Hello from planwright");
        assert!(text_is(ws, "a.txt", "hello from planwright").is_err());
    }

    #[test]
    fn a_missing_file_is_named() {
        let s = Scratch::new("missing");
        assert_eq!(
            text_is(&s.0, "nope.txt", "x"),
            Err("nope.txt is missing".to_string())
        );
        assert_eq!(
            number_is(&s.0, "n.txt", 1.0),
            Err("n.txt is missing".to_string())
        );
    }

    #[test]
    fn lines_are_ignores_blank_lines_and_padding_but_not_order() {
        let s = Scratch::new("lines");
        let ws = s.write("out.txt", "ALICE\n  BOB \n\nCHARLIE\n");
        assert_eq!(
            lines_are(ws, "out.txt", &["ALICE", "BOB", "CHARLIE"]),
            Ok(())
        );
        let ws = s.write("out.txt", "BOB\nALICE\nCHARLIE\n");
        assert!(lines_are(ws, "out.txt", &["ALICE", "BOB", "CHARLIE"]).is_err());
        let ws = s.write("out.txt", "ALICE\nBOB\n");
        assert!(lines_are(ws, "out.txt", &["ALICE", "BOB", "CHARLIE"]).is_err());
    }

    #[test]
    fn items_are_accepts_lines_spaces_or_commas() {
        let s = Scratch::new("items");
        for text in ["2\n3\n5\n7\n", "2, 3, 5, 7", "2 3 5 7\n"] {
            let ws = s.write("p.txt", text);
            assert_eq!(
                items_are(ws, "p.txt", &["2", "3", "5", "7"]),
                Ok(()),
                "{text}"
            );
        }
        let ws = s.write("p.txt", "1 2 3 5 7");
        assert!(items_are(ws, "p.txt", &["2", "3", "5", "7"]).is_err());
    }

    #[test]
    fn number_is_parses_the_whole_content() {
        let s = Scratch::new("number");
        for text in ["9", "9\n", " 9.0 "] {
            let ws = s.write("n.txt", text);
            assert_eq!(number_is(ws, "n.txt", 9.0), Ok(()), "{text}");
        }
        for text in ["10", "The sum is 9", ""] {
            let ws = s.write("n.txt", text);
            assert!(number_is(ws, "n.txt", 9.0).is_err(), "{text}");
        }
    }

    #[test]
    fn contains_and_first_line() {
        let s = Scratch::new("contains");
        let ws = s.write("notes.md", "\n# Notes\nmore\n");
        assert_eq!(first_line_is(ws, "notes.md", "# Notes"), Ok(()));
        assert_eq!(contains(ws, "notes.md", "more"), Ok(()));
        assert!(contains(ws, "notes.md", "absent").is_err());
        let ws = s.write("notes.md", "Notes\n# Notes\n");
        assert!(first_line_is(ws, "notes.md", "# Notes").is_err());
    }

    #[test]
    fn absent_and_missing_or_empty() {
        let s = Scratch::new("absent");
        assert_eq!(absent(&s.0, "draft.txt"), Ok(()));
        let ws = s.write("draft.txt", "x");
        assert_eq!(
            absent(ws, "draft.txt"),
            Err("draft.txt is still there".to_string())
        );
        let ws = s.write("empty.txt", " \r\n");
        assert_eq!(
            missing_or_empty(ws, &["draft.txt", "empty.txt", "gone.txt"]),
            ["empty.txt", "gone.txt"]
        );
    }
}
