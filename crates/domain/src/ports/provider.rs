//! The model provider port (docs/architecture.md, "An LLM provider"): one description of a
//! provider, written once by the adapter crate that implements it, from which every front
//! end works: its name on the command line (`--provider`), its `[providers.NAME]` config
//! table (parsed, merged, shown, pinned by trust and documented from [`TableKey`]s), how the
//! run's [`LlmClient`] is made from the run's settings, the check before a run's first
//! step, and `planwright doctor`'s lines. The runner lists the providers of its build; no
//! other crate names one.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use thiserror::Error;

use crate::ports::LlmClient;

/// What a provider is, for the front ends.
#[derive(Debug, PartialEq, Eq)]
pub struct ProviderInfo {
    /// The name users type (`--provider NAME`, `provider = "NAME"`) and traces carry.
    pub name: &'static str,
    /// Other names it is known by (accepted, never listed nor stored).
    pub aliases: &'static [&'static str],
    /// One line for `--help`: where it sends requests, which variables it reads.
    pub help: &'static str,
    /// The keys of its `[providers.NAME]` table; empty when it has none.
    pub table: &'static [TableKey],
    /// Variables whose presence configures it without `--provider` (see
    /// [`ModelProvider::configured`]); named when no provider was configured.
    pub endpoint_vars: &'static [&'static str],
    /// A model on this machine (the embedded one): a small model's defaults apply (a short
    /// plan cap, programs as its actions; docs/direct.md, docs/code-actions.md).
    pub embedded: bool,
}

/// A key of a provider's `[providers.NAME]` table.
#[derive(Debug, PartialEq, Eq)]
pub struct TableKey {
    pub name: &'static str,
    pub kind: KeyKind,
    /// The value without the key, as docs show it.
    pub default: &'static str,
    /// What it does, one sentence for docs/configuration.md.
    pub help: &'static str,
    /// Where requests go or which secret they carry: trust pins it (a changed value in a
    /// trusted folder asks again; docs/security.md).
    pub pinned: bool,
}

/// The type of a table key's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    Text,
    Flag,
    /// A whole number in `min..=max`.
    Count {
        min: u64,
        max: u64,
    },
}

impl KeyKind {
    /// What a value must be, as an error says it ("a string").
    pub fn described(self) -> String {
        match self {
            KeyKind::Text => "a string".into(),
            KeyKind::Flag => "a boolean".into(),
            KeyKind::Count { min, max } => format!("an integer from {min} to {max}"),
        }
    }
}

/// A value of a provider's table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TableValue {
    Text(String),
    Flag(bool),
    Count(u64),
}

impl TableValue {
    /// The value as JSON (`config show --json`, trust's pinned line).
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            TableValue::Text(s) => serde_json::Value::from(s.as_str()),
            TableValue::Flag(b) => serde_json::Value::from(*b),
            TableValue::Count(n) => serde_json::Value::from(*n),
        }
    }
}

/// The keys a provider's table sets, by name.
pub type ProviderTable = BTreeMap<String, TableValue>;

/// How a provider reads an environment variable (the process's, or a test's).
pub type ReadEnv = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// What a provider's client is made from: the run's model options, the provider's own
/// table, and the environment (read through [`ProviderSettings::env`], so tests give theirs).
#[derive(Clone)]
pub struct ProviderSettings {
    /// `--model`.
    pub model: String,
    /// `--model-path` (the embedded model's file or catalogue name).
    pub model_path: Option<PathBuf>,
    /// `--api-key-env`: the variable holding the key, which must then be set.
    pub api_key_env: Option<String>,
    /// `--base-url`.
    pub base_url: Option<String>,
    /// `--stream`.
    pub stream: bool,
    /// `--llm-max-reply-mib`, in bytes.
    pub max_reply_bytes: u64,
    /// The `--ca-cert` files' contents (read by the runner for providers that are not
    /// embedded).
    pub extra_root_certs: Vec<Vec<u8>>,
    /// `--tool-protocol text`: tools described in the prompt.
    pub text_tools: bool,
    /// Its `[providers.NAME]` table.
    pub table: ProviderTable,
    env: ReadEnv,
}

impl std::fmt::Debug for ProviderSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderSettings")
            .field("model", &self.model)
            .field("model_path", &self.model_path)
            .field("api_key_env", &self.api_key_env)
            .field("base_url", &self.base_url)
            .field("table", &self.table)
            .finish_non_exhaustive()
    }
}

impl ProviderSettings {
    /// Settings for `model` reading the process environment.
    pub fn new(model: impl Into<String>) -> ProviderSettings {
        ProviderSettings {
            model: model.into(),
            model_path: None,
            api_key_env: None,
            base_url: None,
            stream: false,
            max_reply_bytes: 16 << 20,
            extra_root_certs: Vec::new(),
            text_tools: false,
            table: ProviderTable::new(),
            env: Arc::new(|name: &str| std::env::var(name).ok()),
        }
    }

    /// The same settings reading the environment through `env` (tests).
    pub fn with_env(
        mut self,
        env: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
    ) -> ProviderSettings {
        self.env = Arc::new(env);
        self
    }

    /// The variable `name`, when set and not blank.
    pub fn env(&self, name: &str) -> Option<String> {
        (self.env)(name).filter(|v| !v.trim().is_empty())
    }

    /// A non-blank option's value.
    pub fn set(value: &Option<String>) -> Option<String> {
        value.clone().filter(|v| !v.trim().is_empty())
    }

    /// The table's text value of `key`, when set and not blank.
    pub fn table_text(&self, key: &str) -> Option<String> {
        match self.table.get(key) {
            Some(TableValue::Text(s)) if !s.trim().is_empty() => Some(s.clone()),
            _ => None,
        }
    }

    /// The table's boolean value of `key`.
    pub fn table_flag(&self, key: &str) -> Option<bool> {
        match self.table.get(key) {
            Some(TableValue::Flag(b)) => Some(*b),
            _ => None,
        }
    }

    /// The table's number value of `key`.
    pub fn table_count(&self, key: &str) -> Option<u64> {
        match self.table.get(key) {
            Some(TableValue::Count(n)) => Some(*n),
            _ => None,
        }
    }

    /// The key the variable `--api-key-env` (else `table_var`, the table's `api_key_env`)
    /// names, which must then be set; `Ok(None)` when neither names one.
    pub fn named_key(&self, table_var: Option<String>) -> Result<Option<String>, ProviderError> {
        match Self::set(&self.api_key_env).or(table_var) {
            Some(name) => self.env(&name).map(Some).ok_or_else(|| {
                ProviderError::Setup(format!(
                    "api_key_env names the variable {name}, which is not set"
                ))
            }),
            None => Ok(None),
        }
    }
}

/// How a provider came to serve a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chosen {
    /// `--provider NAME`.
    ByName,
    /// No `--provider`: its endpoint is configured ([`ModelProvider::configured`]).
    Configured,
    /// No `--provider` and no endpoint configured: the embedded model.
    Fallback,
}

/// A provider's client, ready for a run.
pub struct Connected {
    pub client: Arc<dyn LlmClient>,
    /// The API key, kept out of recordings (`--record`).
    pub secret: Option<String>,
}

/// Why a provider could not serve a run.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ProviderError {
    /// A setting is missing or wrong (no key, a variable named but not set, no model file).
    #[error("{0}")]
    Setup(String),
    /// The endpoint refused the key before the run's first step.
    #[error("{0}")]
    Refused(String),
}

/// How a `planwright doctor` check went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Health {
    Ok,
    Warn,
    Fail,
}

/// One line of `planwright doctor`: the part checked, how it went, what was found or how to
/// fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub part: &'static str,
    pub health: Health,
    pub detail: String,
}

impl Finding {
    pub fn new(part: &'static str, health: Health, detail: impl Into<String>) -> Finding {
        Finding {
            part,
            health,
            detail: detail.into(),
        }
    }
}

/// A model provider: an adapter crate implements it for each provider it offers and hands
/// them out (`providers()`); the runner lists them by cargo feature.
#[async_trait]
pub trait ModelProvider: Send + Sync {
    /// Its description.
    fn info(&self) -> &'static ProviderInfo;

    /// Without `--provider`: whether this provider's endpoint is configured (its variables
    /// or `--base-url`), which picks it. The runner asks each in its list's order; when none
    /// is, the embedded provider serves the run.
    fn configured(&self, _settings: &ProviderSettings) -> bool {
        false
    }

    /// What serves the runs, in a few words ("the embedded model /path/to.gguf"), said to
    /// the user before connecting when it was picked for them ([`Chosen::Fallback`]).
    fn describe(&self, _settings: &ProviderSettings) -> Option<String> {
        None
    }

    /// Its client for a run.
    fn connect(
        &self,
        settings: &ProviderSettings,
        chosen: Chosen,
    ) -> Result<Connected, ProviderError>;

    /// Before a run's first step (not with `--replay`): a check that stops the command at
    /// once when it cannot work (a refused key). Only [`ProviderError::Refused`] and
    /// [`ProviderError::Setup`] stop it; anything else is left to the run's own calls.
    async fn preflight(&self, _settings: &ProviderSettings) -> Result<(), ProviderError> {
        Ok(())
    }

    /// `planwright doctor`'s lines about it; `chosen`: whether the options pick it.
    async fn doctor(
        &self,
        settings: &ProviderSettings,
        chosen: Option<Chosen>,
        timeout: Duration,
    ) -> Vec<Finding>;
}
