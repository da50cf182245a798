//! # adapter-tools-shell
//!
//! Shell and file tools for Planwright agents, all confined to the run's workspace folder
//! ([`domain::ports::ToolContext::workspace`]). It implements the domain port
//! [`domain::ports::Tool`]; `domain` must not depend on this crate (the app wires it in).
//!
//! | tool | arguments | idempotent |
//! |------|-----------|------------|
//! | `shell_exec` | `command`, `timeout_secs?`, `wait_secs?`, `changes?` | no |
//! | `code_run` | `language` (`python`, `bash`), `code`, `changes?` | no |
//! | `shell_view` | `id` | no |
//! | `shell_wait` | `id`, `seconds` | no |
//! | `shell_write` | `id`, `input`, `press_enter?` | no |
//! | `shell_kill` | `id` | no |
//! | `file_read` | `path`, `start_line?`, `end_line?` | yes |
//! | `file_write` | `path`, `content`, `append?` | no |
//! | `file_str_replace` | `path`, `old` + `new` + `replace_all?`, or `edits` | no |
//! | `file_list` | `path?` | yes |
//!
//! Every path argument goes through [`workspace::resolve`], which refuses anything that
//! leaves the workspace (`..`, foreign absolute paths, symbolic links pointing outside).
//!
//! ## Shell commands and sessions
//!
//! `shell_exec` runs `bash -c` in the workspace, in its own process group, with an
//! allow-listed environment ([`env`](mod@env): no secret of Planwright's reaches it) and resource
//! limits, stdin an open pipe, output captured into bounded buffers
//! (head and tail kept) and a hard timeout (`timeout_secs`) that kills the whole group.
//! It waits up to `wait_secs` (default 30 s, at most the timeout; both 1 to 600 s, and a
//! value outside its range is an error naming the range, as for every numeric argument of
//! these tools, see `domain::tools::args`):
//!
//! - if the command ends by then, the reply is its exit code, stdout and stderr;
//! - otherwise the reply is `still running after N s; session id: shN` with the output so
//!   far, and the command keeps running as a **session** of the run in
//!   [`ShellSessions`]: `shell_view` shows its status and new output, `shell_wait` waits
//!   for its end, `shell_write` types into its stdin, `shell_kill` kills its group. Each
//!   of these replies shows only the output produced since the previous reply about the
//!   session (capped per stream like `shell_exec`'s).
//!
//! A session's command still dies at its hard timeout, when the run is cancelled (the
//! context's token), when the app calls [`ShellSessions::close_run`] at the end of the run,
//! and when the registry is dropped. When its main process exits, whatever it left in its
//! process group is killed. A run sees only its own sessions.
//!
//! ## Programs
//!
//! `code_run` runs a whole program, Python 3 or bash, the way `shell_exec` runs a command
//! (same sandbox, environment and limits), waits for its end (no session; stdin empty) and
//! answers with its exit code, output and the files it created, changed or deleted
//! (docs/code-actions.md).
//!
//! ## Sandbox
//!
//! With [`Sandbox::Bwrap`], commands run inside bubblewrap (see [`sandbox`] for the exact
//! command line): the command sees `/usr`, a few `/etc` files and its workspace (read-write)
//! and nothing else of the host, has a private `/tmp` and process namespace, no network
//! unless allowed, no capabilities even for root, and dies with Planwright. If bwrap is missing or cannot create namespaces, `shell_exec` fails with the
//! reason ([`bwrap_available`] tells beforehand); it never falls back to running
//! unsandboxed. The file tools are confined by path checks in both modes.
//!
//! ## Input files
//!
//! [`LocalWorkspaceFiles`] implements the domain's `WorkspaceFiles` port beside the tools:
//! the runtime lists a run's workspace with it, keeps copies of the input files outside the
//! workspace, and restores an input a tool call changed without permission
//! (docs/security.md, "Input files").
//!
//! ## Checkpoints
//!
//! [`LocalCheckpoints`] implements the domain's `WorkspaceCheckpoints` port: a
//! content-addressed record of the workspace before each step and at the run's end, kept
//! beside the input copies, compared (a unified diff per text file) and restored by an undo
//! (docs/checkpoints.md).
//!
//! Use [`shell_toolkit`] to get all nine tools and the registry handle the app needs, or
//! [`shell_tools`] / [`shell_tools_with`] for the tools alone.

use std::sync::Arc;
use std::time::Duration;

use domain::ports::Tool;

mod args;
mod capture;
mod cgroup;
mod checkpoints;
mod code;
mod containment;
pub mod env;
mod etc_stage;
mod files;
mod limits;
mod process;
mod report;
pub mod sandbox;
mod session_tools;
mod sessions;
mod shell;
mod supervisor;
pub mod workspace;
mod workspace_files;

pub use checkpoints::{CheckpointLimits, LocalCheckpoints};
pub use code::CodeRunTool;
pub use domain::tools::code::CODE_RUN;
pub use env::ShellEnv;
pub use files::{FileListArgs, FileReadArgs, FileStrReplaceArgs, FileWriteArgs};
pub use files::{FileListTool, FileReadTool, FileStrReplaceTool, FileWriteTool};
pub use sandbox::{bwrap_available, Sandbox, VCS_FOLDERS};
pub use session_tools::{ShellKillArgs, ShellViewArgs, ShellWaitArgs, ShellWriteArgs};
pub use session_tools::{ShellKillTool, ShellViewTool, ShellWaitTool, ShellWriteTool};
pub use sessions::ShellSessions;
pub use shell::{ShellExecArgs, ShellExecTool};
pub use workspace_files::LocalWorkspaceFiles;

/// Name of the shell tool.
pub const SHELL_EXEC: &str = "shell_exec";
/// Name of the tool showing a shell session's status and new output.
pub const SHELL_VIEW: &str = "shell_view";
/// Name of the tool waiting for a shell session's end.
pub const SHELL_WAIT: &str = "shell_wait";
/// Name of the tool typing into a shell session's stdin.
pub const SHELL_WRITE: &str = "shell_write";
/// Name of the tool killing a shell session.
pub const SHELL_KILL: &str = "shell_kill";
/// Name of the file reading tool.
pub const FILE_READ: &str = "file_read";
/// Name of the file writing tool.
pub const FILE_WRITE: &str = "file_write";
/// Name of the exact-text replacement tool.
pub const FILE_STR_REPLACE: &str = "file_str_replace";
/// Name of the directory listing tool.
pub const FILE_LIST: &str = "file_list";

/// Limits of the tools built by [`shell_toolkit`] and [`shell_tools_with`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellToolsConfig {
    /// `shell_exec` timeout when the call gives no `timeout_secs` (default 60 s). The
    /// command and its process group are killed when it expires, session or not.
    pub default_timeout: Duration,
    /// Largest `timeout_secs` and `wait_secs` a call may ask for; larger ones are refused
    /// with an error naming the range (default 600 s).
    pub max_timeout: Duration,
    /// How long `shell_exec` waits for its command when the call gives no `wait_secs`
    /// before returning "still running" with a session id (default 30 s; a wait is never
    /// longer than the call's timeout).
    pub default_wait: Duration,
    /// Bytes kept per output stream of `shell_exec` and per look at a session: the first
    /// half and the last half (default 64 KiB).
    pub max_output_bytes: usize,
    /// Largest output of one `file_read` call (default 256 KiB).
    pub max_read_bytes: usize,
    /// How deep `file_list` descends (default 3: entries, their children, grandchildren).
    pub max_list_depth: usize,
    /// Most entries one `file_list` call shows (default 500).
    pub max_list_entries: usize,
    /// Where shell commands run (default [`Sandbox::None`]).
    pub sandbox: Sandbox,
    /// Which of Planwright's environment variables commands see (default: the built-in
    /// allow-list only; see [`env`](mod@crate::env)).
    pub env: ShellEnv,
    /// Paths that stay read-only inside the sandbox when they lie in the workspace, and that
    /// `file_write` and `file_str_replace` refuse to change; a relative one (`.git`) names
    /// that path in every workspace (default none; see [`ShellExecTool::with_read_only`]).
    pub read_only: Vec<std::path::PathBuf>,
}

impl Default for ShellToolsConfig {
    fn default() -> Self {
        ShellToolsConfig {
            default_timeout: shell::DEFAULT_TIMEOUT,
            max_timeout: shell::MAX_TIMEOUT,
            default_wait: shell::DEFAULT_WAIT,
            max_output_bytes: shell::DEFAULT_MAX_OUTPUT_BYTES,
            max_read_bytes: files::DEFAULT_MAX_READ_BYTES,
            max_list_depth: files::DEFAULT_LIST_DEPTH,
            max_list_entries: files::DEFAULT_LIST_ENTRIES,
            sandbox: Sandbox::None,
            env: ShellEnv::default(),
            read_only: Vec::new(),
        }
    }
}

/// The tools and the handle on their shared session registry.
#[derive(Clone)]
pub struct ShellToolkit {
    /// `shell_exec`, `code_run`, `file_read`, `file_write`, `file_str_replace`,
    /// `file_list`, `shell_view`, `shell_wait`, `shell_write`, `shell_kill`, in this order.
    pub tools: Vec<Arc<dyn Tool>>,
    /// The registry of the shell sessions: call [`ShellSessions::close_run`] when a run
    /// ends. Dropping it together with the tools kills whatever still runs.
    pub sessions: ShellSessions,
}

impl std::fmt::Debug for ShellToolkit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShellToolkit")
            .field(
                "tools",
                &self.tools.iter().map(|t| t.name()).collect::<Vec<_>>(),
            )
            .field("sessions", &self.sessions)
            .finish()
    }
}

/// All ten tools, sharing one session registry, with the given limits.
pub fn shell_toolkit(config: &ShellToolsConfig) -> ShellToolkit {
    let sessions = ShellSessions::new();
    let shell = ShellExecTool::new(config.default_timeout)
        .with_max_timeout(config.max_timeout)
        .with_max_output_bytes(config.max_output_bytes)
        .with_default_wait(config.default_wait)
        .with_sandbox(config.sandbox)
        .with_read_only(config.read_only.clone())
        .with_env(config.env.clone())
        .with_sessions(sessions.clone());
    let tools: Vec<Arc<dyn Tool>> = vec![
        Arc::new(shell.clone()),
        Arc::new(CodeRunTool::new(shell)),
        Arc::new(FileReadTool::new().with_max_bytes(config.max_read_bytes)),
        Arc::new(FileWriteTool::new().with_read_only(config.read_only.clone())),
        Arc::new(FileStrReplaceTool::new().with_read_only(config.read_only.clone())),
        Arc::new(FileListTool::new().with_limits(config.max_list_depth, config.max_list_entries)),
        Arc::new(ShellViewTool::new(sessions.clone())),
        Arc::new(ShellWaitTool::new(sessions.clone())),
        Arc::new(ShellWriteTool::new(sessions.clone())),
        Arc::new(ShellKillTool::new(sessions.clone())),
    ];
    ShellToolkit { tools, sessions }
}

/// All ten tools with default limits.
pub fn shell_tools() -> Vec<Arc<dyn Tool>> {
    shell_tools_with(&ShellToolsConfig::default())
}

/// All ten tools with the given limits. Their session registry is only reachable through
/// the tools: sessions end at their timeout or when the tools are dropped. Use
/// [`shell_toolkit`] to be able to close a run's sessions when it ends.
pub fn shell_tools_with(config: &ShellToolsConfig) -> Vec<Arc<dyn Tool>> {
    shell_toolkit(config).tools
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_ten_tools_with_unique_names_and_object_schemas() {
        let tools = shell_tools();
        let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
        assert_eq!(
            names,
            [
                SHELL_EXEC,
                CODE_RUN,
                FILE_READ,
                FILE_WRITE,
                FILE_STR_REPLACE,
                FILE_LIST,
                SHELL_VIEW,
                SHELL_WAIT,
                SHELL_WRITE,
                SHELL_KILL
            ]
        );
        for tool in &tools {
            let schema = tool.parameters();
            assert_eq!(schema["type"], "object", "{}", tool.name());
            assert!(schema["properties"].is_object(), "{}", tool.name());
            assert!(schema.get("$schema").is_none());
            assert!(schema.get("title").is_none());
            assert!(tool.description().len() > 40);
        }
        let idempotent: Vec<&str> = tools
            .iter()
            .filter(|t| t.idempotent())
            .map(|t| t.name())
            .collect();
        assert_eq!(idempotent, [FILE_READ, FILE_LIST]);
    }

    /// What the router and the approval policy read of each tool (issue 30): the shell
    /// always offered and acting, the sessions offered once one exists and acting, the
    /// file tools always offered, reading or writing.
    #[test]
    fn each_tool_declares_its_family_and_effect() {
        use domain::ports::{ToolEffect as E, ToolFamily as F};
        let tools = shell_tools();
        let declared: Vec<(&str, F, E)> = tools
            .iter()
            .map(|t| (t.name(), t.family(), t.effect()))
            .collect();
        assert_eq!(
            declared,
            [
                (SHELL_EXEC, F::Shell, E::Acts),
                (CODE_RUN, F::Code, E::Acts),
                (FILE_READ, F::Files, E::Reads),
                (FILE_WRITE, F::Files, E::Acts),
                (FILE_STR_REPLACE, F::Files, E::Acts),
                (FILE_LIST, F::Files, E::Reads),
                (SHELL_VIEW, F::ShellSession, E::Acts),
                (SHELL_WAIT, F::ShellSession, E::Acts),
                (SHELL_WRITE, F::ShellSession, E::Acts),
                (SHELL_KILL, F::ShellSession, E::Acts),
            ]
        );
    }

    #[test]
    fn schemas_carry_the_contract() {
        let tools = shell_tools();
        let shell = tools[0].parameters();
        assert_eq!(shell["required"], serde_json::json!(["command"]));
        assert_eq!(shell["properties"]["timeout_secs"]["type"], "integer");
        assert_eq!(shell["properties"]["timeout_secs"]["minimum"], 1);
        assert_eq!(shell["properties"]["changes"]["type"], "array");
        let code = tools[1].parameters();
        assert_eq!(code["required"], serde_json::json!(["language", "code"]));
        let read = tools[2].parameters();
        assert_eq!(read["required"], serde_json::json!(["path"]));
        assert_eq!(read["properties"]["start_line"]["minimum"], 1);
        let write = tools[3].parameters();
        assert_eq!(write["required"], serde_json::json!(["path", "content"]));
        assert_eq!(write["properties"]["append"]["type"], "boolean");
        let replace = tools[4].parameters();
        assert_eq!(replace["required"], serde_json::json!(["path"]));
        assert_eq!(replace["properties"]["replace_all"]["type"], "boolean");
        assert_eq!(replace["properties"]["edits"]["type"], "array");
        let list = tools[5].parameters();
        assert!(list.get("required").is_none());
        assert_eq!(list["properties"]["path"]["type"], "string");
        assert_eq!(shell["properties"]["wait_secs"]["type"], "integer");
        assert_eq!(shell["properties"]["wait_secs"]["minimum"], 1);
        for (tool, required) in [
            (&tools[6], serde_json::json!(["id"])),
            (&tools[7], serde_json::json!(["id", "seconds"])),
            (&tools[8], serde_json::json!(["id", "input"])),
            (&tools[9], serde_json::json!(["id"])),
        ] {
            let schema = tool.parameters();
            assert_eq!(schema["required"], required, "{}", tool.name());
            assert_eq!(schema["properties"]["id"]["type"], "string");
            assert_eq!(schema["additionalProperties"], false);
        }
    }

    #[test]
    fn the_toolkit_shares_one_registry_and_applies_the_config() {
        let kit = shell_toolkit(&ShellToolsConfig {
            default_wait: Duration::from_secs(7),
            sandbox: Sandbox::Bwrap {
                allow_network: true,
            },
            ..ShellToolsConfig::default()
        });
        assert_eq!(kit.tools.len(), 10);
        let exec = kit.tools[0].description();
        assert!(exec.contains("wait_secs (default 7)"), "{exec}");
        assert!(exec.contains("Sandboxed"), "{exec}");
        assert!(!exec.contains("no network"), "{exec}");
        assert_eq!(ShellToolsConfig::default().sandbox, Sandbox::None);
        assert_eq!(
            ShellToolsConfig::default().default_wait,
            Duration::from_secs(30)
        );
        assert!(format!("{kit:?}").contains("shell_kill"));
    }
}
