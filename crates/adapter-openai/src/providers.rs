//! The OpenAI-compatible providers as the domain's [`ModelProvider`]s: one per [`Provider`]
//! preset (`--provider ollama`, ...), the first of which, `openai`, also serves a run that
//! names no provider when an endpoint is configured (`OPENAI_API_KEY`, `OPENAI_BASE_URL`,
//! `--base-url` or `--api-key-env`): then the plain client for that endpoint, no preset.
//! `planwright doctor` asks the endpoint for its models (`GET {base}/models`).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use domain::ports::{
    Chosen, Connected, Finding, Health, ModelProvider, ProviderError, ProviderInfo,
    ProviderSettings,
};

use crate::config::{OpenAiConfig, ToolProtocol};
use crate::provider::{Provider, API_KEY_VAR, BASE_URL_VAR};
use crate::OpenAiClient;

/// Models named at most on the doctor's line.
const SHOWN_MODELS: usize = 10;

static INFOS: [ProviderInfo; 7] = [
    info(
        Provider::OpenAi,
        &[],
        "https://api.openai.com/v1 (key required)",
    ),
    info(Provider::Ollama, &[], "http://localhost:11434/v1 (no key)"),
    info(Provider::Vllm, &[], "http://localhost:8000/v1"),
    info(
        Provider::LlamaCpp,
        &["llama.cpp", "llama-cpp"],
        "llama.cpp's llama-server, http://localhost:8080/v1",
    ),
    info(
        Provider::DeepSeek,
        &[],
        "https://api.deepseek.com/v1 (DEEPSEEK_API_KEY or OPENAI_API_KEY)",
    ),
    info(
        Provider::OpenRouter,
        &[],
        "https://openrouter.ai/api/v1 (OPENROUTER_API_KEY or OPENAI_API_KEY)",
    ),
    info(
        Provider::LmStudio,
        &["lm-studio"],
        "http://localhost:1234/v1 (no key)",
    ),
];

const fn info(
    preset: Provider,
    aliases: &'static [&'static str],
    help: &'static str,
) -> ProviderInfo {
    ProviderInfo {
        name: preset.name(),
        aliases,
        help,
        table: &[],
        endpoint_vars: match preset {
            Provider::OpenAi => &[API_KEY_VAR, BASE_URL_VAR],
            _ => &[],
        },
        embedded: false,
    }
}

/// The providers this crate offers, `openai` first (the runner lists them).
pub fn providers() -> Vec<Arc<dyn ModelProvider>> {
    Provider::ALL
        .into_iter()
        .map(|preset| Arc::new(Preset(preset)) as Arc<dyn ModelProvider>)
        .collect()
}

/// An OpenAI-compatible server preset.
#[derive(Debug, Clone, Copy)]
pub struct Preset(pub Provider);

impl Preset {
    /// The client's settings: the preset's (base URL from `--base-url`, else
    /// `OPENAI_BASE_URL`, else the preset's; the key from `--api-key-env`'s variable, else
    /// the preset's variables), or with `Chosen::Configured` the plain endpoint the
    /// environment names.
    pub fn config(
        &self,
        settings: &ProviderSettings,
        chosen: Chosen,
    ) -> Result<OpenAiConfig, ProviderError> {
        let named_key = settings.named_key(None)?;
        let base_flag = ProviderSettings::set(&settings.base_url);
        let mut config = if chosen == Chosen::Configured {
            let mut config = OpenAiConfig::new(&settings.model);
            config.api_key = named_key.or_else(|| settings.env(API_KEY_VAR));
            if let Some(base) = base_flag.or_else(|| settings.env(BASE_URL_VAR)) {
                config.base_url = base;
            }
            config
        } else {
            self.0
                .from_env(&settings.model, |var| match var {
                    BASE_URL_VAR => base_flag.clone().or_else(|| settings.env(var)),
                    _ if named_key.is_some() => named_key.clone(),
                    _ => settings.env(var),
                })
                .map_err(|e| ProviderError::Setup(e.to_string()))?
        };
        config.stream |= settings.stream;
        config.max_response_bytes = settings.max_reply_bytes;
        config.extra_root_certs = settings.extra_root_certs.clone();
        config.tool_protocol = if settings.text_tools {
            ToolProtocol::Text
        } else {
            ToolProtocol::Native
        };
        Ok(config)
    }
}

#[async_trait]
impl ModelProvider for Preset {
    fn info(&self) -> &'static ProviderInfo {
        let index = Provider::ALL
            .iter()
            .position(|p| *p == self.0)
            .unwrap_or_default();
        &INFOS[index]
    }

    /// `openai` only: an endpoint named by the environment or the options.
    fn configured(&self, settings: &ProviderSettings) -> bool {
        self.0 == Provider::OpenAi
            && (ProviderSettings::set(&settings.api_key_env).is_some()
                || ProviderSettings::set(&settings.base_url).is_some()
                || settings.env(API_KEY_VAR).is_some()
                || settings.env(BASE_URL_VAR).is_some())
    }

    fn connect(
        &self,
        settings: &ProviderSettings,
        chosen: Chosen,
    ) -> Result<Connected, ProviderError> {
        let config = self.config(settings, chosen)?;
        let secret = config.api_key.clone();
        let client = OpenAiClient::new(config)
            .map_err(|e| ProviderError::Setup(format!("cannot set up the OpenAI client: {e}")))?;
        Ok(Connected {
            client: Arc::new(client),
            secret,
        })
    }

    /// `GET {base}/models` with the doctor's timeout: reachable, the key accepted, the
    /// model served; nothing when the options do not pick it.
    async fn doctor(
        &self,
        settings: &ProviderSettings,
        chosen: Option<Chosen>,
        timeout: Duration,
    ) -> Vec<Finding> {
        let Some(chosen) = chosen else {
            return Vec::new();
        };
        vec![endpoint(self.config(settings, chosen), settings, timeout).await]
    }
}

async fn endpoint(
    config: Result<OpenAiConfig, ProviderError>,
    settings: &ProviderSettings,
    timeout: Duration,
) -> Finding {
    let line = |health, detail: String| Finding::new("endpoint", health, detail);
    let config = match config {
        Ok(config) => config,
        Err(e) => return line(Health::Fail, e.to_string()),
    };
    let base = config.base_url.trim_end_matches('/').to_string();
    let client = match http_client(settings, &base, timeout) {
        Ok(c) => c,
        Err(e) => return line(Health::Fail, e),
    };
    let mut request = client.get(format!("{base}/models"));
    // As the client sends it: trimmed, none when blank.
    if let Some(key) = config
        .api_key
        .as_deref()
        .map(str::trim)
        .filter(|k| !k.is_empty())
    {
        request = request.bearer_auth(key);
    }
    let response = match request.send().await {
        Ok(r) => r,
        Err(e) => {
            return line(
                Health::Fail,
                format!(
                    "{base} is not reachable ({}): start the server or fix OPENAI_BASE_URL / \
                     --base-url",
                    e.without_url()
                ),
            )
        }
    };
    let status = response.status();
    if status == reqwest::StatusCode::UNAUTHORIZED || status == reqwest::StatusCode::FORBIDDEN {
        return line(
            Health::Fail,
            format!("{base} refused the key (HTTP {status}): check OPENAI_API_KEY"),
        );
    }
    if !status.is_success() {
        return line(
            Health::Warn,
            format!(
                "{base} is reachable but answered HTTP {status} to GET /models (some servers \
                 do not list their models)"
            ),
        );
    }
    let models = match response.json::<serde_json::Value>().await {
        Ok(body) => model_ids(&body),
        Err(_) => Vec::new(),
    };
    served(&base, &config.model, &models)
}

/// The line of a reachable endpoint serving `models`; warns when `model` is not among them.
fn served(base: &str, model: &str, models: &[String]) -> Finding {
    let line = |health, detail: String| Finding::new("endpoint", health, detail);
    if models.is_empty() {
        return line(
            Health::Warn,
            format!("{base} is reachable but lists no model"),
        );
    }
    let mut shown = models
        .iter()
        .take(SHOWN_MODELS)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if models.len() > SHOWN_MODELS {
        shown.push_str(&format!(" and {} more", models.len() - SHOWN_MODELS));
    }
    if models.iter().any(|m| m == model) {
        line(Health::Ok, format!("{base} is reachable, serves {shown}"))
    } else {
        line(
            Health::Warn,
            format!(
                "{base} is reachable, serves {shown}, not the model {model}: pick one with \
                 --model or PLANWRIGHT_MODEL"
            ),
        )
    }
}

/// The `id`s of an OpenAI `GET /models` answer (`{"data": [{"id": ...}, ...]}`).
fn model_ids(body: &serde_json::Value) -> Vec<String> {
    body["data"]
        .as_array()
        .map(|models| {
            models
                .iter()
                .filter_map(|m| m["id"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// An HTTP client with the doctor's timeout, trusting `--ca-cert` as runs do (the
/// platform's roots only for an https endpoint, as the client).
fn http_client(
    settings: &ProviderSettings,
    base: &str,
    timeout: Duration,
) -> Result<reqwest::Client, String> {
    let scheme = base.split_once("://").map_or("", |(scheme, _)| scheme);
    http_client::client_builder(
        http_client::Roots::for_scheme(scheme),
        &settings.extra_root_certs,
    )
    .map_err(|e| format!("a --ca-cert file is not PEM: {e}"))?
    .timeout(timeout)
    .connect_timeout(timeout)
    .build()
    .map_err(|e| {
        format!(
            "cannot set up an HTTP client: {}",
            http_client::error_chain(&e)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_is_offered_under_its_name_with_its_url() {
        let offered = providers();
        assert_eq!(offered.len(), Provider::ALL.len());
        for (provider, preset) in offered.iter().zip(Provider::ALL) {
            assert_eq!(provider.info().name, preset.name());
            assert!(
                provider.info().help.contains(preset.base_url()),
                "{}: {} does not show {}",
                preset.name(),
                provider.info().help,
                preset.base_url()
            );
            for alias in provider.info().aliases {
                assert_eq!(alias.parse::<Provider>().ok(), Some(preset), "{alias}");
            }
        }
    }

    #[test]
    fn only_openai_is_picked_by_a_configured_endpoint_and_then_as_the_plain_endpoint() {
        let with = |vars: &'static [(&'static str, &'static str)]| {
            ProviderSettings::new("m").with_env(move |name: &str| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| (*v).to_owned())
            })
        };
        let none = with(&[]);
        let base = with(&[("OPENAI_BASE_URL", "http://h:1/v1")]);
        for preset in providers() {
            assert!(!preset.configured(&none));
            assert_eq!(
                preset.configured(&base),
                preset.info().name == "openai",
                "{}",
                preset.info().name
            );
        }
        let plain = Preset(Provider::OpenAi)
            .config(&base, Chosen::Configured)
            .unwrap();
        assert_eq!(plain.base_url, "http://h:1/v1");
        assert_eq!(plain.api_key, None);
        // By name, openai's hosted endpoint needs its key.
        let err = Preset(Provider::OpenAi)
            .config(&none, Chosen::ByName)
            .unwrap_err();
        assert!(err.to_string().contains("needs an API key"), "{err}");
        let mut named = with(&[("MINE", "sk-1")]);
        named.api_key_env = Some("MINE".into());
        assert!(!Preset(Provider::Ollama).configured(&named));
        assert_eq!(
            Preset(Provider::Ollama)
                .config(&named, Chosen::ByName)
                .unwrap()
                .api_key
                .as_deref(),
            Some("sk-1")
        );
        named.api_key_env = Some("UNSET".into());
        let err = Preset(Provider::Ollama)
            .config(&named, Chosen::ByName)
            .unwrap_err();
        assert!(err.to_string().contains("UNSET"), "{err}");
    }

    #[test]
    fn the_served_models_are_named_and_a_missing_one_warns() {
        let body = serde_json::json!({"object": "list", "data": [
            {"id": "gpt-4o-mini", "object": "model"}, {"id": "other", "object": "model"}]});
        let models = model_ids(&body);
        assert_eq!(models, ["gpt-4o-mini", "other"]);
        let ok = served("http://h/v1", "gpt-4o-mini", &models);
        assert_eq!(ok.health, Health::Ok);
        assert!(ok.detail.contains("serves gpt-4o-mini, other"), "{ok:?}");
        let warn = served("http://h/v1", "llama3", &models);
        assert_eq!(warn.health, Health::Warn);
        assert!(warn.detail.contains("--model"), "{warn:?}");
    }
}
