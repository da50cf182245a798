//! One approval rule as users write it (docs/approvals.md): a tool name pattern and, in
//! parentheses, a pattern of what the call is about: `shell_exec(git status*)`,
//! `file_write(src/**)`, `mcp__fs__write_file(path=secret/**)`, `mcp__github__*`.

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

use super::command::{pattern_command, Command};
use super::paths::canonical;
use crate::ports::llm::ToolSchema;

/// Why a rule could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RuleError {
    #[error("approval rule `{rule}`: {problem}")]
    Malformed { rule: String, problem: &'static str },
    /// The rule judges an argument that no tool it names has (by the tools' input schemas):
    /// it could never match.
    #[error(
        "approval rule `{rule}` judges the argument `{argument}`, which {tools} does not take \
         (its arguments: {known}); name one of those"
    )]
    UnknownArgument {
        rule: String,
        argument: String,
        /// The tool (or tools) the rule names, as shown.
        tools: String,
        /// Their arguments, as shown.
        known: String,
    },
}

/// `tool(subject)`: covers calls to a tool whose name matches `tool` and whose subject
/// matches `subject` (docs/approvals.md): a shell command pattern for shell tools, a path
/// pattern for file tools, `name=pattern` for one named argument of any other tool, or a
/// pattern every string argument is judged by. Without parentheses, any call to the tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRule {
    text: String,
    tool: String,
    subject: Option<String>,
    /// The subject read as one command (rules that can cover a shell tool).
    command: Option<Command>,
    /// `name=pattern`: the one argument the rule judges (rules on other tools).
    named: Option<(String, String)>,
}

/// Whether a tool pattern names (or may name) a shell tool.
fn may_cover_shell(tool: &str) -> bool {
    glob(tool, "shell_exec", false) || glob(tool, "shell_write", false)
}

/// `name=pattern` with a plain argument name.
fn named_argument(subject: &str) -> Option<(String, String)> {
    let (name, pattern) = subject.split_once('=')?;
    let mut chars = name.chars();
    let first = chars.next()?;
    if !(first.is_ascii_alphabetic() || first == '_')
        || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return None;
    }
    Some((name.to_string(), pattern.to_string()))
}

impl ApprovalRule {
    /// Whether the rule's tool pattern names `tool`.
    pub(crate) fn covers_tool(&self, tool: &str) -> bool {
        glob(&self.tool, tool, false)
    }

    /// Whether the rule covers every call to its tools (no parentheses, `(*)` or `(**)`).
    pub(crate) fn whole(&self) -> bool {
        match &self.subject {
            None => true,
            Some(s) => matches!(s.trim(), "*" | "**"),
        }
    }

    pub(crate) fn command(&self) -> Option<&Command> {
        self.command.as_ref()
    }

    /// The argument the rule judges and its pattern, when it names one.
    pub(crate) fn named(&self) -> Option<(&str, &str)> {
        self.named.as_ref().map(|(n, p)| (n.as_str(), p.as_str()))
    }

    /// Whether the tool part is a pattern (`mcp__github__*`) rather than one tool's name.
    pub(crate) fn names_a_pattern(&self) -> bool {
        self.tool.contains(['*', '?'])
    }

    /// Checks the argument a `name=pattern` rule judges against the input schemas of the
    /// tools it names (docs/approvals.md, "Rules"): an error when tools it names are offered
    /// and none takes that argument (it would never match). Tools not offered (yet) and
    /// schemas listing no properties are not checked.
    pub fn check_arguments(&self, schemas: &[ToolSchema]) -> Result<(), RuleError> {
        let Some((argument, _)) = self.named() else {
            return Ok(());
        };
        let mut lacking = Vec::new();
        for schema in schemas.iter().filter(|s| self.covers_tool(&s.name)) {
            let Some(properties) = schema
                .parameters
                .get("properties")
                .and_then(|p| p.as_object())
            else {
                return Ok(());
            };
            if properties.contains_key(argument) {
                return Ok(());
            }
            let mut known: Vec<&str> = properties.keys().map(String::as_str).collect();
            known.sort_unstable();
            lacking.push((schema.name.as_str(), known));
        }
        if lacking.is_empty() {
            return Ok(());
        }
        let tools = lacking
            .iter()
            .map(|(name, _)| format!("`{name}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let mut known: Vec<&str> = lacking
            .iter()
            .flat_map(|(_, k)| k.iter().copied())
            .collect();
        known.sort_unstable();
        known.dedup();
        Err(RuleError::UnknownArgument {
            rule: self.text.clone(),
            argument: argument.to_string(),
            tools,
            known: if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            },
        })
    }

    /// The subject pattern as written (`None` without parentheses).
    pub(crate) fn subject(&self) -> Option<&str> {
        self.subject.as_deref()
    }

    /// The subject read as a path pattern: `./secret/**` is `secret/**`.
    pub(crate) fn path_pattern(&self) -> Option<String> {
        self.subject.as_deref().map(path_pattern)
    }
}

/// A path pattern in canonical form (`./a/**` → `a/**`, `a//b` → `a/b`).
pub(crate) fn path_pattern(pattern: &str) -> String {
    let pattern = pattern.trim();
    if pattern.starts_with('*') {
        return pattern.to_string();
    }
    canonical(pattern, "", None)
}

impl FromStr for ApprovalRule {
    type Err = RuleError;

    fn from_str(text: &str) -> Result<ApprovalRule, RuleError> {
        let malformed = |problem| RuleError::Malformed {
            rule: text.to_string(),
            problem,
        };
        let trimmed = text.trim();
        let (tool, subject) = match trimmed.split_once('(') {
            None => (trimmed, None),
            Some((tool, rest)) => {
                let inner = rest
                    .strip_suffix(')')
                    .ok_or_else(|| malformed("a `(` must be closed by a `)` at the end"))?;
                if inner.trim().is_empty() {
                    return Err(malformed("nothing between the parentheses (use `*`)"));
                }
                (tool, Some(inner.to_string()))
            }
        };
        let tool = tool.trim();
        if tool.is_empty() {
            return Err(malformed("no tool name before the parentheses"));
        }
        if !tool
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '*' | '?' | '.'))
        {
            return Err(malformed(
                "a tool name is letters, digits, `_`, `-`, `.` and the wildcards `*` `?`",
            ));
        }
        let whole = subject
            .as_deref()
            .is_none_or(|s| matches!(s.trim(), "*" | "**"));
        let named = match &subject {
            Some(s) if !whole && !tool.starts_with("shell") => named_argument(s.trim()),
            _ => None,
        };
        let command = match &subject {
            Some(s) if !whole && named.is_none() && may_cover_shell(tool) => {
                Some(pattern_command(s).map_err(malformed)?)
            }
            _ => None,
        };
        Ok(ApprovalRule {
            text: trimmed.to_string(),
            tool: tool.to_string(),
            subject,
            command,
            named,
        })
    }
}

impl fmt::Display for ApprovalRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Shell-style wildcard match of the whole `text`: `?` one character, `*` any run of
/// characters (not `/` when `paths`), `**` any run including `/`; `\c` is `c` itself.
pub(crate) fn glob(pattern: &str, text: &str, paths: bool) -> bool {
    // Each pattern element: a literal character, `?`, `*` (not crossing `/` when
    // `paths`) or `**`.
    #[derive(Clone, Copy, PartialEq)]
    enum Elem {
        Char(char),
        One,
        Run { crosses: bool },
    }
    let mut elems = Vec::new();
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => elems.push(Elem::Char(chars.next().unwrap_or('\\'))),
            '?' => elems.push(Elem::One),
            '*' => {
                let double = chars.peek() == Some(&'*');
                if double {
                    chars.next();
                }
                elems.push(Elem::Run {
                    crosses: !paths || double,
                });
            }
            c => elems.push(Elem::Char(c)),
        }
    }
    let t: Vec<char> = text.chars().collect();
    // matches[j]: the pattern so far matches the text's first j characters.
    let mut matches = vec![false; t.len() + 1];
    matches[0] = true;
    for elem in elems {
        let mut next = vec![false; t.len() + 1];
        match elem {
            Elem::Run { crosses } => {
                // One pass: a run reaches every position after one the pattern reached,
                // up to a `/` when it may not cross one (linear in the text).
                let mut reach = false;
                for j in 0..=t.len() {
                    reach |= matches[j];
                    next[j] = reach;
                    if !crosses && t.get(j) == Some(&'/') {
                        reach = false;
                    }
                }
            }
            Elem::One => {
                for j in 0..t.len() {
                    if matches[j] && !(paths && t[j] == '/') {
                        next[j + 1] = true;
                    }
                }
            }
            Elem::Char(c) => {
                for j in 0..t.len() {
                    if matches[j] && c == t[j] {
                        next[j + 1] = true;
                    }
                }
            }
        }
        matches = next;
    }
    matches[t.len()]
}
