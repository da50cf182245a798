//! The values of the command line's enumerated options (`--mode`, `--provider`...): every
//! choice (the domain's modes, schedules, revise policies, approval modes, summary styles;
//! the runner's sandboxes, search providers, tool protocols) parsed by its own [`Named`]
//! list through [`NamedParser`], and the model providers by the runner's list of them
//! through [`ProviderParser`]: no clap mirror of them here.

use std::ffi::OsStr;
use std::marker::PhantomData;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
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
            let value = PossibleValue::new(v.name()).aliases(v.aliases().iter().copied());
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

/// A clap value parser over the model providers of this build (`runner::providers`): their
/// names, aliases and help lines; the value is the provider's name (an alias gives it too).
#[derive(Debug, Clone, Copy)]
pub struct ProviderParser;

impl ProviderParser {
    fn possible() -> impl Iterator<Item = PossibleValue> {
        runner::providers::infos().into_iter().map(|info| {
            PossibleValue::new(info.name)
                .aliases(info.aliases.iter().copied())
                .help(info.help)
        })
    }
}

impl TypedValueParser for ProviderParser {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<String, clap::Error> {
        let name = PossibleValuesParser::new(Self::possible()).parse_ref(cmd, arg, value)?;
        runner::providers::find(&name)
            .map(|p| p.info().name.to_string())
            .map_err(|e| clap::Error::raw(clap::error::ErrorKind::InvalidValue, e))
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(Self::possible()))
    }
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

#[cfg(test)]
mod tests {
    use clap::Parser;

    use crate::cli::{Cli, Command};

    fn provider(text: &str) -> Result<Option<String>, String> {
        let cli = Cli::try_parse_from(["planwright", "run", "--provider", text, "task"])
            .map_err(|e| e.to_string())?;
        match cli.command {
            Command::Run(args) => Ok(args.opts.provider),
            _ => Err("not run".into()),
        }
    }

    /// The runner's providers' names are the option's values, an alias is accepted as its
    /// provider's name, and an unknown name is refused with the names (not the aliases)
    /// listed.
    #[cfg(feature = "openai")]
    #[test]
    fn choices_parse_by_the_runners_names_and_aliases() {
        let named = |name: &str| Ok(Some(name.to_string()));
        assert_eq!(provider("llamacpp"), named("llamacpp"));
        assert_eq!(provider("llama.cpp"), named("llamacpp"));
        assert_eq!(provider("lm-studio"), named("lmstudio"));
        let Err(refused) = provider("gpt") else {
            panic!("an unknown provider parses");
        };
        assert!(refused.contains("openai"), "{refused}");
        assert!(!refused.contains("lm-studio"), "{refused}");
    }
}
