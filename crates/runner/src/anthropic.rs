//! The Anthropic provider (`--provider anthropic`, docs/anthropic.md): the Messages API
//! client built from a run's settings. The key comes from the variable `--api-key-env` (or
//! `[providers.anthropic] api_key_env`) names, else `ANTHROPIC_API_KEY`; the base URL from
//! `--base-url`, else `ANTHROPIC_BASE_URL`, else `[providers.anthropic] base_url`, else
//! Anthropic's endpoint. A missing key is an error here, before the run's first step.

use std::sync::Arc;

use domain::ports::LlmClient;

use crate::{RunSettings, RunnerError};

/// The client's settings from the run's (the environment read through `env`).
#[cfg(feature = "anthropic")]
pub fn config(
    args: &RunSettings,
    env: impl Fn(&str) -> Option<String>,
) -> Result<adapter_anthropic::AnthropicConfig, RunnerError> {
    use adapter_anthropic::{AnthropicConfig, API_KEY_VAR, BASE_URL_VAR};

    let table = &args.anthropic;
    let set = |v: &Option<String>| v.clone().filter(|v| !v.trim().is_empty());
    let key_var = set(&args.api_key_env).or_else(|| set(&table.api_key_env));
    let api_key = match &key_var {
        Some(name) => Some(env(name).ok_or_else(|| {
            RunnerError::Config(format!(
                "api_key_env names the variable {name}, which is not set"
            ))
        })?),
        None => env(API_KEY_VAR),
    };
    let mut config = AnthropicConfig::new(&args.model);
    config.api_key = api_key;
    if let Some(base) = set(&args.base_url)
        .or_else(|| env(BASE_URL_VAR))
        .or_else(|| set(&table.base_url))
    {
        config.base_url = base;
    }
    if let Some(max_tokens) = table.max_tokens {
        config.max_tokens = max_tokens;
    }
    if let Some(on) = table.prompt_caching {
        config.prompt_caching = on;
    }
    config.stream |= args.stream;
    config.max_response_bytes = u64::from(args.llm_max_reply_mib) << 20;
    config.extra_root_certs = crate::ca_certs::read(args)?;
    Ok(config)
}

/// The Anthropic client, and its API key (to keep it out of recordings).
#[cfg(feature = "anthropic")]
pub fn llm(args: &RunSettings) -> Result<(Arc<dyn LlmClient>, Option<String>), RunnerError> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let config = config(args, env)?;
    let api_key = config.api_key.clone();
    let client = adapter_anthropic::AnthropicClient::new(config)
        .map_err(|e| RunnerError::Config(format!("cannot set up the Anthropic client: {e}")))?;
    Ok((Arc::new(client), api_key))
}

/// Before a run's first step, with `--provider anthropic` (and no `--replay`): asks the API
/// about the model (`check_model`: no tokens, no retries, 10 s) so that a refused key stops
/// the command at once, not at the run's first call. Only a refused key is an error here;
/// anything else (a proxy without `/v1/models`, a server down, an unknown model) is left to
/// the run's own calls, which report it.
#[cfg(feature = "anthropic")]
pub async fn check_key(args: &RunSettings) -> Result<(), RunnerError> {
    if args.provider != Some(crate::Provider::Anthropic) || args.replay.is_some() {
        return Ok(());
    }
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let config = config(args, env)?
        .with_max_retries(0)
        .with_request_timeout(std::time::Duration::from_secs(10));
    let client = adapter_anthropic::AnthropicClient::new(config)
        .map_err(|e| RunnerError::Config(format!("cannot set up the Anthropic client: {e}")))?;
    match client.check_model().await {
        Err(domain::LlmError::Auth(message)) => Err(RunnerError::Config(format!(
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

#[cfg(not(feature = "anthropic"))]
pub async fn check_key(_args: &RunSettings) -> Result<(), RunnerError> {
    Ok(())
}

/// Built without the Anthropic adapter: `--provider anthropic` is refused.
#[cfg(not(feature = "anthropic"))]
pub fn llm(_args: &RunSettings) -> Result<(Arc<dyn LlmClient>, Option<String>), RunnerError> {
    Err(RunnerError::Config(
        "this planwright was built without the Anthropic adapter (enable the `anthropic` \
         feature)"
            .into(),
    ))
}

#[cfg(all(test, feature = "anthropic"))]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::AnthropicSettings;

    fn settings() -> RunSettings {
        RunSettings {
            model: "claude-x".into(),
            provider: Some(crate::Provider::Anthropic),
            ..RunSettings::default()
        }
    }

    #[test]
    fn key_and_base_url_come_from_the_flags_then_the_environment_then_the_table() {
        let env = |name: &str| match name {
            "ANTHROPIC_API_KEY" => Some("sk-env".to_owned()),
            "MY_KEY" => Some("sk-mine".to_owned()),
            "ANTHROPIC_BASE_URL" => Some("http://env:1".to_owned()),
            _ => None,
        };
        let plain = config(&settings(), env).unwrap();
        assert_eq!(plain.api_key.as_deref(), Some("sk-env"));
        assert_eq!(plain.base_url, "http://env:1");
        assert_eq!(plain.model, "claude-x");

        let mut args = settings();
        args.anthropic = AnthropicSettings {
            base_url: Some("http://table:2".into()),
            api_key_env: Some("MY_KEY".into()),
            max_tokens: Some(1000),
            prompt_caching: Some(false),
        };
        let tabled = config(&args, |n: &str| {
            (n != "ANTHROPIC_BASE_URL").then(|| env(n)).flatten()
        })
        .unwrap();
        assert_eq!(tabled.api_key.as_deref(), Some("sk-mine"));
        assert_eq!(tabled.base_url, "http://table:2");
        assert_eq!(tabled.max_tokens, 1000);
        assert!(!tabled.prompt_caching);

        args.base_url = Some("http://flag:3".into());
        args.api_key_env = Some("NOT_SET".into());
        let err = config(&args, env).unwrap_err();
        assert!(err.to_string().contains("NOT_SET"), "{err}");
        args.api_key_env = None;
        assert_eq!(config(&args, env).unwrap().base_url, "http://flag:3");
    }

    #[test]
    fn a_missing_key_for_anthropics_endpoint_is_an_error_before_any_step() {
        let err = match config(&settings(), |_| None).map(adapter_anthropic::AnthropicClient::new) {
            Ok(Err(e)) => e.to_string(),
            other => panic!("expected a missing key: {other:?}"),
        };
        assert!(err.contains("ANTHROPIC_API_KEY"), "{err}");
    }
}
