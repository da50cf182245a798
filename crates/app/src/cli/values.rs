//! The values of the command line's enumerated options (`--mode`, `--provider`...).

use clap::ValueEnum;
use domain::model::approval::{ApprovalRule, RuleError};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// One upfront plan through the `planning` tool, steps in order.
    Flow,
    /// A JSON plan, one step at a time, unfinished steps revised as results come in.
    PlanAct,
    /// Start with 1-3 TODOs and add more as the work reveals them.
    Todo,
    /// Goal, sub-goals and actions with edges; independent actions run in parallel.
    Dag,
    /// Classify the task and pick direct, flow, dag or todo (rules first; docs/direct.md).
    Auto,
    /// No planner: the task is one step, done by one executor (docs/direct.md).
    Direct,
}

/// How the final summary is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SummaryArg {
    /// From the recorded facts when they say everything (one step, or every step succeeded
    /// with recorded outputs), else by an LLM call.
    Auto,
    /// Always from the recorded facts (no LLM call).
    Facts,
    /// Always by an LLM call.
    Llm,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SandboxArg {
    /// bubblewrap when it works on this machine, else none with a warning; `serve` and
    /// `worker` refuse to start unsandboxed unless told `--sandbox none`.
    Auto,
    /// Shell commands run with the user's rights, in the workspace.
    None,
    /// bubblewrap: only the workspace is writable, the home folder is hidden, no network
    /// unless --sandbox-network.
    Bwrap,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ApprovalArg {
    Auto,
    Ask,
    ReadOnly,
}

/// Who serves `web_search`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SearchArg {
    /// A SearxNG instance (`--searxng-url`).
    Searxng,
    /// Brave Search (`BRAVE_API_KEY`).
    Brave,
    /// Tavily (`TAVILY_API_KEY`).
    Tavily,
    /// No web search: `web_search` is not offered.
    None,
}

impl SearchArg {
    /// The provider's name as the search adapter reads it.
    #[cfg(feature = "search")]
    pub fn name(self) -> &'static str {
        match self {
            SearchArg::Searxng => "searxng",
            SearchArg::Brave => "brave",
            SearchArg::Tavily => "tavily",
            SearchArg::None => "none",
        }
    }
}

/// A `--disabled-tools` pattern: a tool name with `*` / `?` wildcards (`browser_*`).
pub(crate) fn tool_pattern(text: &str) -> Result<String, String> {
    let text = text.trim();
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '*' | '?');
    if text.is_empty() || !text.chars().all(allowed) {
        return Err(format!(
            "`{text}` is not a tool name or pattern (letters, digits, `_`, `-`, `*`, `?`)"
        ));
    }
    Ok(text.to_string())
}

/// An `--allow` / `--deny` rule (docs/approvals.md).
pub(crate) fn approval_rule(text: &str) -> Result<ApprovalRule, String> {
    text.parse().map_err(|e: RuleError| e.to_string())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScheduleArg {
    /// A step starts the moment its dependencies are done.
    Event,
    /// Waves: the next wave starts when the slowest step of this one ends.
    Superstep,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReviseArg {
    /// Revise after a failure, or when the executor flags that the plan no longer fits.
    OnFailure,
    /// Revise after every completed step too.
    EveryStep,
}

/// OpenAI-compatible server presets (`--provider`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
// The help text shows the URLs as they are (no Markdown in `--help`).
#[allow(rustdoc::bare_urls)]
pub enum ProviderArg {
    /// https://api.openai.com/v1 (key required)
    #[value(name = "openai")]
    OpenAi,
    /// http://localhost:11434/v1 (no key)
    #[value(name = "ollama")]
    Ollama,
    /// http://localhost:8000/v1
    #[value(name = "vllm")]
    Vllm,
    /// llama.cpp's llama-server, http://localhost:8080/v1
    #[value(name = "llamacpp", alias = "llama.cpp", alias = "llama-cpp")]
    LlamaCpp,
    /// https://api.deepseek.com/v1 (DEEPSEEK_API_KEY or OPENAI_API_KEY)
    #[value(name = "deepseek")]
    DeepSeek,
    /// https://openrouter.ai/api/v1 (OPENROUTER_API_KEY or OPENAI_API_KEY)
    #[value(name = "openrouter")]
    OpenRouter,
    /// http://localhost:1234/v1 (no key)
    #[value(name = "lmstudio", alias = "lm-studio")]
    LmStudio,
    /// The embedded model, in process, offline (`cargo xtask model` fetches Qwen2.5-Coder-1.5B;
    /// any GGUF with --model-path)
    #[value(name = "local")]
    Local,
}

/// How tools are offered to the model (`--tool-protocol`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ToolProtocolArg {
    /// The server's tool calling (`tools` / `tool_calls`).
    Native,
    /// Tools described in the prompt; the model writes {"tool": ..., "arguments": ...}.
    Text,
}
