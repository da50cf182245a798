//! Cutting long texts to size for a model: by characters (prompts) or by bytes keeping head
//! and tail (tool output); and recognising a tool's own status message written as if it
//! were a result.

/// Cuts `s` to at most `max` characters, marking the cut.
pub fn truncate_chars(s: &str, max: usize) -> String {
    let count = s.chars().count();
    if count <= max {
        return s.to_string();
    }
    let head: String = s.chars().take(max).collect();
    format!("{head}… [{} more characters cut]", count - max)
}

/// Cuts `s` to about `max` bytes, keeping the head and the tail and saying what was cut.
pub fn truncate_bytes(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let head_len = floor_char_boundary(s, max * 2 / 3);
    let tail_start = ceil_char_boundary(s, s.len() - (max / 3));
    let cut = tail_start - head_len;
    format!(
        "{}\n[... {cut} bytes cut ...]\n{}",
        &s[..head_len],
        &s[tail_start..]
    )
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char_boundary(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// Whether `content` is one of the file and shell tools' own replies rather than a result:
/// what `file_write` answers (`wrote (new file) 23 bytes to 'f'`, or its tail
/// `23 bytes to 'f'`), what `file_str_replace` answers, or a `shell_exec` report copied
/// whole. Such content is refused when written, and an output holding it is not done.
pub fn is_tool_status_message(content: &str) -> bool {
    let text = content.trim().trim_end_matches('.').to_lowercase();
    if text.starts_with("exit code: ") && text.contains("--- stdout") {
        return true;
    }
    if text.starts_with("replaced 1 occurrence in '") && !text.contains('\n') {
        return true;
    }
    let Some((head, quoted)) = text.split_once(" bytes to '") else {
        return false;
    };
    if quoted.matches('\'').count() != 1 || !quoted.ends_with('\'') || text.contains('\n') {
        return false;
    }
    let head = [
        "wrote (new file)",
        "wrote (replacing the old content)",
        "appended",
        "wrote",
    ]
    .iter()
    .find_map(|verb| head.strip_prefix(verb))
    .unwrap_or(head)
    .trim();
    !head.is_empty() && head.chars().all(|c| c.is_ascii_digit())
}

/// Programs whose command line a small model writes into a result file instead of running
/// it (`echo $(( $(cat a.txt) + $(cat b.txt) ))` as sum.txt's content).
const COMMANDS: [&str; 21] = [
    "echo", "cat", "wc", "awk", "grep", "sort", "uniq", "mv", "cp", "mkdir", "python3", "python",
    "sh", "bash", "jq", "sed", "tr", "head", "tail", "printf", "cut",
];

/// Whether `content`, written to `path`, is a shell command rather than a result: the path
/// is a text file or has no extension (not a script), and one of the content's first lines
/// is a common program with a file, a flag or a shell operator after it, or the content
/// holds a command substitution.
pub fn is_shell_command_text(path: &str, content: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let text_like = match name.rsplit_once('.') {
        Some((_, ext)) => matches!(ext.to_ascii_lowercase().as_str(), "txt" | "csv" | "json"),
        None => true,
    };
    if !text_like {
        return false;
    }
    let command_line = |line: &str| {
        let mut words = line.split_whitespace();
        let program = words.next().unwrap_or_default();
        COMMANDS.contains(&program)
            && words.any(|w| {
                w.starts_with('-')
                    || ["|", ">", "<", "$", "&&"].iter().any(|m| w.contains(m))
                    || w.rsplit_once('.').is_some_and(|(stem, ext)| {
                        !stem.is_empty()
                            && !ext.is_empty()
                            && ext.chars().all(char::is_alphanumeric)
                    })
            })
    };
    content.lines().map(str::trim).take(5).any(command_line)
        || content.contains("$((")
        || content.contains("$(cat ")
}

/// The lines of `content` as one command line (`a && b && c`), when every line of it is a
/// command of a common program: what a model that wrote its commands into a file meant to
/// run. At most 5 lines and 300 characters.
pub fn as_one_command(content: &str) -> Option<String> {
    let lines: Vec<&str> = content
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let commands = !lines.is_empty()
        && lines.len() <= 5
        && lines.iter().all(|l| {
            let program = l.split_whitespace().next().unwrap_or_default();
            COMMANDS.contains(&program) && !l.contains("&&")
        });
    let joined = lines.join(" && ");
    (commands && joined.len() <= 300).then_some(joined)
}

/// The counts a file tool's `[text: N lines, M words…]` line gives (docs/direct.md, "Data
/// facts"): `(lines, words)` as written.
pub fn text_counts(output: &str) -> Option<(String, String)> {
    let (_, rest) = output.split_once("[text: ")?;
    let mut parts = rest.split([',', ';', ']']);
    let count = |part: Option<&str>, unit: &str| {
        let mut words = part?.split_whitespace();
        let n = words.next()?;
        let named = words.next()?.trim_end_matches('s') == unit;
        (named && n.chars().all(|c| c.is_ascii_digit())).then(|| n.to_string())
    };
    let lines = count(parts.next(), "line")?;
    let words = count(parts.next(), "word")?;
    Some((lines, words))
}

/// What a successful `shell_exec` printed on stdout (its report's `--- stdout ---` section,
/// trimmed); `None` for a failed command, a session, or nothing printed.
pub fn shell_stdout(report: &str) -> Option<&str> {
    if !report.starts_with("exit code: 0\n") {
        return None;
    }
    let (_, rest) = report.split_once("\n--- stdout ---\n")?;
    let stdout = rest.split("\n--- stderr").next().unwrap_or(rest).trim();
    (!stdout.is_empty()).then_some(stdout)
}

/// Programs that only show what is there (a file, a folder): what they print is an input,
/// never a result made from it.
const VIEWERS: [&str; 7] = ["cat", "ls", "pwd", "find", "stat", "file", "tree"];

/// Whether `command` prints a result it worked out (`wc -l < data.csv`,
/// `echo $(( $(cat a.txt) + $(cat b.txt) ))`, `jq -r .port config.json`) and sends it
/// nowhere else: no redirection, no pipe into a file, not a viewer of what is there and not
/// an `echo` of typed text. What such a command printed is what an output is written from.
pub fn prints_a_result(command: &str) -> bool {
    let command = command.trim();
    if command.is_empty() || command.contains('>') || command.contains("tee ") {
        return false;
    }
    if command.contains('|') || command.contains("$(") {
        return true;
    }
    let program = command.split_whitespace().next().unwrap_or_default();
    if program == "echo" || program == "printf" {
        return command.contains('$');
    }
    !VIEWERS.contains(&program) && !command.contains("&&") && !command.contains(';')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_are_joined_into_one() {
        assert_eq!(
            as_one_command("mkdir archive\nmv report1.txt archive\n\nmv report2.txt archive\n")
                .as_deref(),
            Some("mkdir archive && mv report1.txt archive && mv report2.txt archive")
        );
        assert_eq!(as_one_command("mkdir archive\nthen move the files"), None);
        assert_eq!(as_one_command(""), None);
    }

    #[test]
    fn shell_commands_written_as_results_are_recognised() {
        for (path, content) in [
            ("sum.txt", "echo $(($(cat a.txt) + $(cat b.txt)))"),
            ("archive", "mkdir archive\nmv report1.txt archive\n"),
            ("count.txt", "wc -l < data.csv"),
            ("total.txt", "The total is $((4 + 5))"),
        ] {
            assert!(is_shell_command_text(path, content), "{path}: {content}");
        }
        for (path, content) in [
            ("run.sh", "echo hello"),
            ("squares.py", "print(1)"),
            ("notes.txt", "cat food, dog food"),
            ("sum.txt", "9"),
            ("city.txt", "Lisbon"),
        ] {
            assert!(!is_shell_command_text(path, content), "{path}: {content}");
        }
    }

    #[test]
    fn truncation_keeps_head_and_tail_on_char_boundaries() {
        let s = "é".repeat(100);
        let t = truncate_bytes(&s, 30);
        assert!(t.contains("bytes cut"));
        assert!(t.starts_with('é'));
        assert!(t.ends_with('é'));
        assert_eq!(truncate_bytes("short", 30), "short");
    }

    #[test]
    fn tool_status_messages_are_recognised() {
        for status in [
            "wrote (new file) 23 bytes to 'count.txt'",
            "23 bytes to 'count.txt'",
            "Wrote 7 bytes to 'out.txt'.",
            "appended 3 bytes to 'a.txt'\n",
            "exit code: 0\n--- stdout ---\n7\n--- stderr: (empty) ---",
            "replaced 1 occurrence in 'a.txt' at line 2 (1 lines removed, 1 lines inserted)",
        ] {
            assert!(is_tool_status_message(status), "{status}");
        }
        for result in [
            "7",
            "The file has 23 bytes.",
            "hello\n",
            "23 bytes to 'a' and 'b'",
        ] {
            assert!(!is_tool_status_message(result), "{result}");
        }
    }

    #[test]
    fn a_shell_report_s_stdout_is_read_back() {
        let ok = "exit code: 0\n--- stdout ---\n9\n--- stderr: (empty) ---";
        assert_eq!(shell_stdout(ok), Some("9"));
        let two = "exit code: 0\n--- stdout ---\n4\n5\n--- stderr ---\nwarn";
        assert_eq!(shell_stdout(two), Some("4\n5"));
        assert_eq!(
            shell_stdout("exit code: 0\n--- stdout: (empty) ---\n--- stderr: (empty) ---"),
            None
        );
        assert_eq!(
            shell_stdout("exit code: 1\n--- stdout ---\n9\n--- stderr: (empty) ---"),
            None
        );
    }

    #[test]
    fn a_command_that_works_a_result_out_is_told_from_one_that_shows_or_writes() {
        for computes in [
            "echo $(( $(cat a.txt) + $(cat b.txt) ))",
            "wc -l < data.csv",
            "jq -r .settings.port config.json",
            "cat names.txt | sort",
            "grep -c ERROR server.log",
            "python3 squares.py",
        ] {
            assert!(prints_a_result(computes), "{computes}");
        }
        for not in [
            "cat a.txt b.txt",
            "ls",
            "echo 4 + 5",
            "wc -l < data.csv > count.txt",
            "sort names.txt | tee out.txt",
            "mkdir archive && mv a b",
            "",
        ] {
            assert!(!prints_a_result(not), "{not}");
        }
    }

    #[test]
    fn a_text_facts_line_gives_its_counts() {
        assert_eq!(
            text_counts("the quick\n[text: 3 lines, 9 words]"),
            Some(("3".into(), "9".into()))
        );
        assert_eq!(
            text_counts("[text: 1 line, 12 words; numbers: sum 4]"),
            Some(("1".into(), "12".into()))
        );
        assert_eq!(text_counts("[json: .a is a list of 3 items]"), None);
    }
}
