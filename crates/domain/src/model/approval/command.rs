//! What a shell command line does, as the approval rules judge it (docs/approvals.md,
//! "What a shell rule sees"): its simple commands with normalised program names, wrappers
//! looked through (`sudo`, `env`, `nohup`, `timeout`, `nice`, `xargs`, `find -exec`,
//! `bash -c`, `eval`, …), the files it redirects to, the scripts it runs (judged by their
//! content when the run wrote them with `file_write`), and what could not be understood.

use super::paths::canonical;
use super::shell::{self, Mode, RedirectKind, SimpleCommand, Word};
use super::written::{Written, WrittenFiles};

/// One command that runs: `rm -rf x` (program `rm`, arguments `-rf`, `x`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Command {
    /// The program's name (`/bin/rm`, `\rm`, `command rm`: `rm`), or a workspace script as
    /// `./path` (canonical).
    pub program: String,
    pub args: Vec<String>,
    /// An argument is only known when it runs (`$X`, `$(…)`, arguments `xargs` adds).
    pub dynamic: bool,
    /// A wrapper looked through (`nohup`, `timeout`, `env`, `bash -c`…): deny rules see
    /// it, allow rules need not allow it (they judge what it runs).
    pub looked_through: bool,
}

/// A path a command reads or writes through a redirection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PathRef {
    /// Canonical, workspace-relative (or absolute outside the workspace).
    Known(String),
    /// Only known when it runs (`> $OUT`), or relative to an unknown folder.
    Unknown(String),
}

/// One thing a command line does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Part {
    Command(Command),
    Write(PathRef),
    Read(PathRef),
    /// Code runs that the rules cannot see (a script of unknown content, `python3 -c`);
    /// the reason in words. The command that runs it is a [`Part::Command`] of its own.
    Opaque(String),
    /// Runs a file this run changed by means whose result is unknown: always asked when
    /// rules are at stake.
    Unchecked(String),
    /// An operand that may name a file (canonical): `write` when the program writes it
    /// (`cp a b`: `b`; `rm x`, `tee x`, `touch x`). Only deny rules judge these: a file
    /// rule refuses a command naming a path it covers.
    Touches {
        path: String,
        write: bool,
    },
}

/// A command line read for the rules.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Analysis {
    pub parts: Vec<Part>,
    /// What could not be understood (never allowed by a rule; asked when a deny rule
    /// could apply).
    pub unknown: Vec<String>,
}

/// What the analysis knows of the run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scene<'a> {
    /// The run's workspace folder (absolute), if known.
    pub workspace: Option<&'a str>,
    pub written: &'a WrittenFiles,
}

const MAX_DEPTH: usize = 8;

/// Reads a command line (`shell_exec`'s `command`, `shell_write`'s `input`).
pub(crate) fn analyze(text: &str, scene: Scene<'_>) -> Analysis {
    let mut analyzer = Analyzer {
        scene,
        out: Analysis::default(),
        cwd: Some(String::new()),
        changed_here: Vec::new(),
        depth: 0,
    };
    analyzer.script(text);
    analyzer.out
}

/// Reads a rule pattern into its one command (wildcards kept); an error says why it is not
/// one plain command.
pub(crate) fn pattern_command(text: &str) -> Result<Command, &'static str> {
    let script = shell::parse(text, Mode::Pattern);
    if !script.unknown.is_empty() {
        return Err("the command pattern is not a plain command (quotes, `(`, heredoc…)");
    }
    let mut commands = script.commands.into_iter().filter(|c| !c.words.is_empty());
    let Some(first) = commands.next() else {
        return Err("the command pattern has no command");
    };
    if commands.next().is_some() {
        return Err(
            "the command pattern holds several commands (`;`, `&&`, `|`…): write one rule per \
             command",
        );
    }
    if !first.redirects.is_empty() || !first.assignments.is_empty() {
        return Err("the command pattern holds a redirection or an assignment");
    }
    let mut words = first.words.iter().map(|w| w.text.clone());
    let program = words.next().unwrap_or_default();
    Ok(Command {
        program: normalize_pattern_program(&program),
        args: words.collect(),
        dynamic: false,
        looked_through: false,
    })
}

/// `/bin/rm` → `rm`; a relative path to a script → `./path`; wildcards kept.
fn normalize_pattern_program(program: &str) -> String {
    if program.contains('*') || program.contains('?') {
        return program.to_string();
    }
    match program_kind(program, "", None) {
        Program::Name(name) => name,
        Program::Script(path) => format!("./{path}"),
    }
}

enum Program {
    Name(String),
    /// A file of the workspace (canonical path).
    Script(String),
}

/// What `text` in a command's first position names.
fn program_kind(text: &str, cwd: &str, workspace: Option<&str>) -> Program {
    if !text.contains('/') {
        return Program::Name(text.to_string());
    }
    let path = canonical(text, cwd, workspace);
    if text.starts_with('/') && path.starts_with('/') {
        let base = text.rsplit('/').next().unwrap_or(text);
        return Program::Name(base.to_string());
    }
    Program::Script(path)
}

/// Shells: `-c STRING` runs the string; a file operand runs the file; neither reads
/// commands from the input.
const SHELLS: [&str; 8] = ["sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "rbash"];

/// Interpreters of other languages: a file operand or inline code runs what the rules
/// cannot read.
fn is_interpreter(program: &str) -> bool {
    let base = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    matches!(
        base,
        "python"
            | "pypy"
            | "node"
            | "nodejs"
            | "perl"
            | "ruby"
            | "php"
            | "lua"
            | "Rscript"
            | "deno"
            | "bun"
            | "tclsh"
            | "awk"
            | "gawk"
            | "mawk"
    )
}

/// Variables that change which program runs or what it loads: set before a command, they
/// make it one the rules cannot judge.
const RISKY_VARIABLES: [&str; 7] = [
    "PATH",
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "BASH_ENV",
    "ENV",
    "IFS",
    "PROMPT_COMMAND",
];

/// Programs that only change the shell's own state; a rule need not allow them.
pub(crate) const SHELL_STATE: [&str; 7] = ["cd", "pushd", "popd", "true", "false", ":", "set"];

struct Analyzer<'a> {
    scene: Scene<'a>,
    out: Analysis,
    /// The current folder (workspace-relative); `None` once a `cd` went somewhere unknown.
    cwd: Option<String>,
    /// Files this command line writes through redirections, before they are run.
    changed_here: Vec<String>,
    depth: usize,
}

/// How a script file is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Runner {
    /// By a shell (`bash x`, `source x`).
    Shell,
    /// Directly (`./x`): its `#!` line says by what.
    Direct,
    /// By an interpreter of another language (`python3 x.py`).
    Other,
}

impl Analyzer<'_> {
    fn script(&mut self, text: &str) {
        if self.depth >= MAX_DEPTH {
            self.out
                .unknown
                .push("scripts nested too deeply".to_string());
            return;
        }
        self.depth += 1;
        let parsed = shell::parse(text, Mode::Command);
        for cmd in &parsed.commands {
            self.simple(cmd);
        }
        self.out.unknown.extend(parsed.unknown);
        self.depth -= 1;
    }

    fn cwd(&self) -> &str {
        self.cwd.as_deref().unwrap_or("")
    }

    fn path(&self, word: &Word) -> PathRef {
        match &self.cwd {
            Some(cwd) if !word.dynamic && !word.text.starts_with('~') => {
                PathRef::Known(canonical(&word.text, cwd, self.scene.workspace))
            }
            _ => PathRef::Unknown(word.text.clone()),
        }
    }

    fn push(&mut self, program: String, args: &[Word], dynamic: bool, looked_through: bool) {
        if !looked_through {
            self.touches(&program, args);
        }
        self.out.parts.push(Part::Command(Command {
            program,
            args: args.iter().map(|w| w.text.clone()).collect(),
            dynamic: dynamic || args.iter().any(|w| w.dynamic),
            looked_through,
        }));
    }

    /// The operands of a command that may be paths, as [`Part::Touches`].
    fn touches(&mut self, program: &str, args: &[Word]) {
        let Some(cwd) = self.cwd.clone() else { return };
        let mut operands = Vec::new();
        let mut only_operands = false;
        for arg in args {
            let text = arg.text.as_str();
            if !only_operands && text == "--" {
                only_operands = true;
                continue;
            }
            if arg.dynamic || text.is_empty() || text.contains("://") {
                continue;
            }
            if !only_operands && text.starts_with('-') {
                continue;
            }
            let (text, write) = match (program, text.split_once('=')) {
                ("dd", Some(("of", file))) => (file, Some(true)),
                ("dd", Some((_, file))) => (file, Some(false)),
                _ => (text, None),
            };
            operands.push((canonical(text, &cwd, self.scene.workspace), write));
        }
        let count = operands.len();
        for (i, (path, write)) in operands.into_iter().enumerate() {
            let write = write.unwrap_or(match program {
                "cp" | "mv" | "install" | "ln" | "rsync" | "scp" => i + 1 == count && count > 1,
                "tee" | "touch" | "rm" | "rmdir" | "mkdir" | "truncate" | "shred" | "unlink"
                | "chmod" | "chown" => true,
                _ => false,
            });
            self.out.parts.push(Part::Touches { path, write });
        }
    }

    fn opaque(&mut self, why: String) {
        self.out.parts.push(Part::Opaque(why));
    }

    fn simple(&mut self, cmd: &SimpleCommand) {
        for redirect in &cmd.redirects {
            let target = &redirect.target;
            if matches!(
                target.text.as_str(),
                "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty" | "/dev/stdin"
            ) {
                continue;
            }
            let path = self.path(target);
            if redirect.kind == RedirectKind::Write {
                if let PathRef::Known(p) = &path {
                    self.changed_here.push(p.clone());
                }
                self.out.parts.push(Part::Write(path));
            } else {
                self.out.parts.push(Part::Read(path));
            }
        }
        self.assignments(cmd.assignments.iter().map(|(name, _)| name.as_str()));
        self.words(&cmd.words, false);
    }

    fn assignments<'n>(&mut self, names: impl Iterator<Item = &'n str>) {
        for name in names {
            if RISKY_VARIABLES.contains(&name) {
                self.out.unknown.push(format!(
                    "`{name}=` changes which program runs or what it loads"
                ));
            }
        }
    }

    /// One command's words (after its assignments); `dynamic`: more arguments come when it
    /// runs (`xargs`).
    fn words(&mut self, words: &[Word], dynamic: bool) {
        let Some(first) = words.first() else { return };
        if first.dynamic || first.glob {
            self.out.unknown.push(format!(
                "the program `{}` is only known when the command runs",
                first.text
            ));
            return;
        }
        let args = &words[1..];
        let name = match program_kind(&first.text, self.cwd(), self.scene.workspace) {
            Program::Script(path) => {
                self.push(format!("./{path}"), args, dynamic, false);
                self.run_script(first, Runner::Direct);
                return;
            }
            Program::Name(name) => name,
        };
        match name.as_str() {
            "sudo" | "doas" | "run0" => {
                self.push(name.clone(), args, dynamic, false);
                let rest = skip_options(args, "ugCDhprtTUc", &["--user", "--group"]);
                self.words(rest, dynamic);
            }
            "env" => {
                self.push(name.clone(), args, dynamic, true);
                self.env(args, dynamic);
            }
            "nohup" | "time" | "exec" | "builtin" | "setsid" | "nice" | "ionice" | "stdbuf"
            | "chronic" | "unbuffer" => {
                self.push(name.clone(), args, dynamic, true);
                let value_letters = match name.as_str() {
                    "time" => "fo",
                    "exec" => "a",
                    "nice" => "n",
                    "ionice" => "cn",
                    "stdbuf" => "ioe",
                    _ => "",
                };
                let rest = skip_options(
                    args,
                    value_letters,
                    &["--adjustment", "--format", "--output", "--class"],
                );
                self.words(rest, dynamic);
            }
            "command" => {
                if args.iter().any(|a| a.text == "-v" || a.text == "-V") {
                    self.push(name.clone(), args, dynamic, false);
                } else {
                    self.push(name.clone(), args, dynamic, true);
                    self.words(skip_options(args, "", &[]), dynamic);
                }
            }
            "timeout" => {
                self.push(name.clone(), args, dynamic, true);
                let rest = skip_options(args, "sk", &["--signal", "--kill-after"]);
                self.words(rest.get(1..).unwrap_or_default(), dynamic);
            }
            "xargs" => {
                self.push(name.clone(), args, dynamic, false);
                let rest = skip_options(
                    args,
                    "adEILnPs",
                    &["--arg-file", "--delimiter", "--max-args", "--max-procs"],
                );
                self.words(rest, true);
            }
            "find" => {
                self.push(name.clone(), args, dynamic, false);
                self.find_exec(args);
            }
            "eval" | "watch" => {
                self.push(name.clone(), args, dynamic, true);
                let rest = if name == "watch" {
                    skip_options(args, "nqd", &["--interval"])
                } else {
                    args
                };
                if rest.iter().any(|w| w.dynamic) {
                    self.out
                        .unknown
                        .push(format!("`{name}` of text only known when it runs"));
                    return;
                }
                let text: Vec<&str> = rest.iter().map(|w| w.text.as_str()).collect();
                self.script(&text.join(" "));
            }
            "source" | "." => {
                self.push(name.clone(), args, dynamic, false);
                if let Some(file) = args.first() {
                    self.run_script(file, Runner::Shell);
                }
            }
            "cd" | "pushd" | "popd" => {
                self.push(name.clone(), args, dynamic, false);
                let target = skip_options(args, "", &[]).first();
                self.cwd = match (name.as_str(), target, &self.cwd) {
                    (_, Some(t), Some(cwd))
                        if !t.dynamic && t.text != "-" && !t.text.starts_with('~') =>
                    {
                        Some(canonical(&t.text, cwd, self.scene.workspace))
                    }
                    _ => None,
                };
            }
            shell if SHELLS.contains(&shell) => self.shell(name.clone(), args, dynamic),
            "awk" | "gawk" | "mawk" | "nawk" => {
                self.push(name.clone(), args, dynamic, false);
                self.awk(args);
            }
            other if is_interpreter(other) => {
                self.push(name.clone(), args, dynamic, false);
                self.interpreter(&name, args);
            }
            _ => self.push(name, args, dynamic, false),
        }
    }

    fn env(&mut self, args: &[Word], dynamic: bool) {
        let mut i = 0;
        while let Some(arg) = args.get(i) {
            let text = arg.text.as_str();
            match text {
                "-i" | "-" | "-0" | "--ignore-environment" | "--null" | "-v" | "--debug" => i += 1,
                "-u" | "--unset" => i += 2,
                "-C" | "--chdir" => {
                    self.cwd = None;
                    i += 2;
                }
                "-S" | "--split-string" => {
                    let rest: Vec<&str> = args[i + 1..].iter().map(|w| w.text.as_str()).collect();
                    if args[i + 1..].iter().any(|w| w.dynamic) {
                        self.out
                            .unknown
                            .push("`env -S` of text only known when it runs".into());
                    } else {
                        self.script(&rest.join(" "));
                    }
                    return;
                }
                "--" => {
                    i += 1;
                    break;
                }
                _ if text.starts_with("--") => i += 1,
                _ if text.starts_with('-') && text.len() > 1 => {
                    // A cluster such as `-iu NAME`; `-S` inside one is not worked out.
                    if text.contains('S') {
                        self.out
                            .unknown
                            .push("`env -S` in an option cluster".into());
                        return;
                    }
                    if text.contains('C') {
                        self.cwd = None;
                    }
                    i += if text.ends_with('u') || text.ends_with('C') {
                        2
                    } else {
                        1
                    };
                }
                _ => {
                    if let Some((name, _)) = text.split_once('=') {
                        if !name.is_empty()
                            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                        {
                            self.assignments(std::iter::once(name));
                            i += 1;
                            continue;
                        }
                    }
                    break;
                }
            }
        }
        self.words(args.get(i..).unwrap_or_default(), dynamic);
    }

    /// `find … -exec CMD … ;` (also `-execdir`, `-ok`, `-okdir`, ending in `;` or `+`).
    fn find_exec(&mut self, args: &[Word]) {
        let mut i = 0;
        while i < args.len() {
            if matches!(
                args[i].text.as_str(),
                "-exec" | "-execdir" | "-ok" | "-okdir"
            ) {
                let start = i + 1;
                let mut end = start;
                while end < args.len() && !matches!(args[end].text.as_str(), ";" | "+") {
                    end += 1;
                }
                self.words(&args[start..end], true);
                i = end + 1;
            } else {
                i += 1;
            }
        }
    }

    fn shell(&mut self, name: String, args: &[Word], dynamic: bool) {
        let mut runs_string = false;
        let mut reads_input = false;
        let mut i = 0;
        while let Some(arg) = args.get(i) {
            let text = arg.text.as_str();
            if text == "--" {
                i += 1;
                break;
            }
            if text == "-o" || text == "+o" || text == "--rcfile" || text == "--init-file" {
                i += 2;
                continue;
            }
            if text.starts_with("--") {
                i += 1;
                continue;
            }
            if (text.starts_with('-') || text.starts_with('+')) && text.len() > 1 {
                runs_string |= text.contains('c');
                reads_input |= text.contains('s');
                i += 1;
                continue;
            }
            break;
        }
        let operand = args.get(i);
        if runs_string {
            self.push(name, args, dynamic, true);
            match operand {
                Some(w) if !w.dynamic => self.script(&w.text),
                Some(_) => self
                    .out
                    .unknown
                    .push("`-c` of a command only known when it runs".to_string()),
                None => self.out.unknown.push("`-c` without a command".to_string()),
            }
            return;
        }
        self.push(name.clone(), args, dynamic, false);
        match operand {
            Some(file) if !reads_input => self.run_script(file, Runner::Shell),
            _ => self.opaque(format!(
                "`{name}` reads the commands it runs from its input"
            )),
        }
    }

    fn awk(&mut self, args: &[Word]) {
        let mut i = 0;
        while let Some(arg) = args.get(i) {
            match arg.text.as_str() {
                "-f" => {
                    if let Some(file) = args.get(i + 1) {
                        self.run_script(file, Runner::Other);
                    }
                    return;
                }
                "-v" | "-F" => i += 2,
                t if t.starts_with('-') && t.len() > 1 => i += 1,
                program => {
                    if program.contains("system") || program.contains('|') || program.contains('>')
                    {
                        self.opaque("an awk program that runs commands or writes files".into());
                    }
                    return;
                }
            }
        }
    }

    fn interpreter(&mut self, name: &str, args: &[Word]) {
        let inline: &[&str] = match name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.')
        {
            "python" | "pypy" => &["-c"],
            "node" | "nodejs" => &["-e", "-p", "--eval", "--print"],
            "php" => &["-r"],
            "lua" => &["-e"],
            _ => &["-e", "-E"],
        };
        let mut i = 0;
        while let Some(arg) = args.get(i) {
            let text = arg.text.as_str();
            if matches!(text, "-V" | "--version" | "-h" | "--help" | "-v") {
                return;
            }
            if inline.contains(&text)
                || (text.starts_with('-')
                    && !text.starts_with("--")
                    && inline
                        .iter()
                        .any(|f| text.ends_with(&f[1..]) && f.len() == 2))
            {
                self.opaque(format!("`{name} {text}` runs code the rules cannot read"));
                return;
            }
            if text == "-m" {
                return;
            }
            if matches!(text, "-W" | "-X" | "-I" | "-r" | "--require" | "--import") {
                i += 2;
                continue;
            }
            if text.starts_with('-') && text.len() > 1 {
                i += 1;
                continue;
            }
            self.run_script(arg, Runner::Other);
            return;
        }
        self.opaque(format!("`{name}` reads the code it runs from its input"));
    }

    /// A script file run by a shell, directly, or by another interpreter.
    fn run_script(&mut self, file: &Word, runner: Runner) {
        let PathRef::Known(path) = self.path(file) else {
            self.opaque(format!(
                "runs `{}`, a file only known when it runs",
                file.text
            ));
            return;
        };
        if self.changed_here.contains(&path) {
            self.out.parts.push(Part::Unchecked(format!(
                "runs `{path}`, which this command writes first"
            )));
            return;
        }
        match self.scene.written.get(&path) {
            Written::Content(content) => {
                let shell = match runner {
                    Runner::Shell => true,
                    Runner::Other => false,
                    Runner::Direct => shebang_is_shell(content),
                };
                if shell {
                    let cwd = self.cwd.clone();
                    self.script(content);
                    self.cwd = cwd;
                } else {
                    self.opaque(format!(
                        "runs `{path}`, a script this run wrote in a language the rules cannot read"
                    ));
                }
            }
            Written::Unknown => self.out.parts.push(Part::Unchecked(format!(
                "runs `{path}`, which this run changed by other means than file_write"
            ))),
            Written::No => self.opaque(format!(
                "runs `{path}`, whose content the rules have not seen"
            )),
        }
    }
}

/// Whether a file run directly is a shell script: no `#!` line (bash runs it), or one
/// naming a shell.
fn shebang_is_shell(content: &str) -> bool {
    let Some(line) = content.lines().next().and_then(|l| l.strip_prefix("#!")) else {
        return true;
    };
    let mut words = line.split_whitespace();
    let Some(first) = words.next() else {
        return true;
    };
    let program = if first.ends_with("/env") {
        words.find(|w| !w.starts_with('-')).unwrap_or_default()
    } else {
        first
    };
    let base = program.rsplit('/').next().unwrap_or(program);
    SHELLS.contains(&base)
}

/// The words after a wrapper's own options: `value_letters` are the short options that take
/// a value (`-u root`, `-uroot`), `value_long` the long ones (`--user root`, `--user=root`).
fn skip_options<'w>(args: &'w [Word], value_letters: &str, value_long: &[&str]) -> &'w [Word] {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let text = arg.text.as_str();
        if text == "--" {
            return args.get(i + 1..).unwrap_or_default();
        }
        if text.starts_with("--") {
            i += if value_long.contains(&text) { 2 } else { 1 };
            continue;
        }
        if text.starts_with('-') && text.len() > 1 {
            if text[1..].chars().all(|c| c.is_ascii_digit()) {
                // `nice -10`
                i += 1;
                continue;
            }
            let letters: Vec<char> = text[1..].chars().collect();
            let mut takes_next = false;
            for (k, c) in letters.iter().enumerate() {
                if value_letters.contains(*c) {
                    takes_next = k + 1 == letters.len();
                    break;
                }
            }
            i += if takes_next { 2 } else { 1 };
            continue;
        }
        break;
    }
    args.get(i..).unwrap_or_default()
}
