//! The model providers of this build (docs/architecture.md, "An LLM provider"). Each LLM
//! adapter crate describes its own providers (the domain's [`ModelProvider`]: name, help,
//! config table, client, pre-run check, doctor lines); [`all`] is the one place that names
//! those crates, by cargo feature. The command line's `--provider`, the config files'
//! `[providers.NAME]` tables, trust's pins, `planwright doctor`, the metrics' labels and the
//! run's LLM all work from this list.

use std::sync::Arc;
use std::time::Duration;

use domain::ports::{
    Chosen, Connected, Finding, Health, ModelProvider, ProviderInfo, ProviderSettings,
};

use crate::notice::Level;
use crate::{RunSettings, RunnerError};

/// Every provider of this build, in the order `--help` lists them. The one registration a
/// new provider adds (beside its cargo feature): `list.extend(its_adapter::providers())`.
pub fn all() -> Vec<Arc<dyn ModelProvider>> {
    #[allow(unused_mut)]
    let mut list: Vec<Arc<dyn ModelProvider>> = Vec::new();
    #[cfg(feature = "openai")]
    list.extend(adapter_openai::providers());
    #[cfg(feature = "anthropic")]
    list.extend(adapter_anthropic::providers());
    #[cfg(feature = "llama")]
    list.extend(adapter_llama::providers());
    list
}

/// Every provider's description.
pub fn infos() -> Vec<&'static ProviderInfo> {
    all().iter().map(|p| p.info()).collect()
}

/// The provider named `name` (its name or an alias).
pub fn find(name: &str) -> Result<Arc<dyn ModelProvider>, RunnerError> {
    all()
        .into_iter()
        .find(|p| p.info().name == name || p.info().aliases.contains(&name))
        .ok_or_else(|| {
            RunnerError::Config(format!(
                "unknown provider '{name}' (available: {})",
                names().join(", ")
            ))
        })
}

/// Every provider's name.
pub fn names() -> Vec<&'static str> {
    infos().iter().map(|i| i.name).collect()
}

/// The provider that serves a run, and how it was picked.
#[derive(Clone)]
pub struct Choice {
    pub provider: Arc<dyn ModelProvider>,
    pub chosen: Chosen,
}

/// The provider the options pick: `--provider NAME`; else the first whose endpoint is
/// configured; else the embedded model.
pub fn choose(args: &RunSettings) -> Result<Choice, RunnerError> {
    if let Some(name) = &args.provider {
        return Ok(Choice {
            provider: find(name)?,
            chosen: Chosen::ByName,
        });
    }
    let plain = plain_settings(args);
    let providers = all();
    if let Some(provider) = providers.iter().find(|p| p.configured(&plain)) {
        return Ok(Choice {
            provider: provider.clone(),
            chosen: Chosen::Configured,
        });
    }
    if providers.is_empty() {
        return Err(RunnerError::Config(
            "this planwright was built without any model provider (enable the `openai`, \
             `anthropic` or `llama` feature)"
                .into(),
        ));
    }
    if ProviderSettings::set(&args.base_url).is_some() {
        return Err(RunnerError::Config(format!(
            "--base-url names an endpoint, but no provider of this planwright serves one named \
             only by its URL (it was built without the `openai` feature); name one with \
             --provider ({})",
            names().join(", ")
        )));
    }
    match providers.iter().find(|p| p.info().embedded) {
        Some(provider) => Ok(Choice {
            provider: provider.clone(),
            chosen: Chosen::Fallback,
        }),
        None => Err(RunnerError::Config(format!(
            "no LLM endpoint configured: {} (this planwright was built without the embedded \
             model)",
            endpoint_hint()
        ))),
    }
}

/// Whether the options pick the embedded model.
pub fn picks_embedded(args: &RunSettings) -> bool {
    choose(args).is_ok_and(|c| c.provider.info().embedded)
}

/// The name a run's traces and metrics carry for its provider (`replay` for a cassette).
pub fn label(args: &RunSettings) -> String {
    if args.replay.is_some() {
        return "replay".into();
    }
    choose(args).map_or_else(|_| "unknown".into(), |c| c.provider.info().name.to_string())
}

/// The run's LLM client from the provider the options pick; a choice made for the user
/// (the embedded model for want of an endpoint) is said through `args.notices` first.
pub fn connect(args: &RunSettings) -> Result<Connected, RunnerError> {
    let choice = choose(args)?;
    let settings = settings(args, choice.provider.as_ref())?;
    if choice.chosen == Chosen::Fallback {
        if let Some(what) = choice.provider.describe(&settings) {
            args.notices
                .say(Level::Choice, &format!("{}: using {what}", unset_vars()));
        }
    }
    match choice.provider.connect(&settings, choice.chosen) {
        Ok(connected) => Ok(connected),
        Err(e) if choice.chosen == Chosen::Fallback => Err(RunnerError::Config(format!(
            "no LLM endpoint configured ({}) and {e}",
            endpoint_hint()
        ))),
        Err(e) => Err(RunnerError::Config(e.to_string())),
    }
}

/// Before a run's first step (not with `--replay`): the picked provider's check, which stops
/// the command at once when it cannot work (a refused key).
pub async fn preflight(args: &RunSettings) -> Result<(), RunnerError> {
    if args.replay.is_some() {
        return Ok(());
    }
    let choice = choose(args)?;
    let settings = settings(args, choice.provider.as_ref())?;
    choice
        .provider
        .preflight(&settings)
        .await
        .map_err(|e| RunnerError::Config(e.to_string()))
}

/// `planwright doctor`'s lines about the model: every provider's (the embedded model's
/// file whether or not it is picked; the picked endpoint's answer), and the endpoint's line
/// when the embedded model serves the runs.
pub async fn doctor(args: &RunSettings, timeout: Duration) -> Vec<Finding> {
    let choice = choose(args);
    let mut findings = Vec::new();
    if let Err(e) = &choice {
        findings.push(Finding::new("endpoint", Health::Fail, e.to_string()));
    }
    // Read once for every provider that talks to the outside.
    let certs = crate::ca_certs::read(args);
    for provider in all() {
        let info = provider.info();
        let chosen = match &choice {
            Ok(c) if c.provider.info().name == info.name => Some(c.chosen),
            _ => None,
        };
        let certs = match &certs {
            _ if info.embedded => Vec::new(),
            Ok(certs) => certs.clone(),
            Err(e) => {
                if chosen.is_some() {
                    findings.push(Finding::new("endpoint", Health::Fail, e.to_string()));
                }
                continue;
            }
        };
        let settings = with_certs(args, info, certs);
        findings.extend(provider.doctor(&settings, chosen, timeout).await);
    }
    // The model file's line before the endpoint's, whichever provider is picked.
    findings.sort_by_key(|f| f.part == "endpoint");
    if let Ok(c) = &choice {
        if !findings.iter().any(|f| f.part == "endpoint") {
            findings.push(Finding::new(
                "endpoint",
                Health::Ok,
                format!(
                    "none configured: runs use {} ({})",
                    if c.provider.info().embedded {
                        "the embedded model".to_string()
                    } else {
                        format!("--provider {}", c.provider.info().name)
                    },
                    endpoint_hint()
                ),
            ));
        }
    }
    findings
}

/// A provider's settings from the run's: the model options, its `[providers.NAME]` table,
/// and the `--ca-cert` files (read only for a provider that talks to the outside).
pub fn settings(
    args: &RunSettings,
    provider: &dyn ModelProvider,
) -> Result<ProviderSettings, RunnerError> {
    let info = provider.info();
    let certs = if info.embedded {
        Vec::new()
    } else {
        crate::ca_certs::read(args)?
    };
    Ok(with_certs(args, info, certs))
}

/// [`settings`] with the certificates already read.
fn with_certs(args: &RunSettings, info: &ProviderInfo, certs: Vec<Vec<u8>>) -> ProviderSettings {
    let mut settings = plain_settings(args);
    settings.table = args
        .provider_tables
        .get(info.name)
        .cloned()
        .unwrap_or_default();
    settings.extra_root_certs = certs;
    settings
}

/// The options every provider reads, without its table or the certificates.
fn plain_settings(args: &RunSettings) -> ProviderSettings {
    let mut settings = ProviderSettings::new(&args.model);
    settings.model_path = args.model_path.clone();
    settings.api_key_env = args.api_key_env.clone();
    settings.base_url = args.base_url.clone();
    settings.stream = args.stream;
    settings.max_reply_bytes = u64::from(args.llm_max_reply_mib) << 20;
    settings.text_tools = args.tool_protocol == crate::ToolProtocol::Text;
    settings
}

/// The variables that configure an endpoint without `--provider`.
fn endpoint_vars() -> Vec<&'static str> {
    infos()
        .iter()
        .flat_map(|i| i.endpoint_vars.iter().copied())
        .collect()
}

/// How to configure an endpoint ("set OPENAI_API_KEY or OPENAI_BASE_URL, or pick a server
/// with --provider").
fn endpoint_hint() -> String {
    match endpoint_vars().as_slice() {
        [] => "pick a server with --provider".into(),
        vars => format!(
            "set {}, or pick a server with --provider",
            vars.join(" or ")
        ),
    }
}

/// What was not set when the embedded model was picked ("no OPENAI_API_KEY or
/// OPENAI_BASE_URL").
fn unset_vars() -> String {
    match endpoint_vars().as_slice() {
        [] => "no endpoint configured".into(),
        vars => format!("no {}", vars.join(" or ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_an_unknown_one_lists_them() {
        let names = names();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{names:?}");
        for info in infos() {
            for alias in info.aliases {
                assert!(!names.contains(alias), "{alias} is also a name");
            }
        }
        let err = find("gemini")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("gemini"), "{err}");
        assert!(
            names.iter().all(|n| err.contains(n)),
            "{err} does not list {names:?}"
        );
    }

    #[cfg(all(feature = "openai", feature = "llama"))]
    #[test]
    fn a_run_naming_no_provider_takes_the_configured_endpoint_else_the_embedded_model() {
        let args = RunSettings::default();
        // The test process may have OPENAI_* set; the base URL option alone configures.
        let with_base = RunSettings {
            base_url: Some("http://127.0.0.1:9/v1".into()),
            ..args.clone()
        };
        let c = choose(&with_base).unwrap();
        assert_eq!(
            (c.provider.info().name, c.chosen),
            ("openai", Chosen::Configured)
        );
        let named = RunSettings {
            provider: Some("llama.cpp".into()),
            ..args.clone()
        };
        assert_eq!(choose(&named).unwrap().provider.info().name, "llamacpp");
        if std::env::var_os("OPENAI_API_KEY").is_none()
            && std::env::var_os("OPENAI_BASE_URL").is_none()
        {
            let c = choose(&args).unwrap();
            assert_eq!(
                (c.provider.info().name, c.chosen),
                ("local", Chosen::Fallback)
            );
            assert!(picks_embedded(&args));
            assert_eq!(
                endpoint_hint(),
                "set OPENAI_API_KEY or OPENAI_BASE_URL, or pick a server with --provider"
            );
        }
    }
}
