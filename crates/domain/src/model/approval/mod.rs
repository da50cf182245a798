//! Approvals (docs/approvals.md): what a run may do without asking a person. A
//! [`ApprovalPolicy`] is a mode and two lists of [`ApprovalRule`]s; for each tool call it
//! gives a [`Verdict`]: go ahead, refuse (with the reason the model reads), or ask.
//!
//! Deny rules win over allow rules; rules apply in every mode. Without a matching rule,
//! `auto` lets everything run, `read-only` refuses every call that acts (shell commands,
//! writes) and `ask` asks a person before each one. Reading, browsing, searching and talking
//! to the user never need approval. What a call does is what its tool says
//! (`Tool::effect`), never read from its name.

mod call;
mod command;
mod judge;
mod paths;
mod pattern;
mod programs;
mod resolve;
mod rule;
mod shell;
#[cfg(test)]
mod tests;
mod variables;
mod written;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::model::names::Named;

pub use call::CallToJudge;
pub use judge::record_writes;
pub use resolve::{PathResolver, ResolvePaths};
pub(crate) use rule::glob;
pub use rule::{ApprovalRule, RuleError};
pub use written::WrittenFiles;

/// How calls that act are let through when no rule says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalMode {
    /// Every call runs (unless a deny rule says otherwise).
    #[default]
    Auto,
    /// A person says yes, no, or always-for-this-run before each call that acts.
    Ask,
    /// Every call that acts is refused; the run goes on reading, browsing and planning.
    ReadOnly,
}

impl ApprovalMode {
    pub const ALL: [ApprovalMode; 3] = [
        ApprovalMode::Auto,
        ApprovalMode::Ask,
        ApprovalMode::ReadOnly,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalMode::Auto => "auto",
            ApprovalMode::Ask => "ask",
            ApprovalMode::ReadOnly => "read-only",
        }
    }
}

impl fmt::Display for ApprovalMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Named for ApprovalMode {
    const WHAT: &'static str = "approval mode";
    fn all() -> &'static [ApprovalMode] {
        &ApprovalMode::ALL
    }
    fn name(self) -> &'static str {
        self.as_str()
    }
}

impl FromStr for ApprovalMode {
    type Err = String;
    fn from_str(s: &str) -> Result<ApprovalMode, String> {
        ApprovalMode::from_name(s).map_err(|e| e.to_string())
    }
}

/// What the policy says of one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Run,
    /// Refused; the reason is what the model reads.
    Refuse(String),
    /// A person must say (the mode asks).
    Ask,
    /// A person must say, because the rules cannot tell whether a deny rule covers the call
    /// (a command not understood, a script not seen); the reason says why. "Always" for the
    /// tool does not answer it.
    Unsure(String),
}

/// The run's approval settings.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ApprovalPolicy {
    pub mode: ApprovalMode,
    pub allow: Vec<ApprovalRule>,
    pub deny: Vec<ApprovalRule>,
    /// Resolves symbolic links in the paths the rules compare.
    pub paths: PathResolver,
}

impl ApprovalPolicy {
    pub fn judge(&self, call: &CallToJudge<'_>) -> Verdict {
        if self.allow.is_empty() && self.deny.is_empty() {
            return self.by_mode(call);
        }
        let canon = judge::Canon {
            workspace: call.workspace,
            resolver: &self.paths,
        };
        let subject = judge::Subject::of(call, canon);
        let mut unsure = None;
        for rule in &self.deny {
            match judge::denies(rule, call, &subject, canon) {
                judge::Denial::Yes => {
                    return Verdict::Refuse(format!(
                        "refused by the rule `{rule}` of this run's approval settings; do \
                         not try this call again, find another way or report that the step \
                         cannot be done"
                    ))
                }
                judge::Denial::Maybe(why) => {
                    unsure.get_or_insert_with(|| {
                        format!("the deny rule `{rule}` may cover this call: {why}")
                    });
                }
                judge::Denial::No => {}
            }
        }
        let allowed = judge::allowed(&self.allow, call, &subject, canon);
        if let Some(why) = unsure {
            if !allowed && self.mode == ApprovalMode::ReadOnly && call.acts() {
                return self.read_only(call);
            }
            return Verdict::Unsure(why);
        }
        if allowed {
            return Verdict::Run;
        }
        self.by_mode(call)
    }

    /// Checks every rule that names an argument against the tools offered
    /// ([`ApprovalRule::check_arguments`]): a rule naming one tool that does not take the
    /// argument is an error, not a rule silently judging nothing; a pattern rule (whose tools
    /// may be offered elsewhere: another server, a feature left out) that fits none is
    /// returned as a warning.
    pub fn check_arguments(
        &self,
        schemas: &[crate::ports::llm::ToolSchema],
    ) -> Result<Vec<RuleError>, RuleError> {
        let mut warnings = Vec::new();
        for rule in self.allow.iter().chain(&self.deny) {
            match rule.check_arguments(schemas) {
                Ok(()) => {}
                Err(e) if rule.names_a_pattern() => warnings.push(e),
                Err(e) => return Err(e),
            }
        }
        Ok(warnings)
    }

    /// The verdict when no rule says.
    fn by_mode(&self, call: &CallToJudge<'_>) -> Verdict {
        if !call.acts() {
            return Verdict::Run;
        }
        match self.mode {
            ApprovalMode::Auto => Verdict::Run,
            ApprovalMode::Ask => Verdict::Ask,
            ApprovalMode::ReadOnly => self.read_only(call),
        }
    }

    fn read_only(&self, call: &CallToJudge<'_>) -> Verdict {
        Verdict::Refuse(format!(
            "refused: this run is read-only (no shell commands, no writes); `{}` is not \
             allowed. Read, browse and plan instead, or report that the step needs a \
             write",
            call.tool
        ))
    }
}

/// A person's answer to an approval request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalDecision {
    Approve,
    Deny,
    /// Approve this call and every later call to the same tool in this run.
    Always,
}

impl ApprovalDecision {
    pub fn approves(self) -> bool {
        !matches!(self, ApprovalDecision::Deny)
    }
}

impl FromStr for ApprovalDecision {
    type Err = String;
    fn from_str(s: &str) -> Result<ApprovalDecision, String> {
        match s {
            "approve" | "yes" | "y" => Ok(ApprovalDecision::Approve),
            "deny" | "no" | "n" => Ok(ApprovalDecision::Deny),
            "always" | "a" => Ok(ApprovalDecision::Always),
            other => Err(format!(
                "unknown decision '{other}' (available: approve, deny, always)"
            )),
        }
    }
}
