//! One tool call as the approval policy sees it (docs/approvals.md).

use serde_json::Value;

use super::written::WrittenFiles;

/// One tool call as the policy sees it.
#[derive(Debug, Clone, Copy)]
pub struct CallToJudge<'a> {
    pub tool: &'a str,
    pub arguments: &'a Value,
    /// The tool is a read: it may run again with the same arguments (`Toolbox::idempotent`).
    pub reads_only: bool,
    /// The run's workspace folder (absolute), to make paths workspace-relative.
    pub workspace: Option<&'a str>,
    /// What the run wrote so far (scripts it runs are judged by their content).
    pub written: &'a WrittenFiles,
}

impl CallToJudge<'_> {
    /// Whether the call changes something: shell commands always; other tools unless they
    /// only read. Browsing, searching and talking to the user do not count as acting.
    pub fn acts(&self) -> bool {
        if self.tool.starts_with("shell_") {
            return true;
        }
        let looks = [
            "browser_",
            "message_",
            "web_search",
            "planning",
            "complete_step",
        ]
        .iter()
        .any(|p| self.tool.starts_with(p));
        !self.reads_only && !looks
    }
}
