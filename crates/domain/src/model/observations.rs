//! What really happened in each step, read from the events the step recorded (docs/direct.md,
//! "Observations"): the user's answers verbatim, the files its `file_write` and
//! `file_str_replace` calls wrote (name and first lines), the files tools reported producing
//! (`ToolOutput::attachments`, which the executor names after the output), the tail of its
//! last successful tool output, and its tool-call counts. Built from the event log, so a
//! resumed run knows the same facts. Pure: no I/O, and no reading of what a tool printed.

use std::collections::HashMap;

use serde_json::Value;

use crate::model::event::{Event, EventKind};
use crate::model::text::truncate_chars;

/// Tool names the facts look into (the model-facing contract, docs/architecture.md).
pub(crate) const FILE_WRITE: &str = "file_write";
pub(crate) const FILE_STR_REPLACE: &str = "file_str_replace";
/// Tools whose output is not a fact of the workspace.
const NOT_OUTPUT: [&str; 3] = ["complete_step", "message_notify_user", "message_ask_user"];
/// How the executor names the files a tool produced, at the end of its output.
const FILES_MARKER: &str = "\n[files: ";

/// Lines of written text kept.
const HEAD_LINES: usize = 3;
/// Characters of written text kept.
const HEAD_CHARS: usize = 160;
/// Lines and characters of a tool output's tail kept.
const TAIL_LINES: usize = 6;
const TAIL_CHARS: usize = 300;
/// Characters of one answer of the user kept.
const ANSWER_CHARS: usize = 300;

/// One file a step wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenFile {
    pub path: String,
    /// The first lines of what was written (`None`: a tool reported the file, not its text).
    pub head: Option<String>,
    /// `file_str_replace` changed part of it, or `file_write` appended to it.
    pub partial: bool,
}

/// The facts of one step, over all its attempts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StepFacts {
    /// The user's answers to `message_ask_user`, verbatim (an empty answer is kept empty).
    pub answers: Vec<String>,
    pub files: Vec<WrittenFile>,
    /// The tail of the last successful tool output (not a file write's status line).
    pub last_output: Option<String>,
    pub tool_calls: u32,
    pub failed_calls: u32,
}

impl StepFacts {
    /// Whether anything worth showing was recorded.
    pub fn is_empty(&self) -> bool {
        self.answers.is_empty() && self.files.is_empty() && self.last_output.is_none()
    }

    /// One line per fact, as a prompt or a report shows them.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for answer in &self.answers {
            lines.push(if answer.trim().is_empty() {
                "the user gave an empty answer".to_string()
            } else {
                format!(
                    "the user answered: {}",
                    truncate_chars(answer, ANSWER_CHARS)
                )
            });
        }
        for f in &self.files {
            let verb = if f.partial { "changed" } else { "wrote" };
            lines.push(match &f.head {
                Some(head) => format!("{verb} {}: {}", f.path, quoted(head)),
                None => format!("{verb} {}", f.path),
            });
        }
        if let Some(out) = &self.last_output {
            lines.push(format!("last tool output: {}", quoted(out)));
        }
        lines
    }
}

/// `"a\nb"` written on one line, so a fact stays one line of a prompt.
fn quoted(text: &str) -> String {
    format!("{:?}", text)
}

/// A write seen in `tool_calling`, waiting for its `tool_called`.
#[derive(Debug, Clone)]
struct PendingWrite {
    step_id: String,
    file: WrittenFile,
}

/// The facts of every step of a run.
#[derive(Debug, Clone, Default)]
pub struct RunFacts {
    steps: HashMap<String, StepFacts>,
    /// Writes by their call's key, until the call reports back.
    pending: HashMap<String, PendingWrite>,
    /// The question each step is waiting on, until the user replies.
    asking: HashMap<String, String>,
    /// Every question the user answered this run, with the answer, in order.
    answered: Vec<Answered>,
    /// The programs the run's steps ran (any call whose arguments carry `code`), in order.
    programs: Vec<String>,
}

/// A question of `message_ask_user` and the user's answer, verbatim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answered {
    pub question: String,
    pub answer: String,
}

impl RunFacts {
    pub fn from_events(events: &[Event]) -> RunFacts {
        let mut facts = RunFacts::default();
        for e in events {
            facts.record(&e.kind);
        }
        facts
    }

    /// The facts of step `step_id` (empty when it recorded none).
    pub fn step(&self, step_id: &str) -> StepFacts {
        self.steps.get(step_id).cloned().unwrap_or_default()
    }

    /// Every question the user answered this run, in order.
    pub fn answered(&self) -> &[Answered] {
        &self.answered
    }

    /// The user's earlier non-empty answer to `question` (the same words, whatever the case
    /// and punctuation): asked again (a retry, a later step) it is not asked twice.
    pub fn earlier_answer(&self, question: &str) -> Option<&str> {
        let key = question_key(question);
        self.answered
            .iter()
            .rev()
            .find(|a| !a.answer.trim().is_empty() && question_key(&a.question) == key)
            .map(|a| a.answer.as_str())
    }

    /// The programs the run's steps ran (the `code` argument of their calls), in order.
    pub fn programs(&self) -> &[String] {
        &self.programs
    }

    /// Tool calls of the run that worked (the domain's own functions not counted).
    pub fn calls_that_worked(&self) -> u32 {
        self.steps
            .values()
            .map(|s| s.tool_calls.saturating_sub(s.failed_calls))
            .sum()
    }

    /// Takes in one event of the run.
    pub fn record(&mut self, kind: &EventKind) {
        match kind {
            EventKind::ToolCalling {
                step_id: Some(step),
                call_id,
                tool,
                arguments,
                journal_key,
            } => {
                if let Some(code) = program(arguments) {
                    self.programs.push(code);
                }
                if let Some(file) = written_file(tool, arguments) {
                    let key = journal_key.clone().unwrap_or_else(|| call_id.clone());
                    self.pending.insert(
                        key,
                        PendingWrite {
                            step_id: step.clone(),
                            file,
                        },
                    );
                }
            }
            EventKind::ToolCalled {
                step_id: Some(step),
                call_id,
                tool,
                ok,
                output,
                journal_key,
                ..
            } => {
                let key = journal_key.as_deref().unwrap_or(call_id);
                let write = self.pending.remove(key).filter(|w| &w.step_id == step);
                let facts = self.steps.entry(step.clone()).or_default();
                if NOT_OUTPUT.contains(&tool.as_str()) {
                    return;
                }
                facts.tool_calls += 1;
                if !ok {
                    facts.failed_calls += 1;
                    return;
                }
                let (body, produced) = split_files(output);
                match write {
                    Some(w) => add_file(facts, w.file),
                    None => facts.last_output = Some(tail(body)),
                }
                for path in produced {
                    if !facts.files.iter().any(|f| f.path == path) {
                        add_file(
                            facts,
                            WrittenFile {
                                path,
                                head: None,
                                partial: false,
                            },
                        );
                    }
                }
            }
            EventKind::WaitingForUser { step_id, question } => {
                self.asking.insert(step_id.clone(), question.clone());
            }
            EventKind::UserReplied {
                step_id,
                answer: Some(answer),
                ..
            } => {
                self.steps
                    .entry(step_id.clone())
                    .or_default()
                    .answers
                    .push(answer.clone());
                if let Some(question) = self.asking.remove(step_id) {
                    self.answered.push(Answered {
                        question,
                        answer: answer.clone(),
                    });
                }
            }
            EventKind::UserReplied { step_id, .. } => {
                self.asking.remove(step_id);
            }
            _ => {}
        }
    }
}

/// A later write of the same file replaces the earlier fact.
fn add_file(facts: &mut StepFacts, file: WrittenFile) {
    facts.files.retain(|f| f.path != file.path);
    facts.files.push(file);
}

/// The file a `file_write` / `file_str_replace` call writes, and the head of its text.
/// The program a call runs: its arguments' `code` text, whatever the tool.
pub fn program(arguments: &str) -> Option<String> {
    let args: Value = serde_json::from_str(arguments).ok()?;
    let code = args.get("code")?.as_str()?;
    (!code.trim().is_empty()).then(|| code.to_string())
}

/// Whether two programs do the same work: the same lines once blank lines, comments (`#`,
/// in both Python and bash), spacing and the lines handing over the answer (`final_answer`,
/// the code tool's own function) are left out, and up to the names the program gives its
/// own variables (`largest_value` in one, `largest_total` in the other: the same program,
/// which a check must not count as an independent one; docs/verification.md).
pub fn same_program(a: &str, b: &str) -> bool {
    let lines = |s: &str| -> Vec<String> {
        s.lines()
            .map(str::trim_end)
            .filter(|l| does_work(l.trim_start()))
            .map(str::to_string)
            .collect()
    };
    let (x, y) = (lines(a), lines(b));
    // A program that is all answer line is compared whole.
    if x.is_empty() || y.is_empty() {
        return a.trim() == b.trim();
    }
    x == y || canonical(&x.join("\n")) == canonical(&y.join("\n"))
}

/// Whether a program's line (trimmed) does the program's work, as the comparisons of
/// programs read it: not blank, not a whole-line comment, not the line handing over the
/// answer (`final_answer`, the code tool's own function).
fn does_work(trimmed: &str) -> bool {
    !trimmed.is_empty() && !trimmed.starts_with('#') && !trimmed.contains("final_answer")
}

/// Whether program `outer` holds every line of program `inner`, in order (blank lines,
/// comments, spacing and the `final_answer` lines left out): a check that wrote the run's
/// program again inside a longer one (the workspace's own code pasted above it) runs the
/// same computation and checks nothing (docs/verification.md).
pub fn holds_program(outer: &str, inner: &str) -> bool {
    let lines = |s: &str| -> Vec<String> {
        s.lines()
            .map(str::trim)
            .filter(|t| does_work(t))
            .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect()
    };
    let (outer, inner) = (lines(outer), lines(inner));
    if inner.is_empty() {
        return false;
    }
    let mut rest = outer.iter();
    inner.iter().all(|line| rest.any(|l| l == line))
}

/// A token of a program: a name, a literal (string or number) or one other character.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Name(String),
    Literal(String),
    Mark(char),
}

/// `code`'s tokens, comments and spacing left out.
fn tokens(code: &str) -> Vec<Token> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '#' && !matches!(out.last(), Some(Token::Mark('$'))) {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '"' || c == '\'' {
            let start = i;
            i += 1;
            while i < chars.len() && chars[i] != c {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i = (i + 1).min(chars.len());
            out.push(Token::Literal(chars[start..i].iter().collect()));
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_alphanumeric()
                    || chars[i] == '_'
                    || chars[i] == '.' && c.is_ascii_digit())
            {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            out.push(if c.is_ascii_digit() {
                Token::Literal(word)
            } else {
                Token::Name(word)
            });
        } else {
            out.push(Token::Mark(c));
            i += 1;
        }
    }
    out
}

/// `code`'s tokens with the names it binds itself (assigned with `=`, or named after `for`,
/// `as`, `def`, `class`) renamed by their order of first appearance; any other
/// name (a builtin, a library's function, an attribute) stays as written.
fn canonical(code: &str) -> Vec<Token> {
    let tokens = tokens(code);
    let mut bound = std::collections::HashSet::new();
    for (i, token) in tokens.iter().enumerate() {
        let Token::Name(name) = token else { continue };
        let before = i.checked_sub(1).and_then(|j| tokens.get(j));
        let after_dot = before == Some(&Token::Mark('.'));
        let binder = matches!(before, Some(Token::Name(w)) if matches!(w.as_str(), "for" | "as" | "def" | "class"));
        let assigned = tokens.get(i + 1) == Some(&Token::Mark('='))
            && tokens.get(i + 2) != Some(&Token::Mark('='));
        if !after_dot && (binder || assigned) {
            bound.insert(name.clone());
        }
    }
    let mut names: Vec<String> = Vec::new();
    tokens
        .into_iter()
        .map(|token| match &token {
            Token::Name(name) if bound.contains(name) => {
                let n = match names.iter().position(|x| x == name) {
                    Some(n) => n,
                    None => {
                        names.push(name.clone());
                        names.len() - 1
                    }
                };
                Token::Name(format!("\u{0}{n}"))
            }
            _ => token,
        })
        .collect()
}

fn written_file(tool: &str, arguments: &str) -> Option<WrittenFile> {
    let field = match tool {
        FILE_WRITE => "content",
        FILE_STR_REPLACE => "new",
        _ => return None,
    };
    let args: Value = serde_json::from_str(arguments).ok()?;
    let path = args.get("path")?.as_str()?.trim().to_string();
    if path.is_empty() {
        return None;
    }
    let text = args.get(field).and_then(Value::as_str).unwrap_or_default();
    Some(WrittenFile {
        path,
        head: Some(head(text)),
        partial: tool == FILE_STR_REPLACE || args.get("append") == Some(&Value::Bool(true)),
    })
}

/// The output without the executor's files line, and the files it names.
fn split_files(output: &str) -> (&str, Vec<String>) {
    match output.rsplit_once(FILES_MARKER) {
        Some((body, rest)) => match rest.strip_suffix(']') {
            Some(list) => (body, list.split(", ").map(str::to_string).collect()),
            None => (output, Vec::new()),
        },
        None => (output, Vec::new()),
    }
}

/// The first lines of written text.
fn head(text: &str) -> String {
    let lines: Vec<&str> = text.lines().take(HEAD_LINES).collect();
    let mut head = lines.join("\n");
    if text.lines().count() > HEAD_LINES {
        head.push_str("\n...");
    }
    truncate_chars(&head, HEAD_CHARS)
}

/// A question's words, lower-cased, without punctuation or extra spaces.
fn question_key(question: &str) -> String {
    question
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The last lines of a tool's output.
fn tail(text: &str) -> String {
    let text = text.trim_end();
    let lines: Vec<&str> = text.lines().collect();
    let kept = lines[lines.len().saturating_sub(TAIL_LINES)..].join("\n");
    let count = kept.chars().count();
    if count <= TAIL_CHARS {
        return kept;
    }
    let cut: String = kept.chars().skip(count - TAIL_CHARS).collect();
    format!("...{cut}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calling(step: &str, key: &str, tool: &str, args: &str) -> EventKind {
        EventKind::ToolCalling {
            step_id: Some(step.into()),
            call_id: "c".into(),
            tool: tool.into(),
            arguments: args.into(),
            journal_key: Some(key.into()),
        }
    }

    fn called(step: &str, key: &str, tool: &str, ok: bool, output: &str) -> EventKind {
        EventKind::ToolCalled {
            step_id: Some(step.into()),
            call_id: "c".into(),
            tool: tool.into(),
            ok,
            output: output.into(),
            duration_ms: 1,
            journal_key: Some(key.into()),
        }
    }

    fn asked(step: &str, question: &str) -> EventKind {
        EventKind::WaitingForUser {
            step_id: step.into(),
            question: question.into(),
        }
    }

    fn replied(step: &str, answer: Option<&str>) -> EventKind {
        EventKind::UserReplied {
            step_id: step.into(),
            answer: answer.map(str::to_string),
            error: answer.is_none().then(|| "no terminal".to_string()),
            journal_key: None,
        }
    }

    #[test]
    fn an_answered_question_is_known_by_its_words() {
        let mut facts = RunFacts::default();
        facts.record(&asked("s1", "Which city do you live in?"));
        facts.record(&replied("s1", Some("Lisbon")));
        facts.record(&asked("s1", "Your name?"));
        facts.record(&replied("s1", None));
        facts.record(&asked("s2", "How many days?"));
        facts.record(&replied("s2", Some("  ")));
        assert_eq!(
            facts.earlier_answer("which city do you  live in"),
            Some("Lisbon")
        );
        assert_eq!(facts.earlier_answer("Your name?"), None, "never answered");
        assert_eq!(facts.earlier_answer("How many days?"), None, "empty answer");
        assert_eq!(facts.earlier_answer("Which town do you live in?"), None);
        assert_eq!(
            facts.answered(),
            [
                Answered {
                    question: "Which city do you live in?".into(),
                    answer: "Lisbon".into()
                },
                Answered {
                    question: "How many days?".into(),
                    answer: "  ".into()
                }
            ]
        );
    }

    #[test]
    fn answers_writes_and_outputs_become_facts() {
        let mut facts = RunFacts::default();
        facts.record(&EventKind::UserReplied {
            step_id: "s1".into(),
            answer: Some("Paris".into()),
            error: None,
            journal_key: None,
        });
        facts.record(&calling(
            "s2",
            "k1",
            "file_write",
            r#"{"path": "city.txt", "content": "Paris\n"}"#,
        ));
        facts.record(&called(
            "s2",
            "k1",
            "file_write",
            true,
            "Wrote 6 bytes to 'city.txt'",
        ));
        facts.record(&calling(
            "s2",
            "k2",
            "shell_exec",
            r#"{"command": "wc -l d.csv"}"#,
        ));
        facts.record(&called(
            "s2",
            "k2",
            "shell_exec",
            true,
            "exit 0\nstdout:\n7 d.csv",
        ));
        facts.record(&calling("s2", "k3", "shell_exec", r#"{"command": "nope"}"#));
        facts.record(&called("s2", "k3", "shell_exec", false, "exit 127"));
        assert_eq!(
            facts.step("s1").lines(),
            vec!["the user answered: Paris".to_string()]
        );
        let s2 = facts.step("s2");
        assert_eq!((s2.tool_calls, s2.failed_calls), (3, 1));
        assert_eq!(
            s2.lines(),
            vec![
                "wrote city.txt: \"Paris\"".to_string(),
                "last tool output: \"exit 0\\nstdout:\\n7 d.csv\"".to_string(),
            ]
        );
    }

    #[test]
    fn a_failed_write_is_no_fact_and_files_reported_by_tools_are() {
        let mut facts = RunFacts::default();
        facts.record(&calling(
            "s1",
            "k1",
            "file_write",
            r#"{"path": "a.txt", "content": "x"}"#,
        ));
        facts.record(&called("s1", "k1", "file_write", false, "Error: refused"));
        facts.record(&calling("s1", "k2", "shell_exec", r#"{"command": "make"}"#));
        facts.record(&called(
            "s1",
            "k2",
            "shell_exec",
            true,
            "built\n[files: out/b.bin]",
        ));
        assert_eq!(
            facts.step("s1").lines(),
            vec![
                "wrote out/b.bin".to_string(),
                "last tool output: \"built\"".to_string()
            ]
        );
    }

    #[test]
    fn an_empty_answer_is_said_so() {
        let mut facts = RunFacts::default();
        facts.record(&EventKind::UserReplied {
            step_id: "s1".into(),
            answer: Some(String::new()),
            error: None,
            journal_key: None,
        });
        assert_eq!(
            facts.step("s1").lines(),
            vec!["the user gave an empty answer".to_string()]
        );
    }

    #[test]
    fn long_text_is_cut_to_its_head_and_tail() {
        let text: String = (1..=20).map(|n| format!("line {n}\n")).collect();
        assert_eq!(head(&text), "line 1\nline 2\nline 3\n...");
        assert_eq!(
            tail(&text),
            "line 15\nline 16\nline 17\nline 18\nline 19\nline 20"
        );
    }

    /// A check that pasted the workspace's code above the run's program runs the run's
    /// computation again: it cannot tell the run's answer from a misreading of the task.
    #[test]
    fn a_program_pasted_inside_a_longer_one_is_held_by_it() {
        let run = "from ledger import split\n\ndata = [2, 3]\nprint(split(data))\nfinal_answer(split(data))\n";
        let check = "# ledger.py\ndef split(values):\n    return [v * 5 for v in values]\n\n# main\nfrom ledger import split\ndata = [2, 3]\n  print(split(data))\nfinal_answer(split(data))";
        assert!(holds_program(check, run));
        assert!(!holds_program(run, check));
        // Out of order, or a line changed: another program.
        assert!(!holds_program(
            "print(split(data))\ndata = [2, 3]\nfrom ledger import split",
            run
        ));
        assert!(!holds_program(
            "from ledger import split\ndata = [2, 4]\nprint(split(data))",
            run
        ));
        // A run program that is all answer line is never held.
        assert!(!holds_program("final_answer(9)", "final_answer(9)"));
    }

    #[test]
    fn a_calls_program_is_its_code_and_programs_compare_by_their_lines() {
        assert_eq!(
            program(r#"{"language":"bash","code":"echo hi\n"}"#).as_deref(),
            Some("echo hi\n")
        );
        assert_eq!(program(r#"{"code":"  "}"#), None);
        assert_eq!(program(r#"{"command":"echo hi"}"#), None);
        assert!(same_program("a = 1\n\nprint(a)  \n", "a = 1\nprint(a)"));
        assert!(!same_program("print(a)", "print(b)"));
        // Only the answer handed over and the comments differ: the same work.
        assert!(same_program(
            "# changes: t.txt\nx = 1\nfinal_answer('done')",
            "x = 1\n    # why\nfinal_answer('The file was flipped.')"
        ));
        assert!(!same_program("final_answer(4 + 5)", "final_answer(9)"));
        // The same program with its own variables named otherwise, and an inline comment.
        assert!(same_program(
            "import pandas as pd\ndf = pd.read_csv('o.csv')\nlargest_value = df['total'].max()\nwith open('m.txt', 'w') as file:\n    file.write(str(largest_value))",
            "import pandas as pd\ndf = pd.read_csv('o.csv')  # the data\nlargest_total = df['total'].max()\nwith open('m.txt', 'w') as f:\n    f.write(str(largest_total))"
        ));
        // Another column, another method, or a name it did not bind: other work.
        assert!(!same_program(
            "df = pd.read_csv('o.csv')\nv = df['total'].max()",
            "df = pd.read_csv('o.csv')\nv = df['items'].max()"
        ));
        assert!(!same_program(
            "df = pd.read_csv('o.csv')\nv = df['total'].max()",
            "df = pd.read_csv('o.csv')\nv = df['total'].min()"
        ));
        assert!(!same_program("x = len(a)", "x = len(b)"));
        assert!(same_program(
            "n=$(wc -l < a.txt)\necho $n > c.txt",
            "count=$(wc -l < a.txt)\necho $count > c.txt"
        ));
        let mut facts = RunFacts::default();
        facts.record(&calling("s1", "k1", "code_run", r#"{"code":"echo 1"}"#));
        facts.record(&EventKind::ToolCalling {
            step_id: None,
            call_id: "c".into(),
            tool: "code_run".into(),
            arguments: r#"{"code":"echo 2"}"#.into(),
            journal_key: None,
        });
        assert_eq!(
            facts.programs(),
            ["echo 1"],
            "a check's program is not the run's"
        );
    }
}
