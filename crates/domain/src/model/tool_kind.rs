//! What a tool says of itself besides its schema (`ports::Tool::family`, `effect`): its
//! [`ToolFamily`], which the tool router reads to offer tools together, and its
//! [`ToolEffect`], which the approval policy judges (docs/approvals.md): they read these,
//! never a tool's name.

/// Which tools are offered to a step together (`engine/executor/router.rs`): the router
/// offers a family when the step needs it, and the families marked "always" to every step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ToolFamily {
    /// Runs commands in the workspace (`shell_exec`): offered unless the run acts in code
    /// only (`--actions code`). Its calls are judged as command lines by the approval rules.
    Shell,
    /// Runs a whole program in the workspace (`code_run`, docs/code-actions.md): offered
    /// unless the run acts through tools only (`--actions tools`).
    Code,
    /// Works a running shell session (`shell_view`, `shell_wait`, `shell_write`,
    /// `shell_kill`): offered once a command of the run became a session.
    ShellSession,
    /// Reads or writes the workspace's files, named by a `path` argument (`file_*`): offered
    /// unless the run acts in code only; approval rules compare that path.
    Files,
    /// Drives a web browser (`browser_*`): offered when the step or the task holds a web
    /// address, or the step's tag asks for the web.
    Browser,
    /// Searches the web (`web_search`): offered whenever a search provider is configured.
    WebSearch,
    /// Asks the user and waits (`message_ask_user`): always offered.
    AskUser,
    /// Tells the user something (`message_notify_user`): offered when the step's tag says to.
    NotifyUser,
    /// Any other tool (a custom tool, an MCP server's, `complete_step`): always offered.
    #[default]
    Other,
}

impl ToolFamily {
    /// Whether its tools work on the run's workspace (shell commands, sessions, files), so
    /// that a failure naming a file speaks of the workspace's files.
    pub fn works_in_workspace(self) -> bool {
        matches!(
            self,
            ToolFamily::Shell | ToolFamily::Code | ToolFamily::ShellSession | ToolFamily::Files
        )
    }
}

/// What a call to a tool does, as the approval policy judges it (docs/approvals.md): only
/// [`ToolEffect::Acts`] waits for a person under `--approval ask` and is refused under
/// `read-only`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ToolEffect {
    /// Only looks: reads files, lists folders (`file_read`, `file_list`).
    Reads,
    /// Changes something: runs commands, writes files. What a tool that says nothing is
    /// taken to do.
    #[default]
    Acts,
    /// Talks to the user (`message_*`).
    TalksToUser,
    /// Reads the web: browses, searches (`browser_*`, `web_search`).
    Network,
}

impl ToolEffect {
    /// Whether a call with this effect needs approval under `ask` and is refused under
    /// `read-only`.
    pub fn acts(self) -> bool {
        self == ToolEffect::Acts
    }
}
