//! Checkers: the evaluation of an instance's [`Check`]s on its workspace after the run.
//! Strict but fair: whitespace around a file's content, a trailing newline and CRLF line
//! ends are accepted; anything else must match. `Err` carries what was wrong, for the
//! failure list.

use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

use super::instance::Check;
use super::runner;

/// A checker's verdict: `Ok` or why not.
pub(crate) type Verdict = Result<(), String>;

/// How long a check's program (a test, the user's script) may run.
const RUN_LIMIT: Duration = Duration::from_secs(30);

/// Evaluates `check` on `ws`; `scratch` is a folder the check may use (a copy of the
/// workspace for [`Check::Runs`]), emptied first.
pub(crate) fn evaluate(check: &Check, ws: &Path, scratch: &Path) -> Verdict {
    match check {
        Check::Text { file, expected } => text_is(ws, file, expected),
        Check::Number {
            file,
            value,
            tolerance,
        } => number_is(ws, file, *value, *tolerance),
        Check::Lines {
            file,
            expected,
            ordered,
        } => lines_are(ws, file, expected, *ordered),
        Check::Items {
            file,
            expected,
            ordered,
        } => items_are(ws, file, expected, *ordered),
        Check::Csv {
            file,
            separator,
            header,
            rows,
            ordered,
        } => csv_is(ws, file, *separator, header, rows, *ordered),
        Check::Json { file, expected } => json_is(ws, file, expected),
        Check::Absent { file } => absent(ws, file),
        Check::Runs {
            program,
            args,
            stdout,
            other_data,
        } => runs(ws, scratch, program, args, stdout.as_ref(), other_data),
    }
}

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
    if text.trim() == expected.replace("\r\n", "\n").trim() {
        Ok(())
    } else {
        Err(format!(
            "{file} holds \"{}\", expected \"{}\"",
            shown(&text),
            shown(expected)
        ))
    }
}

/// A line trimmed, with inner runs of whitespace made one space.
fn normal_line(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `got` equals `expected`, in order or as multisets.
fn same_items(got: &[String], expected: &[String], ordered: bool) -> bool {
    if ordered {
        return got == expected;
    }
    let mut a = got.to_vec();
    let mut b = expected.to_vec();
    a.sort();
    b.sort();
    a == b
}

/// The non-empty lines of `text`, normalised.
fn lines_of(text: &str) -> Vec<String> {
    text.lines()
        .map(normal_line)
        .filter(|l| !l.is_empty())
        .collect()
}

/// The file's non-empty lines, normalised, are `expected` (in order when `ordered`).
pub(crate) fn lines_are(ws: &Path, file: &str, expected: &[String], ordered: bool) -> Verdict {
    let text = read(ws, file)?;
    let lines = lines_of(&text);
    let expected: Vec<String> = expected.iter().map(|l| normal_line(l)).collect();
    if same_items(&lines, &expected, ordered) {
        Ok(())
    } else {
        Err(format!(
            "{file} has lines \"{}\", expected \"{}\"{}",
            shown(&lines.join("\n")),
            shown(&expected.join("\n")),
            if ordered { "" } else { " in any order" }
        ))
    }
}

/// The file's items, split on whitespace and commas, are `expected`.
pub(crate) fn items_are(ws: &Path, file: &str, expected: &[String], ordered: bool) -> Verdict {
    let text = read(ws, file)?;
    let items: Vec<String> = text
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    if same_items(&items, expected, ordered) {
        Ok(())
    } else {
        Err(format!(
            "{file} holds \"{}\", expected \"{}\"{}",
            shown(&text),
            expected.join(" "),
            if ordered { "" } else { " in any order" }
        ))
    }
}

/// `text` as a number: `9`, `9.0`, ` 9 `; a decimal comma (`12,5`) when there is no dot.
fn number(text: &str) -> Option<f64> {
    let t = text.trim();
    let t = if !t.contains('.') && t.matches(',').count() == 1 {
        t.replace(',', ".")
    } else {
        t.to_string()
    };
    t.parse::<f64>().ok().filter(|n| n.is_finite())
}

/// The file holds one number within `tolerance` of `expected`.
pub(crate) fn number_is(ws: &Path, file: &str, expected: f64, tolerance: f64) -> Verdict {
    let text = read(ws, file)?;
    match number(&text) {
        Some(n) if (n - expected).abs() <= tolerance.max(1e-9) => Ok(()),
        _ => Err(format!(
            "{file} holds \"{}\", expected the number {expected}",
            shown(&text)
        )),
    }
}

/// The cells of one CSV line: `separator`-split, double quotes honoured, each trimmed.
fn csv_cells(line: &str, separator: char) -> Vec<String> {
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cell.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            c if c == separator && !quoted => cells.push(std::mem::take(&mut cell)),
            c => cell.push(c),
        }
    }
    cells.push(cell);
    cells.into_iter().map(|c| c.trim().to_string()).collect()
}

/// Two cells are the same: equal text, or both numbers and equal.
fn same_cell(a: &str, b: &str) -> bool {
    a == b || matches!((a.parse::<f64>(), b.parse::<f64>()), (Ok(x), Ok(y)) if (x - y).abs() < 1e-6)
}

fn same_row(a: &[String], b: &[String]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_cell(x, y))
}

/// The file is a CSV with `header` and `rows` (in order when `ordered`).
pub(crate) fn csv_is(
    ws: &Path,
    file: &str,
    separator: char,
    header: &[String],
    rows: &[Vec<String>],
    ordered: bool,
) -> Verdict {
    let text = read(ws, file)?;
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let got_header = lines
        .next()
        .map(|l| csv_cells(l, separator))
        .unwrap_or_default();
    if got_header != header {
        return Err(format!(
            "{file} has the header \"{}\", expected \"{}\"",
            got_header.join(&separator.to_string()),
            header.join(&separator.to_string())
        ));
    }
    let got: Vec<Vec<String>> = lines.map(|l| csv_cells(l, separator)).collect();
    let matches = if ordered {
        got.len() == rows.len() && got.iter().zip(rows).all(|(a, b)| same_row(a, b))
    } else {
        let mut left: Vec<&Vec<String>> = rows.iter().collect();
        got.len() == rows.len()
            && got.iter().all(|g| {
                left.iter()
                    .position(|r| same_row(g, r))
                    .map(|i| left.swap_remove(i))
                    .is_some()
            })
    };
    if matches {
        Ok(())
    } else {
        let show = |rs: &[Vec<String>]| {
            shown(
                &rs.iter()
                    .map(|r| r.join(&separator.to_string()))
                    .collect::<Vec<_>>()
                    .join("\n"),
            )
        };
        Err(format!(
            "{file} has the rows \"{}\", expected \"{}\"{}",
            show(&got),
            show(rows),
            if ordered { "" } else { " in any order" }
        ))
    }
}

/// Equal as data; numbers compared as numbers (`8080` and `8080.0` are equal).
fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => (x - y).abs() < 1e-9,
            _ => x == y,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_json(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

/// The file parses as JSON equal to `expected`.
pub(crate) fn json_is(ws: &Path, file: &str, expected: &str) -> Verdict {
    let text = read(ws, file)?;
    let want: Value = serde_json::from_str(expected)
        .map_err(|e| format!("the expected JSON of {file} does not parse: {e}"))?;
    match serde_json::from_str::<Value>(&text) {
        Ok(got) if same_json(&got, &want) => Ok(()),
        Ok(_) => Err(format!(
            "{file} holds \"{}\", expected the data \"{}\"",
            shown(&text),
            shown(expected)
        )),
        Err(e) => Err(format!("{file} is not valid JSON any more: {e}")),
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

/// Copies the folder `from` into `to` (files and folders; links are skipped).
fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("creating {}: {e}", to.display()))?;
    let entries =
        std::fs::read_dir(from).map_err(|e| format!("listing {}: {e}", from.display()))?;
    for entry in entries.flatten() {
        let kind = entry.file_type().map_err(|e| e.to_string())?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)
                .map_err(|e| format!("copying {}: {e}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// Whether bubblewrap can sandbox a check's program here (asked once).
fn bwrap_works() -> bool {
    static WORKS: OnceLock<bool> = OnceLock::new();
    *WORKS.get_or_init(|| {
        std::process::Command::new("bwrap")
            .args(["--ro-bind", "/", "/", "--unshare-all", "true"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// How a check's program is run: in bubblewrap (the file system read-only but for the
/// copy of the workspace, no network) when it works, else directly.
pub(crate) fn sandbox_note() -> &'static str {
    if bwrap_works() {
        "in bubblewrap (read-only system, no network)"
    } else {
        "unsandboxed (bubblewrap unavailable)"
    }
}

/// `program args` in a copy of `ws`, with `other_data`'s files written over it, exits 0
/// (and prints `stdout`'s lines).
fn runs(
    ws: &Path,
    scratch: &Path,
    program: &str,
    args: &[String],
    stdout: Option<&(Vec<String>, bool)>,
    other_data: &[(String, String)],
) -> Verdict {
    let _ = std::fs::remove_dir_all(scratch);
    let copy = scratch.join("ws");
    copy_tree(ws, &copy)?;
    super::inputs::seed(&copy, other_data)?;
    let mut cmd = if bwrap_works() {
        let mut c = std::process::Command::new("bwrap");
        c.args(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"])
            .args(["--tmpfs", "/tmp"])
            .arg("--bind")
            .arg(&copy)
            .arg(&copy)
            .arg("--chdir")
            .arg(&copy)
            .args(["--unshare-all", "--die-with-parent", "--new-session", "--"])
            .arg(program);
        c
    } else {
        std::process::Command::new(program)
    };
    cmd.args(args)
        .current_dir(&copy)
        .env("PYTHONDONTWRITEBYTECODE", "1");
    let shown_cmd = format!(
        "`{}`{}",
        shown(&format!("{program} {}", args.join(" "))),
        if other_data.is_empty() {
            String::new()
        } else {
            let files: Vec<&str> = other_data.iter().map(|(f, _)| f.as_str()).collect();
            format!(" on other data in {}", files.join(", "))
        }
    );
    let finished = runner::run_limited(cmd, scratch, RUN_LIMIT)?;
    if finished.killed {
        return Err(format!("{shown_cmd} ran past {} s", RUN_LIMIT.as_secs()));
    }
    if finished.exit_code != Some(0) {
        let err = finished.stderr.trim();
        let last = err.lines().last().unwrap_or("");
        return Err(format!(
            "{shown_cmd} exited with {}: {}",
            finished
                .exit_code
                .map_or_else(|| "a signal".to_string(), |c| c.to_string()),
            shown(last)
        ));
    }
    if let Some((expected, ordered)) = stdout {
        let got = lines_of(&finished.stdout.replace("\r\n", "\n"));
        let expected: Vec<String> = expected.iter().map(|l| normal_line(l)).collect();
        if !same_items(&got, &expected, *ordered) {
            return Err(format!(
                "{shown_cmd} printed \"{}\", expected \"{}\"",
                shown(&got.join("\n")),
                shown(&expected.join("\n"))
            ));
        }
    }
    Ok(())
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
            std::fs::create_dir_all(dir.join("ws")).expect("scratch dir");
            Scratch(dir)
        }
        fn ws(&self) -> std::path::PathBuf {
            self.0.join("ws")
        }
        fn write(&self, file: &str, text: &str) -> std::path::PathBuf {
            std::fs::write(self.ws().join(file), text).expect("write");
            self.ws()
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn text_is_accepts_a_trailing_newline_and_crlf_but_not_other_text() {
        let s = Scratch::new("text");
        let ws = s.write("a.txt", "hello there\r\nsecond\r\n");
        assert_eq!(text_is(&ws, "a.txt", "hello there\nsecond"), Ok(()));
        let ws = s.write("a.txt", "  hello there\n\n");
        assert_eq!(text_is(&ws, "a.txt", "hello there"), Ok(()));
        let ws = s.write("a.txt", "'hello there'\n");
        let err = text_is(&ws, "a.txt", "hello there").expect_err("quotes differ");
        assert!(err.contains("a.txt holds"), "{err}");
        assert_eq!(
            text_is(&s.ws(), "nope.txt", "x"),
            Err("nope.txt is missing".to_string())
        );
    }

    #[test]
    fn lines_are_ignores_blank_lines_and_padding_and_order_only_when_asked() {
        let s = Scratch::new("lines");
        let ws = s.write("out.txt", "ALICE\n  BOB \n\nCHARLIE  X\n");
        let want = strings(&["ALICE", "BOB", "CHARLIE X"]);
        assert_eq!(lines_are(&ws, "out.txt", &want, true), Ok(()));
        let ws = s.write("out.txt", "BOB\nALICE\nCHARLIE X\n");
        assert!(lines_are(&ws, "out.txt", &want, true).is_err());
        assert_eq!(lines_are(&ws, "out.txt", &want, false), Ok(()));
        let ws = s.write("out.txt", "BOB\nALICE\n");
        assert!(lines_are(&ws, "out.txt", &want, false).is_err());
    }

    #[test]
    fn items_and_numbers() {
        let s = Scratch::new("items");
        for text in ["2\n3\n5\n7\n", "2, 3, 5, 7", "2 3 5 7\n"] {
            let ws = s.write("p.txt", text);
            assert_eq!(
                items_are(&ws, "p.txt", &strings(&["2", "3", "5", "7"]), true),
                Ok(())
            );
        }
        let ws = s.write("p.txt", "1 2 3 5 7");
        assert!(items_are(&ws, "p.txt", &strings(&["2", "3", "5", "7"]), true).is_err());
        for text in ["9", "9\n", " 9.0 ", "9,0"] {
            let ws = s.write("n.txt", text);
            assert_eq!(number_is(&ws, "n.txt", 9.0, 0.0), Ok(()), "{text}");
        }
        for text in ["10", "The sum is 9", "", "9.1"] {
            let ws = s.write("n.txt", text);
            assert!(number_is(&ws, "n.txt", 9.0, 0.0).is_err(), "{text}");
        }
        let ws = s.write("n.txt", "12.35");
        assert_eq!(number_is(&ws, "n.txt", 12.345, 0.006), Ok(()));
    }

    #[test]
    fn csv_compares_cells_as_numbers_and_order_only_when_asked() {
        let s = Scratch::new("csv");
        let header = strings(&["region", "total"]);
        let rows = vec![strings(&["north", "10"]), strings(&["south", "2.5"])];
        let ws = s.write("t.csv", "region,total\r\n\"north\", 10.0\nsouth,2.50\n");
        assert_eq!(csv_is(&ws, "t.csv", ',', &header, &rows, true), Ok(()));
        let ws = s.write("t.csv", "region,total\nsouth,2.5\nnorth,10\n");
        assert!(csv_is(&ws, "t.csv", ',', &header, &rows, true).is_err());
        assert_eq!(csv_is(&ws, "t.csv", ',', &header, &rows, false), Ok(()));
        let ws = s.write("t.csv", "Region,Total\nnorth,10\nsouth,2.5\n");
        assert!(csv_is(&ws, "t.csv", ',', &header, &rows, false)
            .expect_err("header")
            .contains("header"));
        let ws = s.write("t.csv", "region;total\nnorth;10\nsouth;2,5\n");
        assert!(csv_is(&ws, "t.csv", ';', &header, &rows, false).is_err());
        assert_eq!(csv_cells("a;\"b;c\";d", ';'), ["a", "b;c", "d"]);
    }

    #[test]
    fn json_is_compares_data_not_layout() {
        let s = Scratch::new("json");
        let ws = s.write("c.json", "{\"b\": [1, 2.0], \"a\": {\"x\": \"y\"}}");
        assert_eq!(
            json_is(&ws, "c.json", "{\"a\":{\"x\":\"y\"},\"b\":[1,2]}"),
            Ok(())
        );
        assert!(json_is(&ws, "c.json", "{\"a\":{\"x\":\"z\"},\"b\":[1,2]}").is_err());
        let ws = s.write("c.json", "{\"a\": ");
        assert!(json_is(&ws, "c.json", "{}")
            .expect_err("broken")
            .contains("not valid JSON"));
    }

    #[test]
    fn runs_checks_the_exit_code_and_output_in_a_copy_of_the_workspace() {
        let s = Scratch::new("runs");
        let ws = s.write("p.sh", "echo one; echo two; echo x > made.txt\n");
        let scratch = s.0.join("check");
        let want = (strings(&["one", "two"]), true);
        assert_eq!(
            runs(&ws, &scratch, "sh", &strings(&["p.sh"]), Some(&want), &[]),
            Ok(())
        );
        assert!(!ws.join("made.txt").exists(), "ran in the workspace itself");
        let wrong = (strings(&["two", "one"]), true);
        assert!(
            runs(&ws, &scratch, "sh", &strings(&["p.sh"]), Some(&wrong), &[])
                .expect_err("order")
                .contains("printed")
        );
        let ws = s.write("f.sh", "echo boom >&2; exit 3\n");
        let err = runs(&ws, &scratch, "sh", &strings(&["f.sh"]), None, &[]).expect_err("fails");
        assert!(err.contains("exited with 3: boom"), "{err}");
        // Other data written over the copy: a script reading it prints what it holds, one
        // printing fixed text does not; the workspace keeps its own data.
        let ws = s.write("words.txt", "alpha\n");
        s.write("cat.sh", "cat words.txt\n");
        s.write("fixed.sh", "echo alpha\n");
        let other = vec![("words.txt".to_string(), "beta\n".to_string())];
        let beta = (strings(&["beta"]), true);
        assert_eq!(
            runs(
                &ws,
                &scratch,
                "sh",
                &strings(&["cat.sh"]),
                Some(&beta),
                &other
            ),
            Ok(())
        );
        let err = runs(
            &ws,
            &scratch,
            "sh",
            &strings(&["fixed.sh"]),
            Some(&beta),
            &other,
        )
        .expect_err("fixed text");
        assert!(err.contains("on other data in words.txt"), "{err}");
        assert_eq!(
            std::fs::read_to_string(ws.join("words.txt")).expect("kept"),
            "alpha\n"
        );
    }

    #[test]
    fn absent_and_missing_or_empty() {
        let s = Scratch::new("absent");
        assert_eq!(absent(&s.ws(), "draft.txt"), Ok(()));
        let ws = s.write("draft.txt", "x");
        assert_eq!(
            absent(&ws, "draft.txt"),
            Err("draft.txt is still there".to_string())
        );
        let ws = s.write("empty.txt", " \r\n");
        assert_eq!(
            missing_or_empty(&ws, &["draft.txt", "empty.txt", "gone.txt"]),
            ["empty.txt", "gone.txt"]
        );
    }
}
