//! One tool call as the approval policy sees it (docs/approvals.md).

use serde_json::Value;

use super::written::WrittenFiles;
use crate::model::tool_kind::{ToolEffect, ToolFamily};

/// One tool call as the policy sees it.
#[derive(Debug, Clone, Copy)]
pub struct CallToJudge<'a> {
    pub tool: &'a str,
    pub arguments: &'a Value,
    /// What the tool says its calls do (`Toolbox::effect`).
    pub effect: ToolEffect,
    /// The tool's family (`Toolbox::family`): a [`ToolFamily::Files`] tool's `path` is
    /// compared as a path.
    pub family: ToolFamily,
    /// The run's workspace folder (absolute), to make paths workspace-relative.
    pub workspace: Option<&'a str>,
    /// What the run wrote so far (scripts it runs are judged by their content).
    pub written: &'a WrittenFiles,
}

impl CallToJudge<'_> {
    /// Whether the call changes something, as its tool says ([`ToolEffect::Acts`]: shell
    /// commands, writes, and any tool that does not say). Reading, browsing, searching and
    /// talking to the user do not count as acting.
    pub fn acts(&self) -> bool {
        self.effect.acts()
    }
}
