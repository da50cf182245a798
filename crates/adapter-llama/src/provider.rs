//! `--provider local`, the embedded model, as the domain's [`ModelProvider`]: it serves a
//! run that names it, and one that names no provider when no endpoint is configured. Its
//! file is `--model-path` (a path or a catalogue name), else the default model's place in
//! the model cache; `planwright doctor` says whether it is there and how to fetch it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use domain::ports::{
    Chosen, Connected, Finding, Health, ModelProvider, ProviderError, ProviderInfo,
    ProviderSettings,
};

use crate::{default_model_path, resolve_model, LlamaClient, LlamaConfig, CATALOGUE};

static INFO: ProviderInfo = ProviderInfo {
    name: "local",
    aliases: &[],
    help: "The embedded model, in process, offline (`cargo xtask model` fetches \
           Qwen2.5-Coder-1.5B; any GGUF with --model-path)",
    table: &[],
    endpoint_vars: &[],
    embedded: true,
};

/// The providers this crate offers (the runner lists them).
pub fn providers() -> Vec<Arc<dyn ModelProvider>> {
    vec![Arc::new(EmbeddedProvider)]
}

/// The embedded model, in process.
#[derive(Debug, Clone, Copy)]
pub struct EmbeddedProvider;

impl EmbeddedProvider {
    /// The model file the settings mean.
    pub fn model_path(settings: &ProviderSettings) -> PathBuf {
        settings
            .model_path
            .as_ref()
            .map_or_else(default_model_path, |p| resolve_model(&p.to_string_lossy()))
    }

    /// How to get the model file `path` when it is missing.
    pub fn fetch_hint(path: &Path) -> String {
        CATALOGUE
            .iter()
            .find(|m| path.file_name().is_some_and(|f| f == m.file))
            .map_or_else(
                || {
                    format!(
                        "pass --model-path with a GGUF file or a model name ({})",
                        CATALOGUE
                            .iter()
                            .map(|m| m.name)
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                },
                |m| format!("run `cargo xtask model {}` to fetch it", m.name),
            )
    }
}

#[async_trait]
impl ModelProvider for EmbeddedProvider {
    fn info(&self) -> &'static ProviderInfo {
        &INFO
    }

    /// The model file, when it is there (a missing one is `connect`'s error).
    fn describe(&self, settings: &ProviderSettings) -> Option<String> {
        let path = Self::model_path(settings);
        path.is_file()
            .then(|| format!("the embedded model {}", path.display()))
    }

    fn connect(
        &self,
        settings: &ProviderSettings,
        _chosen: Chosen,
    ) -> Result<Connected, ProviderError> {
        let path = Self::model_path(settings);
        if !path.is_file() {
            return Err(ProviderError::Setup(format!(
                "no local model at {}: {}",
                path.display(),
                Self::fetch_hint(&path)
            )));
        }
        let client = LlamaClient::load(LlamaConfig::new(&path))
            .map_err(|e| ProviderError::Setup(format!("cannot load {}: {e}", path.display())))?;
        Ok(Connected {
            client: Arc::new(client),
            secret: None,
        })
    }

    /// The model file, present (with its size) or how to get it, whether or not the
    /// options pick it: a `--model-path` naming a missing file fails, the default model
    /// merely not fetched warns.
    async fn doctor(
        &self,
        settings: &ProviderSettings,
        _chosen: Option<Chosen>,
        _timeout: Duration,
    ) -> Vec<Finding> {
        let path = Self::model_path(settings);
        let line = match std::fs::metadata(&path) {
            Ok(m) if m.is_file() => Finding::new(
                "model",
                Health::Ok,
                format!("{} ({})", path.display(), human_size(m.len())),
            ),
            _ => Finding::new(
                "model",
                if settings.model_path.is_some() {
                    Health::Fail
                } else {
                    Health::Warn
                },
                format!(
                    "no model file at {}: {} (needed only for --provider local or without \
                     an endpoint)",
                    path.display(),
                    Self::fetch_hint(&path)
                ),
            ),
        };
        vec![line]
    }
}

/// A size in bytes as people read it (`1.1 GB`).
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if bytes < 1000 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1000.0;
    let mut unit = 0;
    while value >= 1000.0 && unit + 1 < UNITS.len() {
        value /= 1000.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_say_them() {
        assert_eq!(human_size(999), "999 B");
        assert_eq!(human_size(1_500), "1.5 KB");
        assert_eq!(human_size(1_120_000_000), "1.1 GB");
    }

    #[tokio::test]
    async fn a_missing_model_named_fails_and_the_default_missing_warns_with_how_to_fetch_it() {
        let mut settings = ProviderSettings::new("m");
        settings.model_path = Some("/nonexistent/x.gguf".into());
        let named = EmbeddedProvider
            .doctor(&settings, None, Duration::from_secs(1))
            .await;
        assert_eq!(named[0].health, Health::Fail, "{named:?}");
        assert!(named[0].detail.contains("--model-path"), "{named:?}");
        let err = match EmbeddedProvider.connect(&settings, Chosen::ByName) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("no model file"),
        };
        assert!(
            err.contains("no local model at /nonexistent/x.gguf"),
            "{err}"
        );
        assert!(EmbeddedProvider::fetch_hint(&resolve_model("smollm2-135m"))
            .contains("cargo xtask model smollm2-135m"));
    }
}
