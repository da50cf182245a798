//! `--provider anthropic` (docs/anthropic.md) as the domain's [`ModelProvider`]: its name,
//! its `[providers.anthropic]` table, its client from a run's settings, the key check before
//! a run and `planwright doctor`'s line. The key comes from the variable `--api-key-env` (or
//! the table's `api_key_env`) names, else `ANTHROPIC_API_KEY`; the base URL from
//! `--base-url`, else `ANTHROPIC_BASE_URL`, else the table's `base_url`, else Anthropic's
//! endpoint. A missing key is an error before the run's first step.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use domain::ports::{
    Chosen, Connected, Finding, Health, KeyKind, ModelProvider, ProviderError, ProviderInfo,
    ProviderSettings, TableKey,
};
use domain::LlmError;

use crate::{AnthropicClient, AnthropicConfig, API_KEY_VAR, BASE_URL_VAR};

static INFO: ProviderInfo = ProviderInfo {
    name: "anthropic",
    aliases: &[],
    help: "https://api.anthropic.com, the Messages API (ANTHROPIC_API_KEY; ANTHROPIC_BASE_URL \
           overrides the URL)",
    table: &[
        TableKey {
            name: "base_url",
            kind: KeyKind::Text,
            default: "`https://api.anthropic.com`",
            help: "The API root (requests go to `{base_url}/v1/messages`); `--base-url` and \
                   `ANTHROPIC_BASE_URL` come first.",
            pinned: true,
        },
        TableKey {
            name: "api_key_env",
            kind: KeyKind::Text,
            default: "`ANTHROPIC_API_KEY`",
            help: "The environment variable holding the key (never the key itself); \
                   `--api-key-env` comes first.",
            pinned: true,
        },
        TableKey {
            name: "max_tokens",
            kind: KeyKind::Count {
                min: 1,
                max: u32::MAX as u64,
            },
            default: "`8192`",
            help: "The `max_tokens` of every request (the API requires one).",
            pinned: false,
        },
        TableKey {
            name: "prompt_caching",
            kind: KeyKind::Flag,
            default: "`true`",
            help: "`cache_control` breakpoints on the stable prefix of every request.",
            pinned: false,
        },
    ],
    endpoint_vars: &[],
    embedded: false,
};

/// The providers this crate offers (the runner lists them).
pub fn providers() -> Vec<Arc<dyn ModelProvider>> {
    vec![Arc::new(AnthropicProvider)]
}

/// Anthropic's Messages API.
#[derive(Debug, Clone, Copy)]
pub struct AnthropicProvider;

impl AnthropicProvider {
    /// The client's settings from a run's.
    pub fn config(settings: &ProviderSettings) -> Result<AnthropicConfig, ProviderError> {
        let api_key = match settings.named_key(settings.table_text("api_key_env"))? {
            Some(key) => Some(key),
            None => settings.env(API_KEY_VAR),
        };
        let mut config = AnthropicConfig::new(&settings.model);
        config.api_key = api_key;
        if let Some(base) = ProviderSettings::set(&settings.base_url)
            .or_else(|| settings.env(BASE_URL_VAR))
            .or_else(|| settings.table_text("base_url"))
        {
            config.base_url = base;
        }
        if let Some(max_tokens) = settings
            .table_count("max_tokens")
            .and_then(|n| u32::try_from(n).ok())
        {
            config.max_tokens = max_tokens;
        }
        if let Some(on) = settings.table_flag("prompt_caching") {
            config.prompt_caching = on;
        }
        config.stream |= settings.stream;
        config.max_response_bytes = settings.max_reply_bytes;
        config.extra_root_certs = settings.extra_root_certs.clone();
        Ok(config)
    }

    fn client(config: AnthropicConfig) -> Result<AnthropicClient, ProviderError> {
        AnthropicClient::new(config)
            .map_err(|e| ProviderError::Setup(format!("cannot set up the Anthropic client: {e}")))
    }
}

#[async_trait]
impl ModelProvider for AnthropicProvider {
    fn info(&self) -> &'static ProviderInfo {
        &INFO
    }

    fn connect(
        &self,
        settings: &ProviderSettings,
        _chosen: Chosen,
    ) -> Result<Connected, ProviderError> {
        let config = Self::config(settings)?;
        let secret = config.api_key.clone();
        Ok(Connected {
            client: Arc::new(Self::client(config)?),
            secret,
        })
    }

    /// Asks the API about the model (`check_model`: no tokens, no retries, 10 s) so that a
    /// refused key stops the command at once; anything else (a proxy without
    /// `/v1/models`, a server down, an unknown model) is left to the run's own calls.
    async fn preflight(&self, settings: &ProviderSettings) -> Result<(), ProviderError> {
        let config = Self::config(settings)?
            .with_max_retries(0)
            .with_request_timeout(Duration::from_secs(10));
        let client = Self::client(config)?;
        match client.check_model().await {
            Err(LlmError::Auth(message)) => Err(ProviderError::Refused(format!(
                "{} refused the key ({message}): check ANTHROPIC_API_KEY or --api-key-env",
                client.endpoint()
            ))),
            Err(other) => {
                tracing::debug!(error = %other, "the model check before the run did not pass; the run goes on");
                Ok(())
            }
            Ok(()) => Ok(()),
        }
    }

    /// The key, the endpoint and the model checked in one request that spends no tokens
    /// (`GET {base}/v1/models/{model}`), with the doctor's timeout and no retries; nothing
    /// when the options do not pick it.
    async fn doctor(
        &self,
        settings: &ProviderSettings,
        chosen: Option<Chosen>,
        timeout: Duration,
    ) -> Vec<Finding> {
        if chosen.is_none() {
            return Vec::new();
        }
        let config = match Self::config(settings) {
            Ok(config) => config
                .with_request_timeout(timeout.max(Duration::from_secs(1)))
                .with_max_retries(0),
            Err(e) => return vec![Finding::new("endpoint", Health::Fail, e.to_string())],
        };
        let model = config.model.clone();
        let client = match AnthropicClient::new(config) {
            Ok(client) => client,
            Err(e) => return vec![Finding::new("endpoint", Health::Fail, e.to_string())],
        };
        let endpoint = client.endpoint().to_owned();
        vec![verdict(&endpoint, &model, client.check_model().await)]
    }
}

/// The doctor's line for what `check_model` answered.
fn verdict(endpoint: &str, model: &str, answer: Result<(), LlmError>) -> Finding {
    let line = |health, detail: String| Finding::new("endpoint", health, detail);
    match answer {
        Ok(()) => line(
            Health::Ok,
            format!("{endpoint} is reachable, accepts the key and serves {model}"),
        ),
        Err(LlmError::Auth(m)) => line(
            Health::Fail,
            format!("{endpoint} refused the key ({m}): check ANTHROPIC_API_KEY or --api-key-env"),
        ),
        Err(LlmError::RateLimited { message, .. }) => line(
            Health::Warn,
            format!("{endpoint} is reachable but rate-limits this key ({message})"),
        ),
        Err(LlmError::Transient(m)) => line(
            Health::Fail,
            format!(
                "{endpoint} is not reachable or failing ({m}): fix ANTHROPIC_BASE_URL / \
                 --base-url or try again"
            ),
        ),
        Err(other) => line(
            Health::Fail,
            format!("{endpoint} refused the model {model}: {other} (pick one with --model)"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::ports::{ProviderTable, TableValue};
    use wiremock::matchers::{header, method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    fn env(name: &str) -> Option<String> {
        match name {
            "ANTHROPIC_API_KEY" => Some("sk-env".to_owned()),
            "MY_KEY" => Some("sk-mine".to_owned()),
            "ANTHROPIC_BASE_URL" => Some("http://env:1".to_owned()),
            _ => None,
        }
    }

    fn settings() -> ProviderSettings {
        ProviderSettings::new("claude-x").with_env(env)
    }

    #[test]
    fn key_and_base_url_come_from_the_flags_then_the_environment_then_the_table() {
        let plain = AnthropicProvider::config(&settings()).unwrap();
        assert_eq!(plain.api_key.as_deref(), Some("sk-env"));
        assert_eq!(plain.base_url, "http://env:1");
        assert_eq!(plain.model, "claude-x");

        let mut tabled = ProviderSettings::new("claude-x")
            .with_env(|n: &str| (n != "ANTHROPIC_BASE_URL").then(|| env(n)).flatten());
        tabled.table = ProviderTable::from([
            ("base_url".into(), TableValue::Text("http://table:2".into())),
            ("api_key_env".into(), TableValue::Text("MY_KEY".into())),
            ("max_tokens".into(), TableValue::Count(1000)),
            ("prompt_caching".into(), TableValue::Flag(false)),
        ]);
        let config = AnthropicProvider::config(&tabled).unwrap();
        assert_eq!(config.api_key.as_deref(), Some("sk-mine"));
        assert_eq!(config.base_url, "http://table:2");
        assert_eq!(config.max_tokens, 1000);
        assert!(!config.prompt_caching);

        let mut flagged = tabled.clone().with_env(env);
        flagged.base_url = Some("http://flag:3".into());
        flagged.api_key_env = Some("NOT_SET".into());
        let err = AnthropicProvider::config(&flagged).unwrap_err();
        assert!(err.to_string().contains("NOT_SET"), "{err}");
        flagged.api_key_env = None;
        assert_eq!(
            AnthropicProvider::config(&flagged).unwrap().base_url,
            "http://flag:3"
        );
    }

    #[test]
    fn a_missing_key_for_anthropics_endpoint_is_an_error_before_any_step() {
        let err = match AnthropicProvider.connect(
            &ProviderSettings::new("claude-x").with_env(|_| None),
            Chosen::ByName,
        ) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("expected a missing key"),
        };
        assert!(err.contains("ANTHROPIC_API_KEY"), "{err}");
    }

    fn doctor_settings(server: &MockServer) -> ProviderSettings {
        let mut s = ProviderSettings::new("claude-test")
            .with_env(|name: &str| (name == "DOCTOR_KEY").then(|| "sk-ant-doctor".to_owned()));
        s.base_url = Some(server.uri());
        s.api_key_env = Some("DOCTOR_KEY".into());
        s
    }

    async fn models(reply: ResponseTemplate) -> MockServer {
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .and(path("/v1/models/claude-test"))
            .and(header("x-api-key", "sk-ant-doctor"))
            .respond_with(reply)
            .mount(&server)
            .await;
        server
    }

    fn error(kind: &str, message: &str) -> serde_json::Value {
        serde_json::json!({"type": "error", "error": {"type": kind, "message": message}})
    }

    async fn doctor(settings: &ProviderSettings) -> Finding {
        let mut lines = AnthropicProvider
            .doctor(settings, Some(Chosen::ByName), Duration::from_secs(5))
            .await;
        assert_eq!(lines.len(), 1, "{lines:?}");
        lines.remove(0)
    }

    #[tokio::test]
    async fn the_doctor_checks_the_key_endpoint_and_model_against_the_server() {
        let server = models(
            ResponseTemplate::new(200)
                .set_body_json(serde_json::json!({"type": "model", "id": "claude-test"})),
        )
        .await;
        let ok = doctor(&doctor_settings(&server)).await;
        assert_eq!(ok.health, Health::Ok, "{ok:?}");
        assert!(ok.detail.contains("serves claude-test"), "{ok:?}");

        let server = models(
            ResponseTemplate::new(404)
                .set_body_json(error("not_found_error", "model: claude-test")),
        )
        .await;
        let unknown = doctor(&doctor_settings(&server)).await;
        assert_eq!(unknown.health, Health::Fail);
        assert!(unknown.detail.contains("model: claude-test"), "{unknown:?}");

        // A key the server refuses (the mock only knows the one above).
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .respond_with(
                ResponseTemplate::new(401)
                    .set_body_json(error("authentication_error", "invalid x-api-key")),
            )
            .mount(&server)
            .await;
        let refused = doctor(&doctor_settings(&server)).await;
        assert_eq!(refused.health, Health::Fail);
        assert!(refused.detail.contains("refused the key"), "{refused:?}");
        assert!(!refused.detail.contains("sk-ant-doctor"), "{refused:?}");
        let preflight = AnthropicProvider
            .preflight(&doctor_settings(&server))
            .await
            .unwrap_err();
        assert!(
            matches!(preflight, ProviderError::Refused(_)),
            "{preflight:?}"
        );

        // Not picked: nothing to say.
        assert!(AnthropicProvider
            .doctor(&doctor_settings(&server), None, Duration::from_secs(5))
            .await
            .is_empty());
    }

    #[tokio::test]
    async fn the_doctor_fails_a_missing_key_before_any_request() {
        let mut s = ProviderSettings::new("claude-test").with_env(|_| None);
        s.api_key_env = Some("PLANWRIGHT_TEST_DOCTOR_UNSET_VAR".into());
        let missing = doctor(&s).await;
        assert_eq!(missing.health, Health::Fail);
        assert!(
            missing.detail.contains("PLANWRIGHT_TEST_DOCTOR_UNSET_VAR"),
            "{missing:?}"
        );
        assert_eq!(
            verdict("e", "m", Err(LlmError::Transient("down".into()))).health,
            Health::Fail
        );
    }
}
