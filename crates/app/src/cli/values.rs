//! The values of the command line's enumerated options (`--mode`, `--provider`...): every
//! choice (the domain's modes, schedules, revise policies, approval modes, summary styles;
//! the runner's providers, sandboxes, search providers, tool protocols) parsed by its own
//! [`Named`] list through [`NamedParser`]: no clap mirror of them here.

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
    use runner::Provider;

    fn provider(text: &str) -> Result<Option<Provider>, String> {
        let cli = Cli::try_parse_from(["planwright", "run", "--provider", text, "task"])
            .map_err(|e| e.to_string())?;
        match cli.command {
            Command::Run(args) => Ok(args.opts.provider),
            _ => Err("not run".into()),
        }
    }

    /// The runner's names are the options' values, an alias is accepted as its value, and
    /// an unknown name is refused with the names (not the aliases) listed.
    #[test]
    fn choices_parse_by_the_runners_names_and_aliases() {
        assert_eq!(provider("llamacpp"), Ok(Some(Provider::LlamaCpp)));
        assert_eq!(provider("llama.cpp"), Ok(Some(Provider::LlamaCpp)));
        assert_eq!(provider("lm-studio"), Ok(Some(Provider::LmStudio)));
        let Err(refused) = provider("gpt") else {
            panic!("an unknown provider parses");
        };
        assert!(refused.contains("openai"), "{refused}");
        assert!(!refused.contains("lm-studio"), "{refused}");
    }
}
