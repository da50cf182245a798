//! [`RunSettings`]: everything a run is built from, as plain values (no clap). The binary
//! reads them from its command line and config files (`crates/app/src/cli/settings.rs`
//! converts); an embedder fills them in directly, starting from [`RunSettings::default`],
//! whose values are the command line's defaults.

use std::path::PathBuf;
use std::time::Duration;

use domain::model::approval::{ApprovalMode, ApprovalRule};
use domain::{Mode, Revise, Schedule, SummaryStyle};

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

/// Who serves `web_search`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchChoice {
    Searxng,
    Brave,
    Tavily,
    /// No web search.
    None,
}

impl SearchChoice {
    /// The provider's name as the search adapter reads it.
    pub fn name(self) -> &'static str {
        match self {
            SearchChoice::Searxng => "searxng",
            SearchChoice::Brave => "brave",
            SearchChoice::Tavily => "tavily",
            SearchChoice::None => "none",
        }
    }
}

/// An OpenAI-compatible server preset, Anthropic's Messages API, or the embedded model
/// (`Local`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    OpenAi,
    Ollama,
    Vllm,
    LlamaCpp,
    DeepSeek,
    OpenRouter,
    LmStudio,
    /// Anthropic's Messages API (docs/anthropic.md).
    Anthropic,
    /// The embedded model, in process.
    Local,
}

/// The `[providers.anthropic]` table of a config file (docs/anthropic.md): each `None`
/// leaves the adapter's default (or the option that overrides it) in place.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AnthropicSettings {
    /// Below `--base-url` and `ANTHROPIC_BASE_URL`.
    pub base_url: Option<String>,
    /// The variable holding the key, below `--api-key-env`; else `ANTHROPIC_API_KEY`.
    pub api_key_env: Option<String>,
    /// The `max_tokens` of every request.
    pub max_tokens: Option<u32>,
    /// `cache_control` breakpoints on the stable prefix (on by default).
    pub prompt_caching: Option<bool>,
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
    pub sandbox: SandboxMode,
    pub sandbox_network: bool,
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
    pub provider: Option<Provider>,
    /// With `provider` Anthropic: the `[providers.anthropic]` table.
    pub anthropic: AnthropicSettings,
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
            sandbox: SandboxMode::Auto,
            sandbox_network: false,
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
            anthropic: AnthropicSettings::default(),
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
