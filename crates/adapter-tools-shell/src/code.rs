//! The `code_run` tool (docs/code-actions.md): a whole program, Python 3 or bash, run in the
//! workspace the way `shell_exec` runs a command (same sandbox, environment, limits and
//! process group), waited for to its end, with its stdin empty. The answer is its exit
//! code, its output and the files it created, changed or deleted (seen by comparing the
//! workspace's files, their sizes and times, before and after); the created and changed
//! ones are the call's attachments, and its whole stdout (up to the cap) travels beside the
//! text for the runtime's own comparisons (`ToolOutput::stdout`). Which existing files it
//! may change is the runtime's business (its `changes` argument); the tool runs it.
//!
//! A program may end with `final_answer(result)` (Python) or `final_answer "result"`
//! (bash), as smolagents' CodeAgent does: the result travels back as
//! `ToolOutput::final_answer` and finishes the step, so that the answer is computed by the
//! program, not typed afterwards. The function prints one marked line and exits 0; the
//! line is taken out of the output the model reads.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use async_trait::async_trait;
use serde_json::{json, Value};

use domain::ports::{ProgramCall, Tool, ToolContext, ToolEffect, ToolFamily, ToolOutput};
use domain::tools::builtin::ASK_USER;
use domain::tools::code::{self, CodeArgs, CodeLanguage, CODE_RUN, MAX_CODE_BYTES};
use domain::ToolError;

use crate::process::{self, CommandSpec, Ending};
use crate::report::report;
use crate::shell::{workspace_relative, ShellExecTool};
use crate::{args, workspace, workspace_files};

/// Files compared before and after a program.
const WATCHED: usize = 20_000;
/// Changed files named in the answer, per kind.
const NAMED: usize = 30;

/// Runs a program in the workspace; see the module docs.
#[derive(Debug, Clone)]
pub struct CodeRunTool {
    /// Where and how programs run: the shell tool's sandbox, environment and limits.
    shell: ShellExecTool,
}

impl CodeRunTool {
    /// Programs run as `shell` runs its commands.
    pub fn new(shell: ShellExecTool) -> CodeRunTool {
        CodeRunTool { shell }
    }
}

/// The start of the line `final_answer` prints (record separators around a name no program
/// prints by chance); its line breaks travel as unit separators.
const ANSWER_MARK: &str = "\u{1e}PLANWRIGHT_FINAL_ANSWER\u{1e}";

/// The start of the line a call of the runtime prints when it has no result left: the call
/// follows, as JSON (`{"tool": …, "arguments": …}`).
const CALL_MARK: &str = "\u{1e}PLANWRIGHT_CALL\u{1e}";

/// Defines `final_answer` for bash, on the program's first line (line numbers kept).
const BASH_PRELUDE: &str = "exec </dev/null; final_answer() { printf '\\036PLANWRIGHT_FINAL_ANSWER\\036%s\\n' \"$(printf '%s' \"$*\" | tr '\\n' '\\037')\"; exit 0; }; ";

/// Runs the Python program read from stdin as `<program>`, with `final_answer` defined, the
/// standard modules a small program uses already imported (a forgotten `import json` is the
/// commonest error of a small model), `__file__` naming a file of the workspace (programs
/// find their folder with `os.path.dirname(__file__)`, which otherwise stops them with a
/// `NameError`), and stdin emptied (no single quote: it travels in one for bash).
///
/// Two builtins behave as an agent's program needs (docs/code-actions.md, "What a program
/// can rely on"): `open` for writing creates the missing folders of its path, as
/// `file_write` does (a program that wrote `report/sum.txt` before making `report/` stopped
/// with `FileNotFoundError`), and reading a missing file says that the workspace has none
/// by that name and that a result is written, not read (on an empty workspace the embedded
/// model read the file the task asked it to create, and failed the same way every retry);
/// `input` and the tools the runtime names as functions (the first line the runner reads, a
/// JSON object: `functions`, and the `results` of the calls made so far, in order) return
/// those results and, past them, stop the program at once with the call marked on stdout
/// (docs/code-actions.md, "Tools in a program"): nothing after it runs, not even a
/// `finally`, so a program that changed no file before its call can run again from the
/// start with the result. A tool's function can also be imported by its name, and any
/// attribute of what is imported is the function (a small model imported a tool's function
/// as a module and called an attribute of it).
const PYTHON_RUNNER: &str = "import sys, builtins, io, os, json, types
def final_answer(answer=\"\"):
    sys.stdout.write(\"\\x1ePLANWRIGHT_FINAL_ANSWER\\x1e\" + str(answer).replace(\"\\n\", \"\\x1f\") + \"\\n\")
    sys.stdout.flush()
    raise SystemExit(0)
builtins.final_answer = final_answer
head = json.loads(sys.stdin.readline() or \"{}\")
results = head.get(\"results\", [])
source = sys.stdin.read()
sys.stdin = open(\"/dev/null\")
sys.argv = [\"program\"]
plain_open = io.open
def open_making_folders(file, mode=\"r\", *args, **kwargs):
    writes = any(c in mode for c in \"wax+\")
    if isinstance(file, (str, bytes, os.PathLike)) and writes:
        folder = os.path.dirname(os.fsdecode(file))
        if folder and not os.path.isdir(folder):
            try:
                os.makedirs(folder, exist_ok=True)
            except OSError:
                pass
    try:
        return plain_open(file, mode, *args, **kwargs)
    except FileNotFoundError as e:
        if writes:
            raise
        raise FileNotFoundError(e.errno, \"No such file (the workspace has none by that name: a file the task asks for is written by the program, not read)\", e.filename) from None
builtins.open = open_making_folders
io.open = open_making_folders
def runtime_call(tool, arguments):
    if results:
        result = results.pop(0)
        if not result.get(\"ok\"):
            raise RuntimeError(tool + \": \" + result.get(\"value\", \"\"))
        return result.get(\"value\", \"\")
    sys.stdout.write(\"\\x1ePLANWRIGHT_CALL\\x1e\" + json.dumps({\"tool\": tool, \"arguments\": arguments}, default=str) + \"\\n\")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
def tool_function(name, params):
    def call(*args, **kwargs):
        arguments = dict(zip(params, args))
        arguments.update(kwargs)
        return runtime_call(name, arguments)
    call.__name__ = name
    return call
class ToolModule:
    def __init__(self, call):
        self.call = call
    def __call__(self, *args, **kwargs):
        return self.call(*args, **kwargs)
    def __getattr__(self, name):
        if name.startswith(\"__\"):
            raise AttributeError(name)
        return self.call
for function in head.get(\"functions\", []):
    call = tool_function(function[\"name\"], function[\"params\"])
    setattr(builtins, function[\"name\"], call)
    sys.modules[function[\"name\"]] = ToolModule(call)
def answered_input(prompt=\"\"):
    answer = runtime_call(head.get(\"ask\", \"\"), {\"question\": str(prompt)})
    sys.stdout.write(str(prompt) + answer + \"\\n\")
    return answer
builtins.input = answered_input
program = types.ModuleType(\"__main__\")
sys.modules[\"__main__\"] = program
scope = program.__dict__
scope.update({\"__builtins__\": builtins, \"__file__\": os.path.join(os.getcwd(), \"program.py\")})
for name in (\"os\", \"re\", \"csv\", \"json\", \"math\", \"statistics\", \"collections\", \"datetime\", \"itertools\", \"pathlib\"):
    try:
        scope[name] = __import__(name)
    except ImportError:
        pass
exec(compile(source, \"<program>\", \"exec\"), scope)";

/// The bash script that runs `args`: bash code after its prelude, on its first line; Python
/// fed to the runner by a here-document whose end marker the program does not hold.
fn script(args: &CodeArgs) -> String {
    match args.language {
        CodeLanguage::Bash => format!("{BASH_PRELUDE}{}", bash_calls(&args.code)),
        CodeLanguage::Python => {
            let mut marker = String::from("PLANWRIGHT_PROGRAM_END");
            while args.code.lines().any(|l| l.trim() == marker) {
                marker.push('_');
            }
            let code = args.code.strip_suffix('\n').unwrap_or(&args.code);
            // One line of JSON (it escapes line breaks), never the marker: it starts `{`.
            let head = json!({
                "ask": ASK_USER,
                "functions": args.functions,
                "results": args.results,
            });
            format!("exec python3 -c '{PYTHON_RUNNER}' <<'{marker}'\n{head}\n{code}\n{marker}\n")
        }
    }
}

/// `code` with each line `final_answer(ARGS)` (the Python form, which small models also
/// write in bash, where it is a syntax error) written as the bash call `final_answer ARGS`.
fn bash_calls(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    for line in code.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let indent = &body[..body.len() - body.trim_start().len()];
        let call = body
            .trim()
            .strip_prefix("final_answer(")
            .and_then(|rest| rest.strip_suffix(')'));
        match call {
            Some(args) => {
                out.push_str(indent);
                out.push_str("final_answer ");
                out.push_str(args);
                out.push_str(&line[body.len()..]);
            }
            None => out.push_str(line),
        }
    }
    out
}

/// The final answer in `stdout` (its last marked line), and `text` without that line.
fn take_final_answer(stdout: &str, text: &str) -> (Option<String>, String) {
    take_marked(ANSWER_MARK, stdout, text)
}

/// What the last line of `stdout` starting with `mark` holds (its line breaks travel as
/// unit separators), and `text` without that line.
fn take_marked(mark: &str, stdout: &str, text: &str) -> (Option<String>, String) {
    let Some(line) = stdout.lines().rev().find(|l| l.starts_with(mark)) else {
        return (None, text.to_string());
    };
    let held = line[mark.len()..].replace('\u{1f}', "\n");
    let kept: Vec<&str> = text.lines().filter(|l| *l != line).collect();
    (Some(held), kept.join("\n"))
}

/// Whether the program's only statement is `final_answer` with a literal: text typed into
/// the program, not computed by it (a small model finishes that way instead of acting, or
/// to give up where giving up was not offered). An f-string, a `$` in bash or any other
/// statement is work.
fn hands_over_a_literal(args: &CodeArgs) -> bool {
    let mut statements = args
        .code
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'));
    let (Some(only), None) = (statements.next(), statements.next()) else {
        return false;
    };
    let Some(rest) = only.strip_prefix(code::FINAL_ANSWER) else {
        return false;
    };
    let rest = rest.trim();
    let in_parentheses = rest
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .map(str::trim);
    let argument = match args.language {
        CodeLanguage::Python => in_parentheses,
        CodeLanguage::Bash => in_parentheses
            .or(Some(rest))
            .filter(|a| !a.contains('$') && !a.contains('`')),
    };
    argument.is_some_and(|a| {
        let quoted = |q: char| a.len() >= 2 && a.starts_with(q) && a.ends_with(q);
        quoted('"') || quoted('\'')
    })
}

/// The module a Python program failed to import, from its stderr's last
/// `ModuleNotFoundError: No module named 'x'` (the top-level package: `pandas` for
/// `pandas.io`).
fn missing_module(stderr: &str) -> Option<String> {
    let line = stderr.lines().rev().find_map(|l| {
        l.trim()
            .strip_prefix("ModuleNotFoundError: No module named ")
    })?;
    let name = line.trim().trim_matches(['\'', '"']);
    let top = name.split('.').next()?;
    let valid = !top.is_empty() && top.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then(|| top.to_string())
}

/// The name of a `NameError` in a program's error output (`NameError: name 'x' is not
/// defined`), when it is an identifier.
fn undefined_name(stderr: &str) -> Option<String> {
    let line = stderr
        .lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix("NameError: name "))?;
    let name = line.strip_prefix('\'')?.split('\'').next()?;
    let valid = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then(|| name.to_string())
}

/// The workspace files named like `name` (their name without its extension), which a
/// program that used `name` undefined took for data given to it.
fn files_named(snapshot: &Snapshot, name: &str) -> Vec<String> {
    snapshot
        .keys()
        .filter(|path| {
            Path::new(path.as_str())
                .file_stem()
                .is_some_and(|stem| stem.to_string_lossy().eq_ignore_ascii_case(name))
        })
        .cloned()
        .collect()
}

/// The workspace's files: path → (size, modification time).
type Snapshot = BTreeMap<String, (u64, u64)>;

fn snapshot(root: &Path) -> Option<Snapshot> {
    let listing = workspace_files::list_files(root, WATCHED).ok()?;
    Some(
        listing
            .files
            .into_iter()
            .map(|f| (f.path, (f.size, f.modified_ns)))
            .collect(),
    )
}

/// What changed between two snapshots: created, changed, deleted.
fn changes(before: &Snapshot, after: &Snapshot) -> (Vec<String>, Vec<String>, Vec<String>) {
    let mut created = Vec::new();
    let mut changed = Vec::new();
    for (path, facts) in after {
        match before.get(path) {
            None => created.push(path.clone()),
            Some(old) if old != facts => changed.push(path.clone()),
            Some(_) => {}
        }
    }
    let deleted = before
        .keys()
        .filter(|p| !after.contains_key(*p))
        .cloned()
        .collect();
    (created, changed, deleted)
}

/// `label: a, b (and N more)` on its own line, when `paths` is not empty.
fn named(out: &mut String, label: &str, paths: &[String], sizes: &Snapshot) {
    if paths.is_empty() {
        return;
    }
    let shown: Vec<String> = paths
        .iter()
        .take(NAMED)
        .map(|p| match sizes.get(p) {
            Some((size, _)) => format!("{p} ({size} bytes)"),
            None => p.clone(),
        })
        .collect();
    let _ = write!(out, "\n{label}: {}", shown.join(", "));
    if paths.len() > NAMED {
        let _ = write!(out, " and {} more", paths.len() - NAMED);
    }
}

#[async_trait]
impl Tool for CodeRunTool {
    fn name(&self) -> &str {
        CODE_RUN
    }
    fn family(&self) -> ToolFamily {
        ToolFamily::Code
    }
    fn effect(&self) -> ToolEffect {
        ToolEffect::Acts
    }
    fn description(&self) -> &str {
        code::description()
    }
    fn parameters(&self) -> Value {
        code::parameters()
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: CodeArgs = args::parse(CODE_RUN, args)?;
        let statements = args
            .code
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .count();
        if statements == 0 {
            return Err(ToolError::InvalidArguments(format!(
                "{CODE_RUN}: the program is empty (comments only); write the whole program"
            )));
        }
        if hands_over_a_literal(&args) {
            return Err(ToolError::InvalidArguments(format!(
                "{CODE_RUN}: this program does no work: it only hands over text written into \
                 it. Write the program that does the task (read and write the files, compute \
                 the result); a result read from another tool is given by finishing the step"
            )));
        }
        if args.code.len() > MAX_CODE_BYTES {
            return Err(ToolError::InvalidArguments(format!(
                "{CODE_RUN}: the program has {} bytes, more than {MAX_CODE_BYTES}; write a \
                 shorter one (read data from files instead of writing it into the program)",
                args.code.len()
            )));
        }
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::Failed(
                "the run was cancelled; the program was not started".to_string(),
            ));
        }
        let cwd = workspace::canonical_workspace(&ctx.workspace)?;
        let launch = self.shell.launch().await?;
        let before = {
            let cwd = cwd.clone();
            tokio::task::spawn_blocking(move || snapshot(&cwd))
                .await
                .ok()
                .flatten()
        };
        let script = script(&args);
        let timeout = self.shell.default_timeout();
        tracing::info!(
            language = args.language.name(),
            bytes = args.code.len(),
            timeout_s = timeout.as_secs_f64(),
            "code_run"
        );
        let spec = CommandSpec {
            command: &script,
            cwd: &cwd,
            timeout,
            max_output_bytes: self.shell.max_output_bytes(),
            launch: &launch,
            env: self.shell.env(),
        };
        let proc = process::spawn(spec, ctx.cancel.clone())
            .map_err(|e| ToolError::Failed(format!("could not run the program: {e}")))?;
        proc.ended().await;
        let finished = process::finish(&proc).await;
        if matches!(finished.ending, Ending::Cancelled) {
            return Err(ToolError::Failed(
                "the program was cancelled; its process group was killed".to_string(),
            ));
        }
        let stdout = finished.stdout.render();
        let mut out = report(&finished, timeout);
        if let Some(module) = missing_module(&finished.stderr.render()) {
            let _ = write!(
                out.content,
                "\n{module} is not installed here, and a program cannot install it: write the \
                 program with Python's standard library (csv, json, re, statistics, ...)"
            );
            // The tools it is given do what no installed module can (a page, a server's
            // data): named again where the program went looking for a module.
            let given: Vec<String> = args.functions.iter().map(|f| f.signature()).collect();
            if given.is_empty() {
                out.content.push('.');
            } else {
                let _ = write!(
                    out.content,
                    " and the functions it is given, which return the tools' output as text: {}.",
                    given.join(", ")
                );
            }
        }
        // A name used as if the program were given a file's data (smolagents' agents are):
        // nothing is given; the file is read.
        if let (Some(name), Some(before)) = (undefined_name(&finished.stderr.render()), &before) {
            let files = files_named(before, &name);
            if let Some(first) = files.first() {
                let _ = write!(
                    out.content,
                    "\n{name} is not defined: a program is given no data and no variables. The \
                     workspace has {}: the program opens and reads it itself (e.g. \
                     open({first:?})).",
                    files.join(", ")
                );
            }
        }
        let (final_answer, content) = take_final_answer(&stdout, &out.content);
        let (called, content) = take_marked(CALL_MARK, &stdout, &content);
        out.content = content;
        let stdout = take_final_answer(&stdout, &stdout).1;
        let stdout = take_marked(CALL_MARK, &stdout, &stdout).1;
        let called = called.and_then(|c| serde_json::from_str::<ProgramCall>(&c).ok());
        let after = {
            let cwd = cwd.clone();
            tokio::task::spawn_blocking(move || snapshot(&cwd))
                .await
                .ok()
                .flatten()
        };
        // Whether the program changed no file (unknown without both snapshots).
        let mut untouched = false;
        if let (Some(before), Some(after)) = (before, after) {
            let (created, changed, deleted) = changes(&before, &after);
            named(&mut out.content, "files created", &created, &after);
            named(&mut out.content, "files changed", &changed, &after);
            named(&mut out.content, "files deleted", &deleted, &before);
            untouched = created.is_empty() && changed.is_empty() && deleted.is_empty();
            if untouched {
                out.content
                    .push_str("\nno file was created, changed or deleted");
            }
            out.attachments = created.into_iter().chain(changed).collect();
        }
        if let Some(called) = called {
            // Stopped at a call of the runtime: it makes the call and runs the program again
            // from the start, which only a program that has changed nothing yet can be.
            out.is_error = true;
            let what = if called.tool == ASK_USER {
                "input()".to_string()
            } else {
                format!("{}()", called.tool)
            };
            if untouched {
                let _ = write!(out.content, "\nthe program stopped at {what}");
                out.program_call = Some(called);
            } else {
                let _ = write!(
                    out.content,
                    "\nthe program stopped at {what} after it had changed files, so it cannot \
                     be run again with the result: call it before the program writes anything"
                );
            }
        }
        out.content = workspace_relative(&out.content, &[&cwd, &ctx.workspace]);
        out.stdout = Some(stdout);
        out.final_answer = final_answer.filter(|_| !out.is_error);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_undefined_name_like_a_files_is_told_to_read_it() {
        let stderr = "Traceback (most recent call last):\n  File \"<program>\", line 5\nNameError: name 'shelf' is not defined. Did you mean: 'help'?\n";
        assert_eq!(undefined_name(stderr).as_deref(), Some("shelf"));
        assert_eq!(undefined_name("NameError: name 'a b' is not defined"), None);
        assert_eq!(undefined_name("ValueError: x"), None);
        let snapshot: Snapshot = [
            ("shelf.csv".to_string(), (1, 1)),
            ("data/Shelf.json".to_string(), (1, 1)),
            ("shelves.csv".to_string(), (1, 1)),
        ]
        .into_iter()
        .collect();
        assert_eq!(
            files_named(&snapshot, "shelf"),
            ["data/Shelf.json", "shelf.csv"]
        );
        assert!(files_named(&snapshot, "pandas").is_empty());
    }

    #[test]
    fn a_program_that_only_hands_over_a_literal_does_no_work() {
        let literal = |language, text: &str| hands_over_a_literal(&code(language, text));
        assert!(literal(
            CodeLanguage::Python,
            "final_answer(\"It is done.\")\n"
        ));
        assert!(literal(CodeLanguage::Python, "# done\nfinal_answer('x')"));
        assert!(literal(CodeLanguage::Bash, "final_answer \"done\""));
        assert!(literal(CodeLanguage::Bash, "final_answer(\"done\")"));
        assert!(!literal(CodeLanguage::Python, "final_answer(f\"{1 + 1}\")"));
        assert!(!literal(
            CodeLanguage::Python,
            "final_answer(len(open('a').read()))"
        ));
        assert!(!literal(CodeLanguage::Python, "x = 1\nfinal_answer('x')"));
        assert!(!literal(
            CodeLanguage::Bash,
            "final_answer \"$(cat a.txt)\""
        ));
        assert!(!literal(CodeLanguage::Bash, "echo hi"));
    }

    #[test]
    fn a_missing_module_is_read_off_the_traceback() {
        let stderr = "Traceback (most recent call last):\n  File \"<program>\", line 1\n\
                      ModuleNotFoundError: No module named 'pandas.io'\n";
        assert_eq!(missing_module(stderr).as_deref(), Some("pandas"));
        assert_eq!(missing_module("NameError: name 'x' is not defined"), None);
        assert_eq!(
            missing_module("ModuleNotFoundError: No module named '$(rm)'"),
            None
        );
    }

    fn code(language: CodeLanguage, text: &str) -> CodeArgs {
        CodeArgs {
            language,
            code: text.into(),
            changes: Vec::new(),
            results: Vec::new(),
            functions: Vec::new(),
        }
    }

    #[test]
    fn python_goes_through_a_here_document_whose_marker_it_does_not_hold() {
        let s = script(&code(CodeLanguage::Python, "print(1)\n"));
        assert!(
            s.ends_with(
                "' <<'PLANWRIGHT_PROGRAM_END'\n\
                 {\"ask\":\"message_ask_user\",\"functions\":[],\"results\":[]}\n\
                 print(1)\nPLANWRIGHT_PROGRAM_END\n"
            ),
            "{s}"
        );
        assert!(
            !PYTHON_RUNNER.contains('\''),
            "the runner travels in single quotes"
        );
        let s = script(&code(
            CodeLanguage::Python,
            "x = '''\nPLANWRIGHT_PROGRAM_END\n'''",
        ));
        assert!(s.contains("<<'PLANWRIGHT_PROGRAM_END_'"), "{s}");
        let s = script(&code(CodeLanguage::Bash, "echo hi"));
        assert!(s.starts_with("exec </dev/null; final_answer() {"), "{s}");
        assert!(s.ends_with("; echo hi"), "{s}");
    }

    #[test]
    fn the_python_form_of_final_answer_is_a_bash_call_in_bash() {
        let code = "echo x > a\n  final_answer(\"done $(cat a)\")\nfinal_answer \"b\"\n";
        assert_eq!(
            bash_calls(code),
            "echo x > a\n  final_answer \"done $(cat a)\"\nfinal_answer \"b\"\n"
        );
        assert_eq!(bash_calls("f(final_answer(1))"), "f(final_answer(1))");
    }

    #[test]
    fn the_final_answer_line_is_taken_out() {
        let out = format!("a\n{ANSWER_MARK}sum is{}9\n", '\u{1f}');
        let (answer, rest) = take_final_answer(&out, &format!("exit code: 0\n{out}"));
        assert_eq!(answer.as_deref(), Some("sum is\n9"));
        assert_eq!(rest, "exit code: 0\na");
        assert_eq!(take_final_answer("x", "y"), (None, "y".to_string()));
    }

    #[test]
    fn snapshots_tell_created_changed_and_deleted_files() {
        let before: Snapshot = [("a".into(), (1, 1)), ("b".into(), (1, 1))].into();
        let after: Snapshot = [("a".into(), (2, 5)), ("c".into(), (1, 1))].into();
        assert_eq!(
            changes(&before, &after),
            (vec!["c".into()], vec!["a".into()], vec!["b".into()])
        );
    }
}
