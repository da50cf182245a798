//! The `[providers.NAME]` tables of a config file: settings of one LLM provider that are not
//! options of their own. Which providers have a table, its keys, their types and which of
//! them trust pins all come from the provider's description (`runner::providers`, the
//! domain's `ProviderInfo::table`), so a new provider's table needs nothing here. Only at a
//! file's top level; a project file's key replaces the user file's. The values reach the
//! command's runs through its run options (`RunOptions::provider_tables`, set in `main.rs`'s
//! `dispatch`).

use std::collections::BTreeMap;

use domain::ports::{KeyKind, ProviderInfo, ProviderTable, TableValue};
use toml::de::DeValue;
use toml::Spanned;

use super::toml_table::Problem;

/// A file's table of one provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedTable {
    /// Its line in the file.
    pub line: usize,
    pub values: ProviderTable,
    /// Its provider's description.
    pub info: &'static ProviderInfo,
}

impl ParsedTable {
    /// Its pinned keys as one line of TOML (where requests go and which secret they carry:
    /// what trust pins), empty when it sets none.
    pub fn pinned(&self) -> String {
        self.info
            .table
            .iter()
            .filter(|k| k.pinned)
            .filter_map(|k| {
                Some(format!(
                    "{} = {}",
                    k.name,
                    self.values.get(k.name)?.to_json()
                ))
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The `[providers.NAME]` tables of a file, by provider name.
pub type ProviderTables = BTreeMap<String, ParsedTable>;

/// The providers of this build that have a table.
pub fn with_tables() -> Vec<&'static ProviderInfo> {
    runner::providers::infos()
        .into_iter()
        .filter(|i| !i.table.is_empty())
        .collect()
}

/// What a file's `providers` value holds for this build.
#[derive(Debug, Default)]
pub struct Parsed {
    pub tables: ProviderTables,
    /// The tables of providers this build lacks, skipped (name, line): a file shared with a
    /// build that has them stays usable here.
    pub skipped: Vec<(String, usize)>,
}

/// Reads the value of `providers`. `line`: a byte offset's line in the file.
pub fn parse(
    value: &Spanned<DeValue<'_>>,
    line: impl Fn(usize) -> usize,
) -> Result<Parsed, Problem> {
    let problem = |span: std::ops::Range<usize>, text: String| Problem { span, text };
    let DeValue::Table(providers) = value.get_ref() else {
        return Err(problem(
            value.span(),
            "providers must hold [providers.NAME] tables".into(),
        ));
    };
    let known = with_tables();
    let mut parsed = Parsed::default();
    for (name, table) in providers.iter() {
        let Some(info) = known.iter().copied().find(|i| i.name == name.get_ref()) else {
            parsed
                .skipped
                .push((name.get_ref().to_string(), line(name.span().start)));
            continue;
        };
        let DeValue::Table(keys) = table.get_ref() else {
            return Err(problem(
                table.span(),
                format!("providers.{} must be a table", info.name),
            ));
        };
        let mut values = ProviderTable::new();
        for (key, value) in keys.iter() {
            if super::keys::SECRET_KEYS.contains(&key.get_ref().as_ref()) {
                return Err(problem(
                    key.span(),
                    format!(
                        "\"{}\" in providers.{} would put a secret in the file: name the \
                         environment variable that holds the key instead (api_key_env = \
                         \"MY_KEY\")",
                        key.get_ref(),
                        info.name
                    ),
                ));
            }
            let Some(spec) = info.table.iter().find(|k| k.name == key.get_ref()) else {
                return Err(problem(
                    key.span(),
                    format!(
                        "unknown key \"{}\" in providers.{} (known: {})",
                        key.get_ref(),
                        info.name,
                        info.table
                            .iter()
                            .map(|k| k.name)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            };
            let wrong = || {
                problem(
                    value.span(),
                    format!(
                        "providers.{}.{} must be {}",
                        info.name,
                        spec.name,
                        spec.kind.described()
                    ),
                )
            };
            let read = match (spec.kind, value.get_ref()) {
                (KeyKind::Text, DeValue::String(s)) => TableValue::Text(s.to_string()),
                (KeyKind::Flag, DeValue::Boolean(b)) => TableValue::Flag(*b),
                (KeyKind::Count { min, max }, DeValue::Integer(i)) => i
                    .to_string()
                    .parse::<u64>()
                    .ok()
                    .filter(|n| (min..=max).contains(n))
                    .map(TableValue::Count)
                    .ok_or_else(wrong)?,
                _ => return Err(wrong()),
            };
            values.insert(spec.name.to_string(), read);
        }
        parsed.tables.insert(
            info.name.to_string(),
            ParsedTable {
                line: line(name.span().start),
                values,
                info,
            },
        );
    }
    Ok(parsed)
}

/// The note saying that a file's table of a provider this build lacks was not read.
pub fn skipped_note(file: &str, name: &str, line: usize) -> String {
    let names = with_tables()
        .iter()
        .map(|i| format!("[providers.{}]", i.name))
        .collect::<Vec<_>>();
    format!(
        "{file}:{line}: [providers.{name}] is not read: this build has no provider {name} \
         with settings ({})",
        match names.as_slice() {
            [] => "none of its providers has settings".to_string(),
            names => format!("it reads {}", names.join(", ")),
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use toml::de::DeTable;

    fn parsed(text: &str) -> Result<ProviderTables, String> {
        parsed_all(text).map(|p| p.tables)
    }

    fn parsed_all(text: &str) -> Result<Parsed, String> {
        let table = DeTable::parse(text).unwrap();
        let value = table.get_ref().get("providers").unwrap();
        parse(value, |offset| text[..offset].matches('\n').count() + 1).map_err(|p| p.text)
    }

    /// A table of a provider this build lacks (a file shared with a build that has it, or a
    /// misspelt name) is skipped with a note naming its line, not refused.
    #[test]
    fn a_table_of_a_provider_this_build_lacks_is_skipped_and_noted() {
        let p = parsed_all("\n[providers.gemini]\nbase_url = \"x\"\n").unwrap();
        assert!(p.tables.is_empty());
        assert_eq!(p.skipped, vec![("gemini".to_string(), 2)]);
        let note = skipped_note("planwright.toml", "gemini", 2);
        assert!(
            note.starts_with("planwright.toml:2: [providers.gemini] is not read"),
            "{note}"
        );
    }

    /// Every key of every table is read by its type, checked, and pinned as its provider
    /// says; a key holding a secret is refused without echoing it.
    #[test]
    fn each_providers_table_is_read_and_checked_as_its_description_says() {
        for info in with_tables() {
            let name = info.name;
            for key in info.table {
                assert!(
                    !super::super::keys::SECRET_KEYS.contains(&key.name),
                    "{name}.{} is a secret's key",
                    key.name
                );
            }
            let mut text = format!("[providers.{name}]\n");
            let mut expected = ProviderTable::new();
            for key in info.table {
                let (toml, value) = match key.kind {
                    KeyKind::Text => ("\"v\"".to_string(), TableValue::Text("v".into())),
                    KeyKind::Flag => ("false".to_string(), TableValue::Flag(false)),
                    KeyKind::Count { min, .. } => (min.to_string(), TableValue::Count(min)),
                };
                text.push_str(&format!("{} = {toml}\n", key.name));
                expected.insert(key.name.to_string(), value);
            }
            let tables = parsed(&text).unwrap();
            let table = &tables[name];
            assert_eq!(table.values, expected);
            for key in info.table {
                assert_eq!(
                    table.pinned().contains(&format!("{} = ", key.name)),
                    key.pinned,
                    "{name}.{}",
                    key.name
                );
                let wrong = match key.kind {
                    KeyKind::Text => "1",
                    KeyKind::Flag | KeyKind::Count { .. } => "\"yes\"",
                };
                let err =
                    parsed(&format!("[providers.{name}]\n{} = {wrong}\n", key.name)).unwrap_err();
                assert!(err.contains(&key.kind.described()), "{err}");
            }
            let err = parsed(&format!("[providers.{name}]\nno_such_key = 1\n")).unwrap_err();
            assert!(err.contains("unknown key \"no_such_key\""), "{err}");
            let err =
                parsed(&format!("[providers.{name}]\napi_key = \"sk-secret-x\"\n")).unwrap_err();
            assert!(err.contains("api_key_env"), "{err}");
            assert!(!err.contains("sk-secret-x"), "{err}");
            assert_eq!(
                parsed(&format!("[providers.{name}]\n")).unwrap()[name].pinned(),
                ""
            );
        }
    }

    #[cfg(feature = "anthropic")]
    #[test]
    fn the_anthropic_table_is_read_and_its_url_and_key_variable_pinned() {
        let tables = parsed(
            "[providers.anthropic]\nbase_url = \"http://proxy:4000\"\napi_key_env = \"MY_KEY\"\n\
             max_tokens = 4096\nprompt_caching = false\n",
        )
        .unwrap();
        let table = &tables["anthropic"];
        assert_eq!(table.values["max_tokens"], TableValue::Count(4096));
        assert_eq!(
            table.pinned(),
            "base_url = \"http://proxy:4000\", api_key_env = \"MY_KEY\""
        );
        let err = parsed("[providers.anthropic]\nmax_tokens = 0\n").unwrap_err();
        assert!(err.contains("from 1"), "{err}");
    }
}
