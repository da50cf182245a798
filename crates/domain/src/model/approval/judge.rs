//! How one rule judges one call (docs/approvals.md, "Rules"): what the call is about
//! ([`Subject`]: a shell command line read into its parts, a canonical path, or the call's
//! string arguments), whether a deny rule covers it (any part denied), and whether the allow
//! rules together let it run (every part allowed).

use serde_json::Value;

use super::call::CallToJudge;
use super::command::{analyze, Analysis, Part, PathRef, Scene, MAX_PATH, SHELL_STATE};
use super::paths::canonical;
use super::pattern::{fits, Fit};
use super::resolve::PathResolver;
use super::rule::{glob, path_pattern, ApprovalRule};
use super::written::WrittenFiles;
use crate::model::tool_kind::ToolFamily;

/// What a call is about.
#[derive(Debug)]
pub(crate) enum Subject {
    /// `shell_exec`'s `command`, `shell_write`'s `input`.
    Shell(Analysis),
    /// A file tool's `path`, canonical (unknown when longer than a path can be).
    Path(PathRef),
    /// Every string argument of any other tool (top level, and strings in arrays).
    Strings(Vec<(String, String)>),
}

/// How paths are made canonical: relative to the workspace, links resolved.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Canon<'a> {
    pub workspace: Option<&'a str>,
    pub resolver: &'a PathResolver,
}

impl Canon<'_> {
    /// `path` canonical, its links resolved; `None` when longer than [`MAX_PATH`] (no
    /// system call opens it; it is not resolved either).
    fn path(&self, path: &str) -> Option<String> {
        let canonical = canonical(path, "", self.workspace);
        if canonical.len() > MAX_PATH {
            return None;
        }
        Some(self.resolver.real(self.workspace, canonical))
    }
}

/// What a rule says of a path too long for the rules to read.
const PATH_TOO_LONG: &str = "a path longer than a system path can be";

impl Subject {
    pub(crate) fn of(call: &CallToJudge<'_>, canon: Canon<'_>) -> Subject {
        let scene = Scene {
            workspace: call.workspace,
            written: call.written,
        };
        if let Some(text) = shell_text(call.tool, call.arguments) {
            let mut analysis = analyze(text, scene);
            for part in &mut analysis.parts {
                if let Part::Write(PathRef::Known(p))
                | Part::Read(PathRef::Known(p))
                | Part::Touches {
                    path: PathRef::Known(p),
                    ..
                } = part
                {
                    *p = canon.resolver.real(canon.workspace, std::mem::take(p));
                }
            }
            return Subject::Shell(analysis);
        }
        if call.family == ToolFamily::Files {
            let path = call
                .arguments
                .get("path")
                .and_then(Value::as_str)
                .unwrap_or(".");
            return Subject::Path(match canon.path(path) {
                Some(path) => PathRef::Known(path),
                None => PathRef::Unknown(PATH_TOO_LONG.to_string()),
            });
        }
        Subject::Strings(strings(call.arguments))
    }
}

/// The command line of a shell call: `shell_exec`'s command, what `shell_write` types.
fn shell_text<'v>(tool: &str, args: &'v Value) -> Option<&'v str> {
    match tool {
        "shell_exec" => args.get("command").and_then(Value::as_str),
        "shell_write" => args.get("input").and_then(Value::as_str),
        _ => None,
    }
}

/// Whether `rule` covers `tool`; a `shell_exec` rule also judges `shell_write`'s input.
fn covers(rule: &ApprovalRule, tool: &str) -> bool {
    rule.covers_tool(tool) || (tool == "shell_write" && rule.covers_tool("shell_exec"))
}

/// The string arguments of a call: `name` → value (an array gives one pair per string).
fn strings(args: &Value) -> Vec<(String, String)> {
    let Some(object) = args.as_object() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (name, value) in object {
        match value {
            Value::String(s) => out.push((name.clone(), s.clone())),
            Value::Array(items) => out.extend(
                items
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|s| (name.clone(), s.to_string())),
            ),
            _ => {}
        }
    }
    out
}

/// Whether an argument's name says it holds a path: its value is compared canonical, `*`
/// staying within one folder.
fn path_like(name: &str) -> bool {
    [
        "path",
        "file",
        "dir",
        "folder",
        "source",
        "destination",
        "target",
    ]
    .iter()
    .any(|p| name.to_ascii_lowercase().contains(p))
}

/// One argument value against a pattern (`None`: a path too long to compare).
fn value_fits(pattern: &str, name: &str, value: &str, canon: Canon<'_>) -> Option<bool> {
    if path_like(name) {
        Some(path_fits(&path_pattern(pattern), &canon.path(value)?))
    } else {
        Some(glob(pattern, value, false))
    }
}

/// How the values of a call fit a rule's pattern.
#[derive(Debug, Clone, Copy, Default)]
struct ValuesFit {
    all: bool,
    any: bool,
    /// A value could not be compared (a path too long).
    unsure: bool,
}

impl ValuesFit {
    fn of(fits: impl Iterator<Item = Option<bool>>) -> ValuesFit {
        let mut out = ValuesFit {
            all: true,
            ..ValuesFit::default()
        };
        for fit in fits {
            match fit {
                Some(true) => out.any = true,
                Some(false) => out.all = false,
                None => {
                    out.all = false;
                    out.unsure = true;
                }
            }
        }
        out
    }
}

/// A named rule (`name=pattern`) on a call's string arguments; `None` when the call has
/// no such argument.
fn named_fit(
    name: &str,
    pattern: &str,
    strings: &[(String, String)],
    canon: Canon<'_>,
) -> Option<ValuesFit> {
    let mut values = strings.iter().filter(|(n, _)| n == name).peekable();
    values.peek()?;
    Some(ValuesFit::of(
        values.map(|(_, v)| value_fits(pattern, name, v, canon)),
    ))
}

/// What a deny rule says of a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Denial {
    Yes,
    /// The rule may cover it; the reason says why it cannot tell.
    Maybe(String),
    No,
}

pub(crate) fn denies(
    rule: &ApprovalRule,
    call: &CallToJudge<'_>,
    subject: &Subject,
    canon: Canon<'_>,
) -> Denial {
    let mut maybe = None;
    if covers(rule, call.tool) {
        if rule.whole() {
            return Denial::Yes;
        }
        match denies_subject(rule, subject, canon) {
            Denial::No => {}
            Denial::Maybe(why) => maybe = Some(why),
            Denial::Yes => return Denial::Yes,
        }
    }
    // A shell command's redirections are file reads and writes: file rules judge them.
    if let Subject::Shell(analysis) = subject {
        for part in &analysis.parts {
            let (tool, path) = match part {
                Part::Write(p) => ("file_write", p),
                Part::Read(p) => ("file_read", p),
                // A path named as an operand: a file rule on it refuses the command (a rule
                // on every call of the tool does not: it would refuse every command).
                Part::Touches { path, write } => {
                    let tool = if *write { "file_write" } else { "file_read" };
                    if !rule.covers_tool(tool) || rule.whole() {
                        continue;
                    }
                    match path {
                        PathRef::Known(p) if path_rule_fits(rule, p) => return Denial::Yes,
                        PathRef::Known(_) => {}
                        PathRef::Unknown(raw) => {
                            maybe.get_or_insert_with(|| {
                                format!("the file `{raw}` is only known when the command runs")
                            });
                        }
                    }
                    continue;
                }
                _ => continue,
            };
            if !rule.covers_tool(tool) {
                continue;
            }
            if rule.whole() {
                return Denial::Yes;
            }
            match path {
                PathRef::Known(p) if path_rule_fits(rule, p) => return Denial::Yes,
                PathRef::Known(_) => {}
                PathRef::Unknown(raw) => {
                    maybe.get_or_insert_with(|| {
                        format!("the file `{raw}` is only known when the command runs")
                    });
                }
            }
        }
    }
    maybe.map_or(Denial::No, Denial::Maybe)
}

/// A file rule (`file_*(secret/**)`, `file_write(path=…)`) on a canonical path.
fn path_rule_fits(rule: &ApprovalRule, path: &str) -> bool {
    match rule.named() {
        Some(("path", pattern)) => path_fits(&path_pattern(pattern), path),
        Some(_) => false,
        None => rule
            .path_pattern()
            .is_some_and(|pattern| path_fits(&pattern, path)),
    }
}

/// A path pattern on a canonical path; `dir/**` also covers the folder `dir` itself (a
/// command or listing of the folder reaches everything in it).
fn path_fits(pattern: &str, path: &str) -> bool {
    glob(pattern, path, true)
        || pattern
            .strip_suffix("/**")
            .is_some_and(|folder| glob(folder, path, true))
}

fn denies_subject(rule: &ApprovalRule, subject: &Subject, canon: Canon<'_>) -> Denial {
    match subject {
        Subject::Shell(analysis) => {
            let Some(pattern) = rule.command() else {
                // `name=pattern` on a shell tool (`*(url=…)`): shell calls have no such name.
                return Denial::No;
            };
            let mut maybe = None;
            for part in &analysis.parts {
                match part {
                    Part::Command(cmd) => match fits(pattern, cmd, true) {
                        Fit::Yes => return Denial::Yes,
                        Fit::Maybe => {
                            maybe.get_or_insert_with(|| {
                                format!(
                                    "the arguments of `{}` are only known when it runs",
                                    cmd.program
                                )
                            });
                        }
                        Fit::No => {}
                    },
                    Part::Opaque(why) | Part::Unchecked(why) => {
                        maybe.get_or_insert_with(|| why.clone());
                    }
                    Part::Write(_) | Part::Read(_) | Part::Touches { .. } => {}
                }
            }
            if let Some(why) = analysis.unknown.first() {
                maybe.get_or_insert_with(|| format!("the command is not understood ({why})"));
            }
            maybe.map_or(Denial::No, Denial::Maybe)
        }
        Subject::Path(PathRef::Known(path)) => {
            if path_rule_fits(rule, path) {
                Denial::Yes
            } else {
                Denial::No
            }
        }
        Subject::Path(PathRef::Unknown(why)) => Denial::Maybe(why.clone()),
        Subject::Strings(strings) => {
            let fit = match rule.named() {
                Some((name, pattern)) => named_fit(name, pattern, strings, canon),
                None => {
                    let pattern = rule.subject().unwrap_or("*");
                    Some(ValuesFit::of(strings.iter().map(|(name, value)| {
                        value_fits(pattern, name, value, canon)
                    })))
                }
            };
            match fit {
                Some(fit) if fit.any => Denial::Yes,
                Some(fit) if fit.unsure => Denial::Maybe(PATH_TOO_LONG.to_string()),
                _ => Denial::No,
            }
        }
    }
}

/// Whether the allow rules together let the call run: every part of it allowed.
pub(crate) fn allowed(
    all: &[ApprovalRule],
    call: &CallToJudge<'_>,
    subject: &Subject,
    canon: Canon<'_>,
) -> bool {
    let rules: Vec<&ApprovalRule> = all.iter().filter(|r| covers(r, call.tool)).collect();
    if rules.iter().any(|r| r.whole()) {
        return true;
    }
    match subject {
        Subject::Shell(analysis) => shell_allowed(&rules, all, analysis),
        Subject::Path(PathRef::Known(path)) => rules.iter().any(|r| path_rule_fits(r, path)),
        Subject::Path(PathRef::Unknown(_)) => false,
        Subject::Strings(strings) => rules.iter().any(|r| match r.named() {
            Some((name, pattern)) => {
                named_fit(name, pattern, strings, canon).is_some_and(|f| f.all)
            }
            None => {
                let pattern = r.subject().unwrap_or("*");
                !strings.is_empty()
                    && ValuesFit::of(
                        strings
                            .iter()
                            .map(|(name, value)| value_fits(pattern, name, value, canon)),
                    )
                    .all
            }
        }),
    }
}

/// Every part of a command line allowed, and nothing in it that no allow rule allows
/// (docs/approvals.md, "What allow rules allow"): only what the reader fully understood.
fn shell_allowed(rules: &[&ApprovalRule], all: &[ApprovalRule], analysis: &Analysis) -> bool {
    if !analysis.unknown.is_empty() || !analysis.not_allowable.is_empty() {
        return false;
    }
    analysis.parts.iter().all(|part| match part {
        Part::Command(cmd) => {
            cmd.looked_through
                || SHELL_STATE.contains(&cmd.program.as_str())
                || rules
                    .iter()
                    .filter_map(|r| r.command())
                    .any(|pattern| fits(pattern, cmd, false) == Fit::Yes)
        }
        Part::Write(PathRef::Known(path)) => write_allowed(all, path),
        Part::Write(PathRef::Unknown(_)) | Part::Unchecked(_) => false,
        // Reading needs no approval; the command running unseen code, or naming files, was
        // judged itself.
        Part::Read(_) | Part::Opaque(_) | Part::Touches { .. } => true,
    })
}

/// A shell redirection's write is allowed by the rules that allow `file_write` there.
fn write_allowed(all: &[ApprovalRule], path: &str) -> bool {
    all.iter()
        .any(|r| r.covers_tool("file_write") && (r.whole() || path_rule_fits(r, path)))
}

/// Records in `written` what a call to `tool` with `arguments` (let through) writes:
/// `file_write`'s content, the paths of `file_str_replace` and of shell redirections as
/// changed; `workspace` (absolute) makes paths workspace-relative.
pub fn record_writes(
    tool: &str,
    arguments: &Value,
    workspace: Option<&str>,
    written: &mut WrittenFiles,
) {
    let path = arguments
        .get("path")
        .and_then(Value::as_str)
        .map(|p| canonical(p, "", workspace));
    match tool {
        "file_write" => {
            if let (Some(p), Some(content)) =
                (path, arguments.get("content").and_then(Value::as_str))
            {
                let append = arguments
                    .get("append")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                written.wrote(p, content, append);
            }
        }
        "file_str_replace" => {
            if let Some(p) = path {
                written.changed(p);
            }
        }
        tool => {
            let Some(text) = shell_text(tool, arguments) else {
                return;
            };
            let none = WrittenFiles::default();
            let scene = Scene {
                workspace,
                written: &none,
            };
            for part in analyze(text, scene).parts {
                if let Part::Write(PathRef::Known(p)) = part {
                    written.changed(p);
                }
            }
        }
    }
}
