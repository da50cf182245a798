//! What a shell command line does, as the approval rules judge it (docs/approvals.md,
//! "What a shell rule sees"): its simple commands with normalised program names, wrappers
//! looked through (`sudo`, `env`, `nohup`, `timeout`, `nice`, `xargs`, `find -exec`,
//! `bash -c`, `eval`, `trap`, …), the files it redirects to, the scripts it runs (judged by
//! their content when the run wrote them with `file_write`), what could not be understood,
//! and what no allow rule may let through (docs/approvals.md, "What allow rules allow").
//!
//! Reading is bounded (docs/approvals.md, "Limits"): a text longer than [`MAX_TEXT`] is
//! not read, and the whole analysis stops after [`MAX_STEPS`] steps; both are "not
//! understood".

use std::collections::HashSet;

use super::paths::canonical;
use super::programs::{self, glob_safe, in_system_folder, is_opaque_wrapper, safe_set, WRAPPERS};
use super::shell::{self, Mode, RedirectKind, SimpleCommand, Word};
use super::variables::is_risky_variable;
use super::written::{Written, WrittenFiles};

/// The longest command line (or script, or `bash -c` string) the rules read: 64 KiB.
/// Anything longer is not understood (a deny rule is unsure, no allow rule allows it).
pub(crate) const MAX_TEXT: usize = 64 * 1024;

/// The most steps (characters looked at, path characters made) one analysis takes: a
/// command line at the cap, the scripts it runs and its paths fit many times over.
pub(crate) const MAX_STEPS: usize = 32 * MAX_TEXT;

/// The longest path the rules compare (Linux's `PATH_MAX`): the system opens none longer,
/// and a longer one is not resolved (it is "only known when it runs").
pub(crate) const MAX_PATH: usize = 4096;

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

/// Why an operand has no canonical path.
enum Operand {
    /// Only known when it runs (`$F`).
    Unseen,
    /// Longer than a path can be, or past the analysis' budget.
    TooLong,
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
    /// rule refuses a command naming a path it covers, and is unsure of one that writes a
    /// file only known when it runs (`rm $F`, `cp a secre*/`).
    Touches {
        path: PathRef,
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
    /// Why no allow rule may let this command line run, though deny rules can judge it:
    /// an assignment, an expansion or a glob whose words are only known when it runs, a
    /// wrapper, a builtin changing the shell, an option that runs code or writes a file.
    pub not_allowable: Vec<String>,
    /// The work done: characters the reader looked at, path characters made.
    pub steps: usize,
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
        changed_here: HashSet::new(),
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

/// Programs that only change the shell's own state; a rule need not allow them.
pub(crate) const SHELL_STATE: [&str; 7] = ["cd", "pushd", "popd", "true", "false", ":", "set"];

struct Analyzer<'a> {
    scene: Scene<'a>,
    out: Analysis,
    /// The current folder (workspace-relative); `None` once a `cd` went somewhere unknown.
    cwd: Option<String>,
    /// Files this command line writes through redirections, before they are run.
    changed_here: HashSet<String>,
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
            self.unknown("scripts nested too deeply");
            return;
        }
        if text.len() > MAX_TEXT {
            self.unknown(format!(
                "a command line or script of {} bytes, longer than the {} KiB the rules read",
                text.len(),
                MAX_TEXT / 1024
            ));
            return;
        }
        if self.spent() {
            return;
        }
        self.depth += 1;
        let parsed = shell::parse(text, Mode::Command);
        self.out.steps = self.out.steps.saturating_add(parsed.steps);
        for cmd in &parsed.commands {
            if self.spent() {
                break;
            }
            self.simple(cmd);
        }
        self.out.unknown.extend(parsed.unknown);
        self.depth -= 1;
    }

    /// Whether the analysis has done all the work it may ([`MAX_STEPS`]); it then says so
    /// once and reads no further.
    fn spent(&mut self) -> bool {
        if self.out.steps <= MAX_STEPS {
            return false;
        }
        let why = "more to read than the rules read for one command line";
        if !self.out.unknown.iter().any(|u| u == why) {
            self.unknown(why);
        }
        true
    }

    fn unknown(&mut self, why: impl Into<String>) {
        self.out.unknown.push(why.into());
    }

    fn not_allowable(&mut self, why: impl Into<String>) {
        self.out.not_allowable.push(why.into());
    }

    fn cwd(&self) -> &str {
        self.cwd.as_deref().unwrap_or("")
    }

    /// `path` (relative to `cwd`) in canonical form, counted as work; `None` beyond
    /// [`MAX_PATH`], or once the analysis has spent its budget.
    fn canonical(&mut self, path: &str, cwd: &str) -> Option<String> {
        if self.spent() {
            return None;
        }
        self.out.steps = self.out.steps.saturating_add(path.len() + cwd.len());
        let canonical = canonical(path, cwd, self.scene.workspace);
        (canonical.len() <= MAX_PATH).then_some(canonical)
    }

    fn path(&mut self, word: &Word) -> PathRef {
        match self.cwd.clone() {
            Some(cwd) if !word.dynamic && !word.glob && !word.text.starts_with('~') => {
                match self.canonical(&word.text, &cwd) {
                    Some(path) => PathRef::Known(path),
                    None => PathRef::Unknown(too_long(&word.text)),
                }
            }
            _ => PathRef::Unknown(word.text.clone()),
        }
    }

    fn push(&mut self, program: String, args: &[Word], dynamic: bool, looked_through: bool) {
        if !looked_through {
            self.touches(&program, args);
        }
        self.plain_arguments(&program, args);
        self.out.parts.push(Part::Command(Command {
            program,
            args: args.iter().map(|w| w.text.clone()).collect(),
            dynamic: dynamic || args.iter().any(|w| w.dynamic),
            looked_through,
        }));
    }

    /// An allow rule judges a command by the words it reads: none may be only known when
    /// it runs, and an unquoted glob leading a word (`*.txt`, which may expand to a file
    /// named `-i.txt`) only for a program whose options are harmless, or after `--`.
    fn plain_arguments(&mut self, program: &str, args: &[Word]) {
        let mut only_operands = false;
        for arg in args {
            if arg.dynamic {
                self.not_allowable(format!(
                    "`{program}`'s argument `{}` is only known when it runs",
                    arg.text
                ));
            } else if arg.glob_leads && !only_operands && !glob_safe(program) {
                self.not_allowable(format!(
                    "`{}` may expand to a file name `{program}` reads as an option",
                    arg.text
                ));
            }
            only_operands |= arg.text == "--";
        }
    }

    /// What the program's arguments make it do ([`programs::effects`]).
    fn effects(&mut self, program: &str, args: &[Word]) {
        let effects = programs::effects(program, args);
        for why in effects.unseen_code {
            self.out.not_allowable.push(why.clone());
            self.opaque(why);
        }
        self.out.not_allowable.extend(effects.not_allowable);
        let Some(cwd) = self.cwd.clone() else { return };
        for file in effects.writes {
            let part = match self.canonical(&file, &cwd) {
                Some(path) => Part::Touches {
                    path: PathRef::Known(path),
                    write: true,
                },
                None => Part::Write(PathRef::Unknown(too_long(&file))),
            };
            self.out.parts.push(part);
        }
        for file in effects.unseen_writes {
            self.out.parts.push(Part::Touches {
                path: PathRef::Unknown(file),
                write: true,
            });
        }
    }

    /// The operands of a command that may be paths, as [`Part::Touches`]. One only known
    /// when it runs (`$F`, `secre*/`) is judged where the program writes it: a deny file
    /// rule is unsure of it (a glob's literal text is compared as well).
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
            if text.is_empty() || text.contains("://") {
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
            let path = if arg.dynamic {
                Err(Operand::Unseen)
            } else {
                self.canonical(text, &cwd).ok_or(Operand::TooLong)
            };
            operands.push((text.to_string(), path, arg.glob, write));
        }
        let count = operands.len();
        for (i, (text, path, glob, write)) in operands.into_iter().enumerate() {
            let write = write.unwrap_or(match program {
                "cp" | "mv" | "install" | "ln" | "rsync" | "scp" => i + 1 == count && count > 1,
                "tee" | "touch" | "rm" | "rmdir" | "mkdir" | "truncate" | "shred" | "unlink"
                | "chmod" | "chown" => true,
                _ => false,
            });
            if write && glob {
                self.out.parts.push(Part::Touches {
                    path: PathRef::Unknown(text.clone()),
                    write,
                });
            }
            match (path, write) {
                (Ok(path), write) => self.out.parts.push(Part::Touches {
                    path: PathRef::Known(path),
                    write,
                }),
                (Err(Operand::Unseen), true) => self.out.parts.push(Part::Touches {
                    path: PathRef::Unknown(text),
                    write,
                }),
                // A read only known when it runs: operands are not all files (`echo $x`),
                // so a file rule does not ask for each; redirections are judged strictly.
                (Err(Operand::Unseen), false) => {}
                // Too long to compare: a file rule is unsure of it.
                (Err(Operand::TooLong), true) => {
                    self.out
                        .parts
                        .push(Part::Write(PathRef::Unknown(too_long(&text))));
                }
                (Err(Operand::TooLong), false) => {
                    self.out
                        .parts
                        .push(Part::Read(PathRef::Unknown(too_long(&text))));
                }
            }
        }
    }

    fn opaque(&mut self, why: String) {
        self.out.parts.push(Part::Opaque(why));
    }

    fn simple(&mut self, cmd: &SimpleCommand) {
        for redirect in &cmd.redirects {
            let target = &redirect.target;
            if target.dynamic {
                self.not_allowable(format!(
                    "the file of the redirection `{}` is only known when it runs",
                    target.text
                ));
            } else if matches!(
                target.text.as_str(),
                "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty" | "/dev/stdin"
            ) {
                continue;
            }
            if target.text.contains("/dev/tcp/") || target.text.contains("/dev/udp/") {
                self.not_allowable(format!(
                    "the redirection `{}` makes bash open a network connection",
                    target.text
                ));
            }
            let path = self.path(target);
            if redirect.kind == RedirectKind::Write {
                if let PathRef::Known(p) = &path {
                    self.changed_here.insert(p.clone());
                }
                self.out.parts.push(Part::Write(path));
            } else {
                self.out.parts.push(Part::Read(path));
            }
        }
        for (name, _) in &cmd.assignments {
            self.not_allowable(if cmd.words.is_empty() {
                format!("`{name}=…` sets a shell variable later commands see")
            } else {
                format!("`{name}=…` before a command sets its environment")
            });
        }
        self.assignments(cmd.assignments.iter().map(|(name, _)| name.as_str()));
        self.words(&cmd.words, false);
    }

    /// Variables set for a command or the shell: one that changes what runs (`PATH`,
    /// `PS4`, `GIT_CONFIG_*`: [`is_risky_variable`]) makes the line not understood.
    fn assignments<'n>(&mut self, names: impl Iterator<Item = &'n str>) {
        for name in names {
            if is_risky_variable(name) {
                self.unknown(format!(
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
            self.unknown(format!(
                "the program `{}` is only known when the command runs",
                first.text
            ));
            return;
        }
        if dynamic {
            self.not_allowable(format!(
                "`{}` gets arguments only known when it runs",
                first.text
            ));
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
        if first.text.contains('/') && !in_system_folder(&canonical(&first.text, "", None)) {
            self.not_allowable(format!(
                "runs `{}`, not a program of the system's folders",
                first.text
            ));
        }
        if WRAPPERS.contains(&name.as_str()) {
            self.not_allowable(format!("`{name}` runs another program"));
        }
        match name.as_str() {
            "sudo" | "doas" | "run0" => {
                self.push(name.clone(), args, dynamic, false);
                let rest = skip_options(args, "ugCDhprtTUc", &["--user", "--group"]);
                let options = &args[..args.len() - rest.len()];
                let through_shell = options.iter().any(|o| {
                    let t = o.text.as_str();
                    matches!(t, "--shell" | "--login")
                        || (t.starts_with('-')
                            && !t.starts_with("--")
                            && (t.contains('s') || t.contains('i')))
                });
                if through_shell {
                    self.unknown(format!(
                        "`{name} -s` / `-i` runs its command through a shell"
                    ));
                    return;
                }
                let rest = self.leading_assignments(&name, rest);
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
                    "ionice" => "cnp",
                    "stdbuf" => "ioe",
                    _ => "",
                };
                let rest = skip_options(
                    args,
                    value_letters,
                    &[
                        "--adjustment",
                        "--format",
                        "--output",
                        "--class",
                        "--classdata",
                    ],
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
            "busybox" => {
                self.push(name.clone(), args, dynamic, true);
                if args.first().is_some_and(|a| !a.text.starts_with('-')) {
                    self.words(args, dynamic);
                }
            }
            "find" => {
                self.push(name.clone(), args, dynamic, false);
                self.effects(&name, args);
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
                    self.unknown(format!("`{name}` of text only known when it runs"));
                    return;
                }
                let text: Vec<&str> = rest.iter().map(|w| w.text.as_str()).collect();
                self.script(&text.join(" "));
            }
            "trap" => {
                self.push(name.clone(), args, dynamic, false);
                self.trap(args);
            }
            "source" | "." => {
                self.push(name.clone(), args, dynamic, false);
                self.not_allowable(format!("`{name}` runs a file's commands in this shell"));
                if let Some(file) = args.first() {
                    self.run_script(file, Runner::Shell);
                }
            }
            "cd" | "pushd" | "popd" => {
                self.push(name.clone(), args, dynamic, false);
                let target = skip_options(args, "", &[]).first();
                self.cwd = match (name.as_str(), target, self.cwd.clone()) {
                    (_, Some(t), Some(cwd))
                        if !t.dynamic && t.text != "-" && !t.text.starts_with('~') =>
                    {
                        self.canonical(&t.text, &cwd)
                    }
                    _ => None,
                };
            }
            "set" => {
                self.push(name.clone(), args, dynamic, false);
                if !safe_set(args) {
                    self.not_allowable(
                        "`set` with options that change what later commands do (`set -x` \
                         traces through `PS4`, which may run commands)",
                    );
                }
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
            other if is_opaque_wrapper(other) => {
                self.push(name.clone(), args, dynamic, false);
                let why = format!("`{name}` runs another program, in a way the rules do not read");
                self.not_allowable(why.clone());
                self.opaque(why);
            }
            _ => {
                self.effects(&name, args);
                self.push(name, args, dynamic, false);
            }
        }
    }

    /// `trap ACTION SIGNAL…`: the action runs later, as commands; read here as a script
    /// (from a folder not known then).
    fn trap(&mut self, args: &[Word]) {
        self.not_allowable("`trap` runs its text as commands later");
        let args = skip_options(args, "", &[]);
        if args.len() < 2 {
            // `trap`, `trap -p`, `trap SIGNAL` (reset): nothing runs.
            return;
        }
        let action = &args[0];
        if action.dynamic {
            self.unknown("`trap` of text only known when it runs");
            return;
        }
        let cwd = self.cwd.take();
        self.script(&action.text);
        self.cwd = cwd;
    }

    /// `NAME=value` words before the command of `sudo` (and `env`): the variables it sets.
    /// A name that is not a plain one (`BASH_FUNC_ls%%`, an exported function) is not
    /// understood.
    fn leading_assignments<'w>(&mut self, wrapper: &str, args: &'w [Word]) -> &'w [Word] {
        let mut i = 0;
        while let Some(arg) = args.get(i) {
            let Some((name, _)) = arg.text.split_once('=') else {
                break;
            };
            if !shell::is_name(name) {
                self.unknown(format!(
                    "`{wrapper}` sets `{name}`, not a plain variable name (an exported \
                     function?)"
                ));
                return &[];
            }
            self.assignments(std::iter::once(name));
            i += 1;
        }
        args.get(i..).unwrap_or_default()
    }

    /// `env`'s options, then its assignments, then the command. `-S`/`--split-string`
    /// splits a string into more arguments, read again as `env`'s; one holding quotes,
    /// backslashes, `$` or `#` (env's own escapes) is not understood.
    fn env(&mut self, args: &[Word], dynamic: bool) {
        const LONG: [&str; 11] = [
            "split-string",
            "chdir",
            "unset",
            "argv0",
            "ignore-environment",
            "null",
            "debug",
            "block-signal",
            "default-signal",
            "ignore-signal",
            "list-signal-handling",
        ];
        let mut i = 0;
        while let Some(arg) = args.get(i) {
            let text = arg.text.as_str();
            if !text.starts_with('-') {
                break;
            }
            if arg.dynamic {
                self.unknown("an `env` option only known when it runs");
                return;
            }
            i += 1;
            if text == "--" {
                break;
            }
            if text == "-" {
                continue;
            }
            if let Some(long) = text.strip_prefix("--") {
                let (given, value) = match long.split_once('=') {
                    Some((given, value)) => (given, Some(value)),
                    None => (long, None),
                };
                let matching: Vec<&str> = LONG
                    .iter()
                    .copied()
                    .filter(|full| full.starts_with(given) && !given.is_empty())
                    .collect();
                let [option] = matching[..] else {
                    self.unknown(format!("the `env` option `{text}` is not understood"));
                    return;
                };
                let takes_value = matches!(option, "split-string" | "chdir" | "unset" | "argv0");
                let value = match value {
                    Some(v) => Some(v.to_string()),
                    None if takes_value => {
                        i += 1;
                        args.get(i - 1).map(|w| w.text.clone())
                    }
                    None => None,
                };
                match option {
                    "split-string" => {
                        self.split_string(value.as_deref(), &args[i..], dynamic);
                        return;
                    }
                    "chdir" => self.cwd = None,
                    _ => {}
                }
                continue;
            }
            let letters: Vec<char> = text[1..].chars().collect();
            for (k, letter) in letters.iter().enumerate() {
                let attached: String = letters[k + 1..].iter().collect();
                match letter {
                    'i' | '0' | 'v' => continue,
                    'u' | 'a' | 'C' | 'S' => {
                        let value = if attached.is_empty() {
                            i += 1;
                            args.get(i - 1).map(|w| w.text.clone())
                        } else {
                            Some(attached)
                        };
                        match letter {
                            'S' => {
                                self.split_string(value.as_deref(), &args[i..], dynamic);
                                return;
                            }
                            'C' => self.cwd = None,
                            _ => {}
                        }
                        break;
                    }
                    other => {
                        self.unknown(format!("the `env` option `-{other}` is not understood"));
                        return;
                    }
                }
            }
        }
        let rest = self.leading_assignments("env", args.get(i..).unwrap_or_default());
        self.words(rest, dynamic);
    }

    /// `env -S STRING REST…`: the words of STRING, then REST, read again as `env`'s
    /// arguments.
    fn split_string(&mut self, string: Option<&str>, rest: &[Word], dynamic: bool) {
        let Some(string) = string else {
            self.unknown("`env -S` without its string");
            return;
        };
        if string.contains(['\\', '\'', '"', '$', '#']) {
            self.unknown("`env -S` with a string holding env's own quotes or escapes");
            return;
        }
        if self.depth >= MAX_DEPTH {
            self.unknown("`env -S` nested too deeply");
            return;
        }
        let mut words: Vec<Word> = string
            .split_whitespace()
            .map(|w| Word {
                text: w.to_string(),
                ..Word::default()
            })
            .collect();
        words.extend(rest.iter().cloned());
        self.depth += 1;
        self.env(&words, dynamic);
        self.depth -= 1;
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
        // `-l`, `-i`, `--login`, `--rcfile`: startup files of the home folder (the
        // workspace) run first.
        let mut startup_files = false;
        let mut i = 0;
        while let Some(arg) = args.get(i) {
            let text = arg.text.as_str();
            if text == "--" {
                i += 1;
                break;
            }
            if matches!(text, "-o" | "+o" | "-O" | "+O") {
                i += 2;
                continue;
            }
            if matches!(text, "--rcfile" | "--init-file") {
                startup_files = true;
                i += 2;
                continue;
            }
            if text.starts_with("--") {
                startup_files |= text == "--login";
                i += 1;
                continue;
            }
            if (text.starts_with('-') || text.starts_with('+')) && text.len() > 1 {
                runs_string |= text.contains('c');
                reads_input |= text.contains('s');
                startup_files |=
                    text.starts_with('-') && (text.contains('l') || text.contains('i'));
                i += 1;
                continue;
            }
            break;
        }
        if startup_files {
            let why = format!(
                "`{name} -l` / `-i` first runs the startup files of its home folder (the \
                 workspace), which the rules do not read"
            );
            self.not_allowable(why.clone());
            self.opaque(why);
        }
        let operand = args.get(i);
        if runs_string {
            self.push(name.clone(), args, dynamic, true);
            self.not_allowable(format!("`{name} -c` runs a string as commands"));
            match operand {
                Some(w) if !w.dynamic => self.script(&w.text),
                Some(_) => self.unknown("`-c` of a command only known when it runs"),
                None => self.unknown("`-c` without a command"),
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
                "-f" | "--file" => {
                    self.not_allowable("awk runs a program from a file");
                    if let Some(file) = args.get(i + 1) {
                        self.run_script(file, Runner::Other);
                    }
                    return;
                }
                "-v" | "-F" => i += 2,
                "-e" | "--source" | "-i" | "--include" | "-l" | "--load" | "-E" | "--exec" => {
                    let why =
                        "awk loads a program, a library or an extension the rules do not read";
                    self.not_allowable(why);
                    self.opaque(why.into());
                    return;
                }
                t if t.starts_with('-') && t.len() > 1 => i += 1,
                program => {
                    if arg.dynamic
                        || ["system", "|", ">", "@load", "@include"]
                            .iter()
                            .any(|p| program.contains(p))
                    {
                        let why = "an awk program that runs commands or writes files";
                        self.not_allowable(why);
                        self.opaque(why.into());
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

/// How a path not compared (longer than [`MAX_PATH`], or past the budget) is shown: its
/// start.
fn too_long(path: &str) -> String {
    format!(
        "{}… (not compared: longer than a path can be, or past what the rules read)",
        path.chars().take(40).collect::<String>()
    )
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
