//! The values of the command line's enumerated options (`--mode`, `--provider`...): the
//! domain's choices (modes, schedules, revise policies, approval modes) parsed by their own
//! [`Named`] list through [`NamedParser`], the app's own ones as clap enums.

use std::ffi::OsStr;
use std::marker::PhantomData;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::ValueEnum;
use domain::model::approval::{ApprovalRule, RuleError};
use domain::model::names::Named;

/// A clap value parser over a domain type's [`Named`] list: the names users may type, their
/// help lines in `--help`, completions and config keys all come from the domain.
#[derive(Debug)]
pub struct NamedParser<T>(PhantomData<T>);

impl<T> NamedParser<T> {
    pub fn new() -> NamedParser<T> {
        NamedParser(PhantomData)
    }
}

impl<T> Clone for NamedParser<T> {
    fn clone(&self) -> Self {
        NamedParser(PhantomData)
    }
}

impl<T: Named> NamedParser<T> {
    fn possible() -> impl Iterator<Item = PossibleValue> {
        T::all().iter().map(|v| {
            let value = PossibleValue::new(v.name());
            match v.help() {
                "" => value,
                help => value.help(help),
            }
        })
    }
}

impl<T: Named> TypedValueParser for NamedParser<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<T, clap::Error> {
        // clap's own parser of a list of names: the same errors as for any other choice.
        let name = PossibleValuesParser::new(Self::possible()).parse_ref(cmd, arg, value)?;
        T::from_name(&name).map_err(|e| clap::Error::raw(clap::error::ErrorKind::InvalidValue, e))
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(Self::possible()))
    }
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
    /// https://api.anthropic.com, the Messages API (ANTHROPIC_API_KEY; ANTHROPIC_BASE_URL
    /// overrides the URL)
    #[value(name = "anthropic")]
    Anthropic,
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
