//! The files' values become the defaults of the options they set, in every command: clap
//! then applies the precedence itself (a flag, then the option's environment variable, then
//! the default), and its value source still tells a flag or a variable from a file value.

use std::collections::BTreeMap;

use clap::Command;

/// `cmd` with `values` (file key = clap id → values) as its options' defaults.
pub fn with_defaults(mut cmd: Command, values: &BTreeMap<String, Vec<String>>) -> Command {
    let ids: Vec<String> = cmd
        .get_arguments()
        .map(|a| a.get_id().to_string())
        .filter(|id| values.contains_key(id))
        .collect();
    for id in ids {
        let defaults = values.get(&id).cloned().unwrap_or_default();
        cmd = cmd.mut_arg(id, |arg| arg.default_values(defaults));
    }
    let subcommands: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for name in subcommands {
        cmd = cmd.mut_subcommand(name, |sub| with_defaults(sub, values));
    }
    cmd
}
