//! [`Provider`]: named presets for the servers people point agents at, each setting the base
//! URL, whether a key is needed and the server's quirks.

use std::fmt;
use std::str::FromStr;

use crate::config::{OpenAiConfig, ReasoningEcho};
use crate::error::Error;

/// The environment variable that overrides a preset's base URL.
pub const BASE_URL_VAR: &str = "OPENAI_BASE_URL";
/// The API key variable every preset reads (after its own, if it has one).
pub const API_KEY_VAR: &str = "OPENAI_API_KEY";

/// An OpenAI-compatible server with known defaults and quirks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Provider {
    /// `https://api.openai.com/v1`; key required.
    OpenAi,
    /// Ollama's `/v1` compatibility layer, `http://localhost:11434/v1`; no key.
    Ollama,
    /// vLLM's OpenAI server, `http://localhost:8000/v1`; a key only if started with one.
    Vllm,
    /// llama.cpp's `llama-server`, `http://localhost:8080/v1`; no key.
    LlamaCpp,
    /// `https://api.deepseek.com/v1`; key required; `reasoning_content` sent back within a
    /// turn; `json_object` but no `json_schema`.
    DeepSeek,
    /// `https://openrouter.ai/api/v1`; key required.
    OpenRouter,
    /// LM Studio's server, `http://localhost:1234/v1`; no key; `json_schema` but no
    /// `json_object` ("'response_format.type' must be 'json_schema'").
    LmStudio,
}

impl Provider {
    pub const ALL: [Provider; 7] = [
        Provider::OpenAi,
        Provider::Ollama,
        Provider::Vllm,
        Provider::LlamaCpp,
        Provider::DeepSeek,
        Provider::OpenRouter,
        Provider::LmStudio,
    ];

    /// The name used on the command line (`openai`, `ollama`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            Provider::OpenAi => "openai",
            Provider::Ollama => "ollama",
            Provider::Vllm => "vllm",
            Provider::LlamaCpp => "llamacpp",
            Provider::DeepSeek => "deepseek",
            Provider::OpenRouter => "openrouter",
            Provider::LmStudio => "lmstudio",
        }
    }

    pub fn base_url(self) -> &'static str {
        match self {
            Provider::OpenAi => crate::config::DEFAULT_BASE_URL,
            Provider::Ollama => "http://localhost:11434/v1",
            Provider::Vllm => "http://localhost:8000/v1",
            Provider::LlamaCpp => "http://localhost:8080/v1",
            Provider::DeepSeek => "https://api.deepseek.com/v1",
            Provider::OpenRouter => "https://openrouter.ai/api/v1",
            Provider::LmStudio => "http://localhost:1234/v1",
        }
    }

    /// Whether the hosted service refuses requests without a key.
    pub fn requires_key(self) -> bool {
        matches!(
            self,
            Provider::OpenAi | Provider::DeepSeek | Provider::OpenRouter
        )
    }

    /// Environment variables holding the key, first found wins.
    pub fn key_vars(self) -> &'static [&'static str] {
        match self {
            Provider::DeepSeek => &["DEEPSEEK_API_KEY", API_KEY_VAR],
            Provider::OpenRouter => &["OPENROUTER_API_KEY", API_KEY_VAR],
            _ => &[API_KEY_VAR],
        }
    }

    /// The preset's configuration for `model`, without a key.
    pub fn config(self, model: impl Into<String>) -> OpenAiConfig {
        let base = OpenAiConfig::new(model).with_base_url(self.base_url());
        match self {
            Provider::OpenAi => base.with_reasoning_echo(ReasoningEcho::Never),
            Provider::Ollama | Provider::LlamaCpp => OpenAiConfig {
                stream_usage: false,
                ..base
            },
            Provider::Vllm | Provider::OpenRouter => base,
            Provider::DeepSeek => base
                .with_response_formats(false, true)
                .with_reasoning_echo(ReasoningEcho::CurrentTurn),
            Provider::LmStudio => OpenAiConfig {
                stream_usage: false,
                ..base.with_response_formats(true, false)
            },
        }
    }

    /// The preset's configuration with the base URL and key taken from `base_url` (an
    /// override) and `api_key`. A preset that requires a key and gets none is an error.
    pub fn configure(
        self,
        model: impl Into<String>,
        base_url: Option<&str>,
        api_key: Option<&str>,
    ) -> Result<OpenAiConfig, Error> {
        let mut config = self.config(model);
        if let Some(url) = base_url.map(str::trim).filter(|u| !u.is_empty()) {
            config.base_url = url.to_owned();
        }
        match api_key.map(str::trim).filter(|k| !k.is_empty()) {
            Some(key) => config.api_key = Some(key.to_owned()),
            None if self.requires_key() => {
                return Err(Error::MissingApiKey {
                    provider: self.name(),
                    vars: self.key_vars().join(" or "),
                })
            }
            None => {}
        }
        Ok(config)
    }

    /// [`Provider::configure`] from the environment, read through `env`:
    /// `OPENAI_BASE_URL` overrides the URL; the key is the first set of [`Self::key_vars`].
    pub fn from_env(
        self,
        model: impl Into<String>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<OpenAiConfig, Error> {
        let non_blank = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        let base = non_blank(BASE_URL_VAR);
        let key = self.key_vars().iter().find_map(|var| non_blank(var));
        self.configure(model, base.as_deref(), key.as_deref())
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Provider {
    type Err = Error;

    /// A preset name, case-insensitive; `llama.cpp`, `llama-cpp`, `lm-studio` also work.
    fn from_str(s: &str) -> Result<Provider, Error> {
        let wanted: String = s
            .trim()
            .to_ascii_lowercase()
            .chars()
            .filter(|c| !matches!(c, '-' | '_' | '.' | ' '))
            .collect();
        Provider::ALL
            .into_iter()
            .find(|p| p.name() == wanted)
            .ok_or_else(|| Error::UnknownProvider(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn names_round_trip_and_aliases_parse() {
        for p in Provider::ALL {
            assert_eq!(p.name().parse::<Provider>().unwrap(), p);
            assert_eq!(p.to_string(), p.name());
        }
        assert_eq!("llama.cpp".parse::<Provider>().unwrap(), Provider::LlamaCpp);
        assert_eq!("LM-Studio".parse::<Provider>().unwrap(), Provider::LmStudio);
        assert_eq!("OpenAI".parse::<Provider>().unwrap(), Provider::OpenAi);
        let err = "gemini".parse::<Provider>().unwrap_err();
        assert!(err.to_string().contains("gemini"), "{err}");
        assert!(err.to_string().contains("ollama"), "{err}");
    }

    #[test]
    fn presets_set_url_and_quirks() {
        let ollama = Provider::Ollama.config("llama3.2");
        assert_eq!(ollama.base_url, "http://localhost:11434/v1");
        assert!(!ollama.stream_usage);
        let deepseek = Provider::DeepSeek.config("deepseek-chat");
        assert!(!deepseek.json_schema && deepseek.json_object);
        assert_eq!(deepseek.reasoning_echo, ReasoningEcho::CurrentTurn);
        let lmstudio = Provider::LmStudio.config("qwen");
        assert!(lmstudio.json_schema && !lmstudio.json_object);
        assert_eq!(
            Provider::Vllm.config("m").base_url,
            "http://localhost:8000/v1"
        );
        assert_eq!(
            Provider::LlamaCpp.config("m").base_url,
            "http://localhost:8080/v1"
        );
        assert_eq!(
            Provider::OpenRouter.config("m").base_url,
            "https://openrouter.ai/api/v1"
        );
        assert_eq!(
            Provider::OpenAi.config("m").base_url,
            "https://api.openai.com/v1"
        );
    }

    #[test]
    fn base_url_override_and_keys_from_the_environment() {
        let c = Provider::Ollama
            .from_env("m", env(&[("OPENAI_BASE_URL", "http://gpu-box:11434/v1")]))
            .unwrap();
        assert_eq!(c.base_url, "http://gpu-box:11434/v1");
        assert_eq!(c.api_key, None);

        let c = Provider::DeepSeek
            .from_env(
                "m",
                env(&[("DEEPSEEK_API_KEY", "sk-ds"), ("OPENAI_API_KEY", "sk-oa")]),
            )
            .unwrap();
        assert_eq!(c.api_key.as_deref(), Some("sk-ds"));
        let c = Provider::DeepSeek
            .from_env("m", env(&[("OPENAI_API_KEY", "sk-oa")]))
            .unwrap();
        assert_eq!(c.api_key.as_deref(), Some("sk-oa"));
    }

    #[test]
    fn a_missing_required_key_is_an_error_naming_the_variables() {
        let err = Provider::OpenRouter
            .from_env("m", env(&[("OPENAI_API_KEY", "  ")]))
            .unwrap_err();
        let text = err.to_string();
        assert!(text.contains("openrouter"), "{text}");
        assert!(
            text.contains("OPENROUTER_API_KEY or OPENAI_API_KEY"),
            "{text}"
        );
        assert!(Provider::OpenAi.from_env("m", env(&[])).is_err());
        assert!(Provider::LmStudio.from_env("m", env(&[])).is_ok());
    }
}
