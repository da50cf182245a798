//! [`RunSettings`]: everything a run is built from, as plain values (no clap). The binary
//! reads them from its command line and config files (`crates/app/src/cli/settings.rs`
//! converts); an embedder fills them in directly, starting from [`RunSettings::default`],
//! whose values are the command line's defaults.

use std::path::PathBuf;
use std::time::Duration;

use domain::model::approval::{ApprovalMode, ApprovalRule};
use domain::model::names::Named;
use domain::{Actions, Mode, Revise, Schedule, SummaryStyle};

/// Which sandbox shell commands run in (docs/security.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SandboxMode {
    /// bubblewrap when it works here, else none with a warning (servers refuse instead).
    #[default]
    Auto,
    /// No sandbox.
    None,
    /// bubblewrap, required.
    Bwrap,
}

impl Named for SandboxMode {
    const WHAT: &'static str = "sandbox";
    fn all() -> &'static [SandboxMode] {
        &[SandboxMode::Auto, SandboxMode::None, SandboxMode::Bwrap]
    }
    fn name(self) -> &'static str {
        match self {
            SandboxMode::Auto => "auto",
            SandboxMode::None => "none",
            SandboxMode::Bwrap => "bwrap",
        }
    }
    fn help(self) -> &'static str {
        match self {
            SandboxMode::Auto => {
                "bubblewrap when it works on this machine, else none with a warning; `serve` \
                 and `worker` refuse to start unsandboxed unless told `--sandbox none`"
            }
            SandboxMode::None => "Shell commands run with the user's rights, in the workspace",
            SandboxMode::Bwrap => {
                "bubblewrap: only the workspace is writable, the home folder is hidden, no \
                 network unless --sandbox-network"
            }
        }
    }
}

/// Who serves `web_search`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchChoice {
    Searxng,
    Brave,
    Tavily,
    /// No web search.
    None,
}

impl Named for SearchChoice {
    const WHAT: &'static str = "search provider";
    fn all() -> &'static [SearchChoice] {
        &[
            SearchChoice::Searxng,
            SearchChoice::Brave,
            SearchChoice::Tavily,
            SearchChoice::None,
        ]
    }
    /// The provider's name, as users type it and the search adapter reads it.
    fn name(self) -> &'static str {
        match self {
            SearchChoice::Searxng => "searxng",
            SearchChoice::Brave => "brave",
            SearchChoice::Tavily => "tavily",
            SearchChoice::None => "none",
        }
    }
    fn help(self) -> &'static str {
        match self {
            SearchChoice::Searxng => "A SearxNG instance (`--searxng-url`)",
            SearchChoice::Brave => "Brave Search (`BRAVE_API_KEY`)",
            SearchChoice::Tavily => "Tavily (`TAVILY_API_KEY`)",
            SearchChoice::None => "No web search: `web_search` is not offered",
        }
    }
}

/// How tools are offered to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolProtocol {
    /// The server's tool calling.
    #[default]
    Native,
    /// Tools described in the prompt.
    Text,
}

impl Named for ToolProtocol {
    const WHAT: &'static str = "tool protocol";
    fn all() -> &'static [ToolProtocol] {
        &[ToolProtocol::Native, ToolProtocol::Text]
    }
    fn name(self) -> &'static str {
        match self {
            ToolProtocol::Native => "native",
            ToolProtocol::Text => "text",
        }
    }
    fn help(self) -> &'static str {
        match self {
            ToolProtocol::Native => "The server's tool calling (`tools` / `tool_calls`)",
            ToolProtocol::Text => {
                "Tools described in the prompt; the model writes {\"tool\": ..., \"arguments\": ...}"
            }
        }
    }
}

/// Whether and how a run's workspace is checkpointed (docs/checkpoints.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointSettings {
    pub enabled: bool,
    /// Left out besides `.git` and `.planwright` (`NAME/`, `NAME`, `a/b`).
    pub ignore: Vec<String>,
    /// Files bigger than this (MiB) are recorded without their content.
    pub max_file_mib: u32,
}

impl Default for CheckpointSettings {
    fn default() -> CheckpointSettings {
        CheckpointSettings {
            enabled: true,
            ignore: vec!["target/".into(), "node_modules/".into()],
            max_file_mib: 16,
        }
    }
}

/// The settings of a run: the planning style, the model and its endpoint, the tools, the
/// limits and the lease (docs/configuration.md names each as a command-line option).
#[derive(Debug, Clone)]
pub struct RunSettings {
    pub mode: Mode,
    pub model: String,
    /// The run's workspace; `None`: its own under the runs' root.
    pub workspace: Option<PathBuf>,
    pub max_steps: u32,
    /// Zero: no limit.
    pub max_step_time: Duration,
    pub max_calls_per_reply: u32,
    pub schedule: Schedule,
    pub parallel: u32,
    pub retries: u32,
    pub retry_delay: Duration,
    pub max_revisions: u32,
    pub revise: Revise,
    pub max_todos: u32,
    pub verify: bool,
    pub model_path: Option<PathBuf>,
    pub approval: ApprovalMode,
    pub allow: Vec<ApprovalRule>,
    pub deny: Vec<ApprovalRule>,
    pub allow_input_edits: bool,
    /// Globs of workspace files no call may change (docs/security.md, "Input files").
    pub protect: Vec<String>,
    /// How executors act (docs/code-actions.md); `None`: by the model, code for the
    /// embedded one ([`default_actions`](crate::wiring::default_actions)).
    pub actions: Option<Actions>,
    /// Check a completed run's answer by reproducing it (docs/verification.md).
    pub verify_answers: bool,
    /// The workspace checkpoints (docs/checkpoints.md).
    pub checkpoints: CheckpointSettings,
    pub sandbox: SandboxMode,
    pub sandbox_network: bool,
    /// Sandboxed commands and the file tools may change `.git`, `.hg` and `.svn`.
    pub sandbox_vcs_writes: bool,
    pub shell_env: Vec<String>,
    pub disabled_tools: Vec<String>,
    pub search: Option<SearchChoice>,
    pub searxng_url: Option<String>,
    pub search_timeout_secs: Option<u64>,
    pub chromium: Option<PathBuf>,
    pub browser_allow_local: bool,
    pub ca_certs: Vec<PathBuf>,
    pub max_tokens: Option<u64>,
    pub max_plan_steps: Option<u32>,
    pub summary: SummaryStyle,
    pub lease: Duration,
    /// `--provider`: a provider's name or alias (`crate::providers`); `None` picks the
    /// configured endpoint, else the embedded model.
    pub provider: Option<String>,
    /// The config files' `[providers.NAME]` tables in effect, by provider name.
    pub provider_tables: std::collections::BTreeMap<String, domain::ports::ProviderTable>,
    /// The config files' MCP servers (docs/mcp.md), whose tools every run built from these
    /// settings is offered; clones share the one set (and its started servers).
    pub mcp_servers: crate::mcp::McpServers,
    /// Where the runs' notices for the user go (docs/architecture.md, `notice.rs`): the
    /// front end's writer, else the log.
    pub notices: crate::notice::Notices,
    /// The config file the command read in place of `./planwright.toml` (`--config`):
    /// read-only to the run's tools when it lies in the workspace.
    pub config_file: Option<PathBuf>,
    pub api_key_env: Option<String>,
    pub base_url: Option<String>,
    pub stream: bool,
    pub llm_max_reply_mib: u32,
    pub tool_protocol: ToolProtocol,
    /// Record the LLM's exchanges to this cassette.
    pub record: Option<PathBuf>,
    /// Replay this cassette instead of calling an LLM.
    pub replay: Option<PathBuf>,
}

impl Default for RunSettings {
    /// The command line's defaults (crates/app/src/cli/mod.rs, `RunOptions`).
    fn default() -> RunSettings {
        RunSettings {
            mode: Mode::Auto,
            model: "gpt-4o-mini".into(),
            workspace: None,
            max_steps: 20,
            max_step_time: Duration::from_secs(1800),
            max_calls_per_reply: 16,
            schedule: Schedule::EventDriven,
            parallel: 4,
            retries: 3,
            retry_delay: Duration::from_millis(1000),
            max_revisions: 5,
            revise: Revise::OnFailure,
            max_todos: 20,
            verify: false,
            model_path: None,
            approval: ApprovalMode::Auto,
            allow: Vec::new(),
            deny: Vec::new(),
            allow_input_edits: false,
            protect: Vec::new(),
            actions: None,
            verify_answers: true,
            checkpoints: CheckpointSettings::default(),
            sandbox: SandboxMode::Auto,
            sandbox_network: false,
            sandbox_vcs_writes: false,
            shell_env: Vec::new(),
            disabled_tools: Vec::new(),
            search: None,
            searxng_url: None,
            search_timeout_secs: None,
            chromium: None,
            browser_allow_local: false,
            ca_certs: Vec::new(),
            max_tokens: None,
            max_plan_steps: None,
            summary: SummaryStyle::Auto,
            lease: Duration::from_secs(30),
            provider: None,
            provider_tables: std::collections::BTreeMap::new(),
            mcp_servers: crate::mcp::McpServers::default(),
            notices: crate::notice::Notices::default(),
            config_file: None,
            api_key_env: None,
            base_url: None,
            stream: false,
            llm_max_reply_mib: 16,
            tool_protocol: ToolProtocol::Native,
            record: None,
            replay: None,
        }
    }
}
