//! The `[providers.NAME]` tables of a config file: settings of one LLM provider that are not
//! options of their own. Only `[providers.anthropic]` exists (docs/anthropic.md): the base
//! URL, the variable holding the key, `max_tokens` and prompt caching of `--provider
//! anthropic`. Only at a file's top level; a project file's key replaces the user file's.
//! The values reach the command's runs through its run options (`RunOptions::anthropic`,
//! set in `main.rs`'s `dispatch`).

use runner::AnthropicSettings;
use toml::de::DeValue;
use toml::Spanned;

use super::toml_table::Problem;

/// The keys of `[providers.anthropic]`.
pub const ANTHROPIC_KEYS: [&str; 4] = ["base_url", "api_key_env", "max_tokens", "prompt_caching"];

/// A file's `[providers.anthropic]` table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AnthropicTable {
    /// Its line in the file.
    pub line: usize,
    pub settings: AnthropicSettings,
}

impl AnthropicTable {
    /// Its `base_url` and `api_key_env` as one line of TOML (where the key goes and which
    /// secret is sent there: what trust pins), empty when it sets neither.
    pub fn pinned(&self) -> String {
        let s = &self.settings;
        [("base_url", &s.base_url), ("api_key_env", &s.api_key_env)]
            .iter()
            .filter_map(|(k, v)| {
                v.as_ref()
                    .map(|v| format!("{k} = {}", serde_json::Value::from(v.as_str())))
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The `[providers.NAME]` tables of a file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProviderTables {
    pub anthropic: Option<AnthropicTable>,
}

/// Reads the value of `providers`. `line`: a byte offset's line in the file.
pub fn parse(
    value: &Spanned<DeValue<'_>>,
    line: impl Fn(usize) -> usize,
) -> Result<ProviderTables, Problem> {
    let problem = |span: std::ops::Range<usize>, text: String| Problem { span, text };
    let DeValue::Table(providers) = value.get_ref() else {
        return Err(problem(
            value.span(),
            "providers must hold [providers.NAME] tables".into(),
        ));
    };
    let mut tables = ProviderTables::default();
    for (name, table) in providers.iter() {
        if name.get_ref() != "anthropic" {
            return Err(problem(
                name.span(),
                format!(
                    "unknown provider table [providers.{}]: only [providers.anthropic] has \
                     settings (the OpenAI-compatible presets are picked with --provider)",
                    name.get_ref()
                ),
            ));
        }
        let DeValue::Table(keys) = table.get_ref() else {
            return Err(problem(
                table.span(),
                "providers.anthropic must be a table".into(),
            ));
        };
        let mut settings = AnthropicSettings::default();
        for (key, value) in keys.iter() {
            let wrong = |kind: &str| {
                problem(
                    value.span(),
                    format!("providers.anthropic.{} must be {kind}", key.get_ref()),
                )
            };
            match (key.get_ref().as_ref(), value.get_ref()) {
                ("base_url", DeValue::String(s)) => settings.base_url = Some(s.to_string()),
                ("api_key_env", DeValue::String(s)) => settings.api_key_env = Some(s.to_string()),
                ("base_url" | "api_key_env", _) => return Err(wrong("a string")),
                ("max_tokens", DeValue::Integer(i)) => {
                    let n = i
                        .to_string()
                        .parse::<u32>()
                        .ok()
                        .filter(|n| *n > 0)
                        .ok_or_else(|| wrong("an integer from 1 to 4294967295"))?;
                    settings.max_tokens = Some(n);
                }
                ("max_tokens", _) => return Err(wrong("an integer from 1 to 4294967295")),
                ("prompt_caching", DeValue::Boolean(b)) => settings.prompt_caching = Some(*b),
                ("prompt_caching", _) => return Err(wrong("a boolean")),
                (secret, _) if super::keys::SECRET_KEYS.contains(&secret) => {
                    return Err(problem(
                        key.span(),
                        format!(
                            "\"{secret}\" in providers.anthropic would put a secret in the \
                             file: name the environment variable that holds the key instead \
                             (api_key_env = \"MY_KEY\")"
                        ),
                    ))
                }
                (other, _) => {
                    return Err(problem(
                        key.span(),
                        format!(
                            "unknown key \"{other}\" in providers.anthropic (known: {})",
                            ANTHROPIC_KEYS.join(", ")
                        ),
                    ))
                }
            }
        }
        tables.anthropic = Some(AnthropicTable {
            line: line(name.span().start),
            settings,
        });
    }
    Ok(tables)
}

#[cfg(test)]
mod tests {
    use super::*;
    use toml::de::DeTable;

    fn parsed(text: &str) -> Result<ProviderTables, String> {
        let table = DeTable::parse(text).unwrap();
        let value = table.get_ref().get("providers").unwrap();
        parse(value, |_| 1).map_err(|p| p.text)
    }

    #[test]
    fn the_anthropic_table_is_read_and_checked() {
        let tables = parsed(
            "[providers.anthropic]\nbase_url = \"http://proxy:4000\"\napi_key_env = \"MY_KEY\"\n\
             max_tokens = 4096\nprompt_caching = false\n",
        )
        .unwrap();
        let table = tables.anthropic.unwrap();
        assert_eq!(
            table.settings,
            AnthropicSettings {
                base_url: Some("http://proxy:4000".into()),
                api_key_env: Some("MY_KEY".into()),
                max_tokens: Some(4096),
                prompt_caching: Some(false),
            }
        );
        assert_eq!(
            table.pinned(),
            "base_url = \"http://proxy:4000\", api_key_env = \"MY_KEY\""
        );
        let err = parsed("[providers.anthropic]\nmax_token = 1\n").unwrap_err();
        assert!(err.contains("unknown key \"max_token\""), "{err}");
        let err = parsed("[providers.anthropic]\napi_key = \"sk-ant-x\"\n").unwrap_err();
        assert!(err.contains("api_key_env"), "{err}");
        assert!(!err.contains("sk-ant-x"), "{err}");
        let err = parsed("[providers.anthropic]\nmax_tokens = 0\n").unwrap_err();
        assert!(err.contains("from 1"), "{err}");
        let err = parsed("[providers.anthropic]\nprompt_caching = \"yes\"\n").unwrap_err();
        assert!(err.contains("a boolean"), "{err}");
        let err = parsed("[providers.gemini]\nbase_url = \"x\"\n").unwrap_err();
        assert!(err.contains("[providers.gemini]"), "{err}");
        assert_eq!(
            parsed("[providers.anthropic]\n")
                .unwrap()
                .anthropic
                .unwrap()
                .pinned(),
            ""
        );
    }
}
