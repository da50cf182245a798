//! `planwright completions SHELL`: the shell's completion script for every subcommand and
//! option, generated from the command line's own definition (`cli`), so it never drifts.

use std::io::Write;

use clap::CommandFactory;
use clap_complete::Shell;

use crate::cli::{Cli, CompletionShell};

/// The completion script for `shell`.
pub fn script(shell: CompletionShell) -> Vec<u8> {
    let shell = match shell {
        CompletionShell::Bash => Shell::Bash,
        CompletionShell::Zsh => Shell::Zsh,
        CompletionShell::Fish => Shell::Fish,
    };
    let mut command = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut command, "planwright", &mut out);
    out
}

/// Prints the script on stdout.
pub fn print(shell: CompletionShell) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(&script(shell));
    let _ = out.flush();
}
