//! The `file_read` tool.
//!
//! Output format: a short file read whole (at most [`PLAIN_MAX_LINES`] lines) is shown as
//! it is, without line numbers, so a small model cannot take a number for data; so is a
//! short file of which lines were picked. A range read (`start_line`/`end_line`) of a
//! longer file, and a long file, get a number before each line, in a form
//! that does not look like content: `  12│ text` (right-aligned, a box-drawing bar and a
//! space). When only part of the file is shown, a final `[showing lines A-B of N ...]` line
//! says so.

use std::fs::File;
use std::io::{self, BufRead, BufReader};

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use domain::ports::{Tool, ToolContext, ToolEffect, ToolFamily, ToolOutput};
use domain::tools::args::{self as tool_args, IntRange, NumberArg};
use domain::ToolError;

use super::{binary_message, blocking, io_error, looks_binary, Target, DEFAULT_MAX_READ_BYTES};
use crate::shell::human_bytes;
use crate::{args, FILE_READ};

/// Leading bytes searched for NUL to recognise binary files.
const SNIFF_BYTES: u64 = 8 * 1024;
/// A file read whole with at most this many lines is shown without line numbers.
pub(crate) const PLAIN_MAX_LINES: u64 = 40;
/// A file this small (and of at most [`PLAIN_MAX_LINES`] lines) is shown whole, without
/// numbers, even when `start_line`/`end_line` picked some of its lines.
const SHORT_FILE_BYTES: u64 = 4 * 1024;
/// What separates a line's number from its text.
pub(crate) const NUMBER_BAR: char = '│';
/// Once the requested lines are collected, lines are still counted (for the "of N" in
/// the footer), but only this far into the file.
const COUNT_LIMIT_BYTES: u64 = 64 * 1024 * 1024;

/// Arguments of `file_read`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileReadArgs {
    // The file, relative to the workspace. (Plain comments: the description says what the
    // schema would.)
    pub path: String,
    // First line, 1-based (default 1).
    #[serde(default)]
    #[schemars(with = "Option<u64>")]
    pub start_line: Option<NumberArg>,
    // Last line, inclusive (default: the end).
    #[serde(default)]
    #[schemars(with = "Option<u64>")]
    pub end_line: Option<NumberArg>,
}

/// The range of `start_line` and `end_line`: 1-based, no upper bound (a start past the end
/// of the file is an error that says how many lines it has).
const LINE: IntRange = IntRange::at_least(1);

/// Reads a text file of the workspace, optionally a range of lines.
#[derive(Debug, Clone)]
pub struct FileReadTool {
    max_bytes: usize,
    description: String,
}

impl Default for FileReadTool {
    fn default() -> Self {
        FileReadTool::new()
    }
}

impl FileReadTool {
    pub fn new() -> FileReadTool {
        FileReadTool {
            max_bytes: 0,
            description: String::new(),
        }
        .with_max_bytes(DEFAULT_MAX_READ_BYTES)
    }

    /// The largest output of one call (default 256 KiB).
    pub fn with_max_bytes(mut self, max_bytes: usize) -> FileReadTool {
        self.max_bytes = max_bytes.max(1);
        self.description = format!(
            "Read a text file. A short file is shown whole as it is; lines of a long one \
             (start_line/end_line, inclusive) get `N│ ` before each line (not part of the \
             file). Output is cut at {}.",
            human_bytes(self.max_bytes)
        );
        self
    }
}

#[async_trait]
impl Tool for FileReadTool {
    fn name(&self) -> &str {
        FILE_READ
    }
    fn family(&self) -> ToolFamily {
        ToolFamily::Files
    }
    fn effect(&self) -> ToolEffect {
        ToolEffect::Reads
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> Value {
        let mut schema = args::schema::<FileReadArgs>();
        LINE.declare(&mut schema, "start_line");
        LINE.declare(&mut schema, "end_line");
        schema
    }

    fn idempotent(&self) -> bool {
        true
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: FileReadArgs = args::parse(FILE_READ, args)?;
        tool_args::non_empty(FILE_READ, "path", &args.path)?;
        let start = LINE
            .check_opt(FILE_READ, "start_line", args.start_line.as_ref())?
            .unwrap_or(1);
        let end = LINE
            .check_opt(FILE_READ, "end_line", args.end_line.as_ref())?
            .unwrap_or(u64::MAX);
        let workspace = ctx.workspace.clone();
        let max_bytes = self.max_bytes;
        let ranged = args.start_line.is_some() || args.end_line.is_some();
        blocking(move || {
            let target = Target::resolve(&workspace, &args.path)?;
            read(&target, start, end, max_bytes, ranged)
        })
        .await
    }
}

/// Reads `start..=end` of the file; `ranged`: the caller picked the lines (numbers shown).
fn read(
    target: &Target,
    start: u64,
    end: u64,
    max_bytes: usize,
    ranged: bool,
) -> Result<ToolOutput, ToolError> {
    let rel = &target.rel;
    let meta = std::fs::metadata(&target.path).map_err(|e| io_error("read", rel, &e))?;
    if meta.is_dir() {
        return Err(ToolError::Failed(format!(
            "'{rel}' is a folder, not a file; use file_list to see what it contains"
        )));
    }
    let open_scan = |start: u64, end: u64, numbered: bool| {
        let file = File::open(&target.path).map_err(|e| io_error("read", rel, &e))?;
        match scan(BufReader::new(file), start, end, max_bytes, numbered)
            .map_err(|e| io_error("read", rel, &e))?
        {
            Scan::Text(text) => Ok(text),
            Scan::Binary => Err(binary_message(rel, meta.len())),
        }
    };
    // A short file is shown whole even when lines were picked, whatever the range (past
    // its end too): a small model that asked for line 1 of a 3-line file never saw the
    // other two, one that asked for line 1000 of a 5-line file gave up (docs/direct.md).
    let shown = if !ranged || meta.len() <= SHORT_FILE_BYTES {
        let plain = open_scan(1, u64::MAX, false)?;
        shows_whole_short_file(&plain).then_some(plain)
    } else {
        None
    };
    let out = match shown {
        Some(plain) => render(rel, 1, &plain)?,
        None => {
            if end < start {
                return Err(ToolError::InvalidArguments(format!(
                    "file_read: `end_line` {end} is before `start_line` {start}"
                )));
            }
            render(rel, start, &open_scan(start, end, true)?)?
        }
    };
    Ok(out)
}

/// Whether `text` (scanned without numbers) is a whole file short enough to show as it is.
fn shows_whole_short_file(text: &Text) -> bool {
    let whole = matches!((text.shown, text.total), (Some((1, last)), Some(total)) if last == total)
        && text.continue_at.is_none();
    whole && text.total.is_some_and(|n| n <= PLAIN_MAX_LINES)
}

fn render(rel: &str, start: u64, text: &Text) -> Result<ToolOutput, ToolError> {
    let Some((first, last)) = text.shown else {
        return match text.total {
            Some(0) => Ok(ToolOutput::ok(format!("('{rel}' is empty)"))),
            Some(n) => Err(ToolError::InvalidArguments(format!(
                "file_read: `start_line` {start} is past the end of '{rel}', which has {n} lines"
            ))),
            None => Err(ToolError::Failed(format!(
                "nothing could be shown from '{rel}' starting at line {start}"
            ))),
        };
    };
    let mut content = text.out.clone();
    let whole = first == 1 && text.total == Some(last) && text.continue_at.is_none();
    if !whole {
        let of = match text.total {
            Some(n) => format!(" of {n}"),
            None => " (the file has more lines)".to_string(),
        };
        content.push_str(&format!("[showing lines {first}-{last}{of}"));
        match text.continue_at {
            Some(next) => content.push_str(&format!(
                "; output limit reached, call file_read with start_line={next} to continue]"
            )),
            None => content.push(']'),
        }
    }
    Ok(ToolOutput::ok(content))
}

/// What a scan found.
#[derive(Debug)]
enum Scan {
    Text(Text),
    Binary,
}

#[derive(Debug, Default)]
struct Text {
    /// The lines shown (numbered or not), each ending with `\n`.
    out: String,
    /// First and last line shown.
    shown: Option<(u64, u64)>,
    /// Lines in the file, if counted to the end.
    total: Option<u64>,
    /// Set when the output limit cut the range: the line to continue from.
    continue_at: Option<u64>,
}

/// Reads lines `start..=end` into text of at most `max_bytes` (each line numbered when
/// `numbered`), in bounded memory.
fn scan<R: BufRead>(
    mut reader: R,
    start: u64,
    end: u64,
    max_bytes: usize,
    numbered: bool,
) -> io::Result<Scan> {
    let mut text = Text::default();
    let mut line: Vec<u8> = Vec::new();
    let mut line_cut = false; // `line` misses bytes that did not fit
    let mut line_no: u64 = 1; // the line being read
    let mut line_has_bytes = false;
    let mut offset: u64 = 0;
    loop {
        let chunk = reader.fill_buf()?;
        if chunk.is_empty() {
            break;
        }
        if offset < SNIFF_BYTES {
            let sniff = usize::try_from(SNIFF_BYTES - offset).unwrap_or(usize::MAX);
            if looks_binary(&chunk[..chunk.len().min(sniff)]) {
                return Ok(Scan::Binary);
            }
        }
        let len = chunk.len();
        let mut rest = chunk;
        while !rest.is_empty() {
            let newline = rest.iter().position(|&b| b == b'\n');
            let piece = &rest[..newline.unwrap_or(rest.len())];
            let collecting = text.continue_at.is_none() && line_no >= start && line_no <= end;
            if collecting {
                let room = max_bytes.saturating_sub(line.len());
                line_cut |= piece.len() > room;
                line.extend_from_slice(&piece[..piece.len().min(room)]);
            }
            line_has_bytes |= !piece.is_empty();
            match newline {
                Some(i) => {
                    if collecting && !emit(&mut text, line_no, &line, line_cut, max_bytes, numbered)
                    {
                        return Ok(Scan::Binary);
                    }
                    line.clear();
                    line_cut = false;
                    line_has_bytes = false;
                    line_no += 1;
                    rest = &rest[i + 1..];
                }
                None => rest = &[],
            }
        }
        offset += len as u64;
        reader.consume(len);
        let done = text.continue_at.is_some() || line_no > end;
        if done && offset > COUNT_LIMIT_BYTES {
            return Ok(Scan::Text(text)); // total stays unknown
        }
    }
    // A last line without a trailing newline.
    if line_has_bytes {
        let collecting = text.continue_at.is_none() && line_no >= start && line_no <= end;
        if collecting && !emit(&mut text, line_no, &line, line_cut, max_bytes, numbered) {
            return Ok(Scan::Binary);
        }
        text.total = Some(line_no);
    } else {
        text.total = Some(line_no - 1);
    }
    Ok(Scan::Text(text))
}

/// Appends one line (numbered when `numbered`) if it fits; false if the line is not text.
fn emit(
    text: &mut Text,
    line_no: u64,
    line: &[u8],
    line_cut: bool,
    max_bytes: usize,
    numbered: bool,
) -> bool {
    if looks_binary(line) {
        return false;
    }
    let line = match std::str::from_utf8(line) {
        Ok(s) => s,
        // A character cut in two by our own truncation is fine; anything else is binary.
        Err(e) if line_cut && e.error_len().is_none() => {
            match std::str::from_utf8(&line[..e.valid_up_to()]) {
                Ok(s) => s,
                Err(_) => return false,
            }
        }
        Err(_) => return false,
    };
    let numbered = if numbered && line.is_empty() {
        format!("{line_no:>4}{NUMBER_BAR}\n")
    } else if numbered {
        format!("{line_no:>4}{NUMBER_BAR} {line}\n")
    } else {
        format!("{line}\n")
    };
    if text.out.len() + numbered.len() <= max_bytes && !line_cut {
        text.out.push_str(&numbered);
        text.shown = Some((text.shown.map_or(line_no, |(first, _)| first), line_no));
    } else if text.out.is_empty() {
        // A single line longer than the limit: show its beginning.
        let mut cut = max_bytes.min(numbered.len());
        while !numbered.is_char_boundary(cut) {
            cut -= 1;
        }
        text.out.push_str(&numbered[..cut]);
        text.out.push_str(" [... rest of this line not shown]\n");
        text.shown = Some((line_no, line_no));
        text.continue_at = Some(line_no + 1);
    } else {
        text.continue_at = Some(line_no);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(input: &[u8], start: u64, end: u64, max: usize) -> Text {
        match scan(input, start, end, max, true).unwrap() {
            Scan::Text(t) => t,
            Scan::Binary => panic!("binary"),
        }
    }

    #[test]
    fn whole_file_is_numbered() {
        let t = text(b"a\nb\n", 1, u64::MAX, 1000);
        assert_eq!(t.out, "   1│ a\n   2│ b\n");
        assert_eq!(t.total, Some(2));
        assert_eq!(render("f", 1, &t).unwrap().content, t.out);
    }

    #[test]
    fn last_line_without_newline_counts() {
        let t = text(b"a\nb", 1, u64::MAX, 1000);
        assert_eq!(t.out, "   1│ a\n   2│ b\n");
        assert_eq!(t.total, Some(2));
    }

    #[test]
    fn empty_lines_count() {
        let t = text(b"\n\nx\n", 2, 3, 1000);
        assert_eq!(t.out, "   2│\n   3│ x\n");
        assert_eq!(t.total, Some(3));
    }

    #[test]
    fn ranges_get_a_footer() {
        let input = b"1\n2\n3\n4\n5\n";
        let t = text(input, 2, 3, 1000);
        let out = render("f", 2, &t).unwrap().content;
        assert_eq!(out, "   2│ 2\n   3│ 3\n[showing lines 2-3 of 5]");
        let t = text(input, 4, 99, 1000);
        let out = render("f", 4, &t).unwrap().content;
        assert!(out.ends_with("   5│ 5\n[showing lines 4-5 of 5]"), "{out}");
    }

    #[test]
    fn past_the_end_and_empty() {
        let t = text(b"1\n2\n", 3, u64::MAX, 1000);
        let e = render("f", 3, &t).unwrap_err();
        assert!(
            matches!(&e, ToolError::InvalidArguments(m) if m.contains("has 2 lines")),
            "{e}"
        );
        let t = text(b"", 1, u64::MAX, 1000);
        assert_eq!(render("f", 1, &t).unwrap().content, "('f' is empty)");
    }

    #[test]
    fn output_limit_says_where_to_continue() {
        let input: String = (1..=100).map(|i| format!("line {i}\n")).collect();
        let t = text(input.as_bytes(), 1, u64::MAX, 100);
        assert!(t.out.len() <= 100);
        let next = t.continue_at.unwrap();
        let (_, last) = t.shown.unwrap();
        assert_eq!(next, last + 1);
        let out = render("f", 1, &t).unwrap().content;
        assert!(
            out.ends_with(&format!(
                "of 100; output limit reached, call file_read with start_line={next} to continue]"
            )),
            "{out}"
        );
    }

    #[test]
    fn a_huge_line_is_cut() {
        let mut input = "é".repeat(1000).into_bytes();
        input.extend_from_slice(b"\nnext\n");
        let t = text(&input, 1, u64::MAX, 101);
        assert!(t.out.contains("rest of this line not shown"));
        assert_eq!(t.continue_at, Some(2));
        assert_eq!(t.total, Some(2));
    }

    #[test]
    fn binary_is_detected() {
        assert!(matches!(
            scan(&b"ab\0cd"[..], 1, u64::MAX, 100, true).unwrap(),
            Scan::Binary
        ));
        assert!(matches!(
            scan(&b"ok\n\xff\xfe\n"[..], 1, u64::MAX, 100, true).unwrap(),
            Scan::Binary
        ));
        // Invalid bytes outside the requested range do not matter.
        assert!(matches!(
            scan(&b"ok\n\xff\xfe\n"[..], 1, 1, 100, true).unwrap(),
            Scan::Text(_)
        ));
    }

    #[test]
    fn plain_text_has_no_numbers() {
        let Scan::Text(t) = scan(&b"3\n4\n5"[..], 1, u64::MAX, 1000, false).unwrap() else {
            panic!("binary");
        };
        assert_eq!(t.out, "3\n4\n5\n");
        assert!(shows_whole_short_file(&t));
        let long: String = (1..=PLAIN_MAX_LINES + 1)
            .map(|i| format!("{i}\n"))
            .collect();
        let Scan::Text(t) = scan(long.as_bytes(), 1, u64::MAX, 100_000, false).unwrap() else {
            panic!("binary");
        };
        assert!(!shows_whole_short_file(&t));
    }

    #[test]
    fn small_read_buffers_work() {
        let input = b"alpha\nbeta\ngamma";
        let reader = BufReader::with_capacity(2, &input[..]);
        let Scan::Text(t) = scan(reader, 2, 3, 1000, true).unwrap() else {
            panic!("binary");
        };
        assert_eq!(t.out, "   2│ beta\n   3│ gamma\n");
        assert_eq!(t.total, Some(3));
    }
}
