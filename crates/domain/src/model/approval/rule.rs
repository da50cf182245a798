//! One approval rule as users write it (docs/approvals.md): a tool name pattern and, in
//! parentheses, a pattern of what the call is about: `shell_exec(git status*)`,
//! `file_write(src/**)`, `mcp__github__*`.

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

/// Why a rule could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RuleError {
    #[error("approval rule `{rule}`: {problem}")]
    Malformed { rule: String, problem: &'static str },
}

/// `tool(subject)`: matches calls to a tool whose name matches `tool` and whose subject (a
/// shell command, a file path) matches `subject`; without parentheses, any call to the tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRule {
    text: String,
    tool: String,
    subject: Option<String>,
}

impl ApprovalRule {
    /// Whether the rule covers a call to `tool` about `subject` (`None`: the call has none;
    /// only a rule without parentheses or with `(*)` covers it).
    pub fn matches(&self, tool: &str, subject: Option<&str>) -> bool {
        if !glob(&self.tool, tool, false) {
            return false;
        }
        match (&self.subject, subject) {
            (None, _) => true,
            (Some(pattern), Some(subject)) => glob(pattern, subject, is_path_tool(tool)),
            (Some(pattern), None) => pattern == "*" || pattern == "**",
        }
    }
}

/// File tools' subjects are paths: `*` stays within one folder, `**` crosses folders.
fn is_path_tool(tool: &str) -> bool {
    tool.starts_with("file_")
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
        Ok(ApprovalRule {
            text: trimmed.to_string(),
            tool: tool.to_string(),
            subject,
        })
    }
}

impl fmt::Display for ApprovalRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Shell-style wildcard match of the whole `text`: `?` one character, `*` any run of
/// characters (not `/` when `paths`), `**` any run including `/`.
pub(crate) fn glob(pattern: &str, text: &str, paths: bool) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // matches[j]: pattern prefix so far matches text prefix of length j.
    let mut matches = vec![false; t.len() + 1];
    matches[0] = true;
    let mut i = 0;
    while i < p.len() {
        let mut next = vec![false; t.len() + 1];
        match p[i] {
            '*' => {
                let crosses = !paths || p.get(i + 1) == Some(&'*');
                if p.get(i + 1) == Some(&'*') {
                    i += 1;
                }
                for j in 0..=t.len() {
                    if matches[j] {
                        next[j] = true;
                        let mut k = j;
                        while k < t.len() && (crosses || t[k] != '/') {
                            k += 1;
                            next[k] = true;
                        }
                    }
                }
            }
            c => {
                for j in 0..t.len() {
                    if matches[j] && (c == '?' || c == t[j]) && !(c == '?' && paths && t[j] == '/')
                    {
                        next[j + 1] = true;
                    }
                }
            }
        }
        matches = next;
        i += 1;
    }
    matches[t.len()]
}
