//! What really happened in each step, read from the events the step recorded (docs/direct.md,
//! "Observations"): the user's answers verbatim, the files its `file_write` and
//! `file_str_replace` calls wrote (name and first lines), the files tools reported producing,
//! the tail of its last successful tool output, and its tool-call counts. Built from the
//! event log, so a resumed run knows the same facts. Pure: no I/O.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::model::event::{Event, EventKind};
use crate::model::numbers::numbers_in;
use crate::model::text::{prints_a_result, shell_stdout, text_counts, truncate_chars};

/// Tool names the facts look into (the model-facing contract, docs/architecture.md).
pub(crate) const FILE_WRITE: &str = "file_write";
pub(crate) const FILE_STR_REPLACE: &str = "file_str_replace";
pub(crate) const SHELL_EXEC: &str = "shell_exec";
/// Tools whose output is not a fact of the workspace.
const NOT_OUTPUT: [&str; 3] = ["complete_step", "message_notify_user", "message_ask_user"];
/// How `shell_exec` names the session a command became (docs/direct.md, "Session tools").
const SESSION_STARTED: &str = "session id: ";
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
    /// Paths the step's tool calls named in their arguments (an MCP server's file outside
    /// the workspace, say): a result may mention them without them being in the workspace.
    pub named_paths: Vec<String>,
}

/// Most paths kept per step in [`StepFacts::named_paths`].
const NAMED_PATHS: usize = 64;

impl StepFacts {
    /// Whether one of the step's tool calls named `file` (the same path, or one ending in
    /// it as its last components).
    pub fn named(&self, file: &str) -> bool {
        let file = file.trim_start_matches("./");
        self.named_paths.iter().any(|p| {
            let p = p.trim_start_matches("./");
            p == file || p.ends_with(&format!("/{file}"))
        })
    }
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
    /// A `file_str_replace`'s (path, old, new), remembered once it succeeds.
    replacement: Option<String>,
}

/// The facts of every step of a run.
#[derive(Debug, Clone, Default)]
pub struct RunFacts {
    steps: HashMap<String, StepFacts>,
    /// Writes by their call's key, until the call reports back.
    pending: HashMap<String, PendingWrite>,
    /// A `shell_exec` command became a session this run.
    session_started: bool,
    /// The question each step is waiting on, until the user replies.
    asking: HashMap<String, String>,
    /// Every question the user answered this run, with the answer, in order.
    answered: Vec<Answered>,
    /// Every number a successful tool output or an answer of the user showed (canonical,
    /// `model/numbers.rs`): what a written number can have come from.
    seen_numbers: HashSet<String>,
    /// The lines of failed tool calls' outputs (long enough to mean something): text a
    /// written file must not be (docs/direct.md, "Error text is not a result").
    failed_lines: HashSet<String>,
    /// The `file_str_replace` edits (path, old, new) that succeeded this run.
    replacements: HashSet<String>,
    /// Paths named by each call, until it reports back.
    pending_paths: HashMap<String, Vec<String>>,
    /// Each shell command, until it reports back (the numbers typed in it are not computed).
    pending_commands: HashMap<String, String>,
    /// The run's last successful `shell_exec`, when it printed a result and wrote no file.
    printed: Option<Printed>,
    /// The `(lines, words)` of each `[text: …]` facts line a tool showed this run.
    text_counts: Vec<(String, String)>,
    /// Paths named by calls that succeeded and wrote nothing (a read, an MCP server's
    /// note): sources of the run, not outputs.
    sourced: HashSet<String>,
    /// Which files were last written before the user's latest answer.
    writes: WritesAroundAnswers,
}

/// Files written since the user last answered, and files last written before an answer
/// (`./` trimmed): an output the task builds from the answer must come after it.
#[derive(Debug, Clone, Default)]
struct WritesAroundAnswers {
    since: HashSet<String>,
    before: HashSet<String>,
}

impl WritesAroundAnswers {
    fn written(&mut self, path: &str) {
        let path = path.trim_start_matches("./").to_string();
        self.before.remove(&path);
        self.since.insert(path);
    }

    fn answered(&mut self) {
        self.before.extend(self.since.drain());
    }
}

/// Shortest line of a failed output remembered.
const FAILED_LINE_MIN: usize = 12;
/// The start of a failed call's line counts as that line from this many characters on.
const FAILED_PREFIX_MIN: usize = 24;
/// Most failed-output lines remembered per run.
const FAILED_LINES: usize = 2000;

/// A command that printed a result it worked out and wrote no file (`text::prints_a_result`):
/// what the task's missing output is written from (docs/direct.md, "Completion refused in
/// the loop").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Printed {
    pub command: String,
    /// What it printed on stdout, trimmed.
    pub stdout: String,
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

    /// Whether a tool output or an answer of the user showed `number` (canonical) this run.
    pub fn saw_number(&self, number: &str) -> bool {
        self.seen_numbers.contains(number)
    }

    /// Whether `text`'s first non-blank line is a line of a failed tool call's output of
    /// this run (an error message written down as if it were the result), or the start of
    /// one, at least `FAILED_PREFIX_MIN` characters long (a small model copied the first
    /// half of a refusal into port.txt).
    pub fn is_failed_output(&self, text: &str) -> bool {
        text.lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .is_some_and(|l| {
                self.failed_lines.contains(l)
                    || l.chars().count() >= FAILED_PREFIX_MIN
                        && self.failed_lines.iter().any(|f| f.starts_with(l))
            })
    }

    /// Whether a `file_str_replace` with these arguments (the same path, old and new text)
    /// succeeded earlier in this run.
    pub fn replaced_before(&self, arguments: &str) -> bool {
        replacement_key(arguments).is_some_and(|k| self.replacements.contains(&k))
    }

    /// Whether a call that succeeded and wrote nothing named `path` (the same path, or one
    /// ending in it): a file the run read, from the workspace or elsewhere (an MCP server).
    pub fn sourced(&self, path: &str) -> bool {
        let path = path.trim_start_matches("./");
        self.sourced
            .iter()
            .any(|p| p == path || p.ends_with(&format!("/{path}")))
    }

    /// A file the run wrote whose last path component is `name` (`notes/todo.md` for
    /// `todo.md`): where a task's "a file todo.md in the folder notes" went.
    pub fn written_named(&self, name: &str) -> Option<String> {
        let name = name.trim_start_matches("./");
        self.steps
            .values()
            .flat_map(|s| s.files.iter())
            .map(|f| f.path.trim_start_matches("./"))
            .find(|p| p.rsplit('/').next() == Some(name))
            .map(str::to_string)
    }

    /// Whether `path` was last written before the user's latest answer (by a file tool, or
    /// reported by a command): days.txt written, then the user asked how many days.
    pub fn written_before_the_answer(&self, path: &str) -> bool {
        self.writes.before.contains(path.trim_start_matches("./"))
    }

    /// The other count of a `[text: N lines, M words]` line that showed `number` as one of
    /// them, when the two differ: with `words_asked`, the words count beside `number` as
    /// the lines count (a count of lines written where the task counts words), else the
    /// lines count beside `number` as the words count.
    pub fn count_beside(&self, number: &str, words_asked: bool) -> Option<&str> {
        self.text_counts
            .iter()
            .map(|(l, w)| if words_asked { (l, w) } else { (w, l) })
            .find(|(shown, other)| *shown == number && *other != number)
            .map(|(_, other)| other.as_str())
    }

    /// The run's last successful `shell_exec`, when it printed a result it worked out and
    /// wrote no file.
    pub fn printed(&self) -> Option<&Printed> {
        self.printed.as_ref()
    }

    /// Whether a shell session was started in this run (the session tools are then offered).
    pub fn session_started(&self) -> bool {
        self.session_started
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
                let key = journal_key.clone().unwrap_or_else(|| call_id.clone());
                self.pending_paths
                    .insert(key.clone(), argument_paths(arguments));
                if tool == SHELL_EXEC {
                    if let Some(command) = shell_command(arguments) {
                        self.pending_commands.insert(key, command);
                    }
                }
                let facts = self.steps.entry(step.clone()).or_default();
                for path in argument_paths(arguments) {
                    if facts.named_paths.len() < NAMED_PATHS && !facts.named_paths.contains(&path) {
                        facts.named_paths.push(path);
                    }
                }
                if let Some(file) = written_file(tool, arguments) {
                    let key = journal_key.clone().unwrap_or_else(|| call_id.clone());
                    self.pending.insert(
                        key,
                        PendingWrite {
                            step_id: step.clone(),
                            file,
                            replacement: (tool == FILE_STR_REPLACE)
                                .then(|| replacement_key(arguments))
                                .flatten(),
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
                let named = self.pending_paths.remove(key).unwrap_or_default();
                let command = self.pending_commands.remove(key);
                let typed = command.as_deref().map(numbers_in).unwrap_or_default();
                if *ok && write.is_none() {
                    self.sourced
                        .extend(named.iter().map(|p| p.trim_start_matches("./").to_string()));
                }
                let facts = self.steps.entry(step.clone()).or_default();
                facts.tool_calls += 1;
                if !ok {
                    facts.failed_calls += 1;
                    for line in output.lines().map(str::trim) {
                        if line.chars().count() >= FAILED_LINE_MIN
                            && self.failed_lines.len() < FAILED_LINES
                        {
                            self.failed_lines.insert(line.to_string());
                        }
                    }
                    return;
                }
                if tool == SHELL_EXEC && output.contains(SESSION_STARTED) {
                    self.session_started = true;
                }
                let (body, produced) = split_files(output);
                if let Some(counts) = text_counts(body) {
                    if !self.text_counts.contains(&counts) {
                        self.text_counts.push(counts);
                    }
                }
                if tool == SHELL_EXEC {
                    self.printed = command
                        .filter(|c| produced.is_empty() && prints_a_result(c))
                        .and_then(|command| {
                            let stdout = shell_stdout(body)?.to_string();
                            Some(Printed { command, stdout })
                        });
                }
                if write.is_none() && !NOT_OUTPUT.contains(&tool.as_str()) {
                    // `echo 0` shows a number the model typed, not one it computed.
                    self.seen_numbers
                        .extend(numbers_in(body).into_iter().filter(|n| !typed.contains(n)));
                }
                if let Some(w) = &write {
                    self.writes.written(&w.file.path);
                }
                for path in &produced {
                    self.writes.written(path);
                }
                match write {
                    Some(w) => {
                        self.replacements.extend(w.replacement);
                        add_file(facts, w.file);
                    }
                    None if !NOT_OUTPUT.contains(&tool.as_str()) => {
                        facts.last_output = Some(tail(body));
                    }
                    None => {}
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
                self.seen_numbers.extend(numbers_in(answer));
                self.writes.answered();
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
/// The top-level string arguments of a call that look like paths (no spaces, a `.` or `/`).
fn argument_paths(arguments: &str) -> Vec<String> {
    let Ok(Value::Object(args)) = serde_json::from_str::<Value>(arguments) else {
        return Vec::new();
    };
    args.values()
        .filter_map(Value::as_str)
        .map(str::trim)
        .filter(|v| {
            !v.is_empty()
                && v.len() <= 300
                && (v.contains('/') || v.contains('.'))
                && !v.contains(char::is_whitespace)
        })
        .map(str::to_string)
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

/// A `shell_exec` call's command line.
fn shell_command(arguments: &str) -> Option<String> {
    let args: Value = serde_json::from_str(arguments).ok()?;
    Some(args.get("command")?.as_str()?.trim().to_string())
}

/// A `file_str_replace` call's path, old and new text as one key (`None`: not its arguments).
fn replacement_key(arguments: &str) -> Option<String> {
    let args: Value = serde_json::from_str(arguments).ok()?;
    let text = |k: &str| args.get(k).and_then(Value::as_str);
    Some(format!(
        "{}\0{}\0{}",
        text("path")?.trim().trim_start_matches("./"),
        text("old")?,
        text("new")?
    ))
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
    fn a_failed_calls_line_or_its_start_is_failed_output() {
        let mut facts = RunFacts::default();
        facts.record(&called(
            "s1",
            "k1",
            "file_write",
            false,
            "Error: invalid arguments: file_write: the content is a tool's status message",
        ));
        let line = "Error: invalid arguments: file_write: the content is a tool's status message";
        assert!(facts.is_failed_output(line));
        // The 0.5B model wrote the first half of the refusal into port.txt.
        assert!(facts.is_failed_output("Error: invalid arguments: file_write: the\n"));
        assert!(
            !facts.is_failed_output("Error: invalid"),
            "too short to tell"
        );
        assert!(!facts.is_failed_output("8080"));
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
    fn an_empty_answer_is_said_so_and_sessions_are_noticed() {
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
        assert!(!facts.session_started());
        facts.record(&called(
            "s1",
            "k",
            "shell_exec",
            true,
            "still running after 10 s; session id: sh1",
        ));
        assert!(facts.session_started());
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
}
