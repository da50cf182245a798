//! The headings `run --help` groups its options under (and docs/configuration.md its keys),
//! in the order they are shown: what a user thinks of when looking for an option.

pub const MODEL: &str = "Model and provider";
pub const PLANNING: &str = "Planning";
pub const TOOLS: &str = "Tools and sandbox";
pub const SAFETY: &str = "Approvals and safety";
pub const FILES: &str = "Files and checkpoints";
pub const OUTPUT: &str = "Output";
pub const LIMITS: &str = "Limits";

/// Every heading in the order of the reference page; options without one (the global
/// ones, a server's own) come first under "General".
#[cfg(test)]
pub const ALL: [&str; 7] = [MODEL, PLANNING, TOOLS, SAFETY, FILES, OUTPUT, LIMITS];

/// The reference page's group of options without a heading (config/docs.rs, built with
/// every provider only).
#[cfg(all(test, feature = "openai", feature = "anthropic", feature = "llama"))]
pub const GENERAL: &str = "General";

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// `run --help` shows every group, each with its options, and leaves few ungrouped.
    #[test]
    fn run_help_groups_its_options_under_headings() {
        let mut cli = crate::cli::Cli::command();
        let run = cli.find_subcommand_mut("run").expect("run");
        let help = run.render_long_help().to_string();
        let mut last = 0;
        for heading in super::ALL {
            let at = help
                .find(&format!("\n{heading}:\n"))
                .unwrap_or_else(|| panic!("no `{heading}:` in\n{help}"));
            assert!(at > last, "{heading} out of order");
            last = at;
        }
        let run = cli.find_subcommand("run").expect("run");
        let ungrouped = run
            .get_arguments()
            .filter(|a| a.get_long().is_some_and(|l| l != "help") && !a.is_global_set())
            .filter(|a| a.get_help_heading().is_none())
            .map(|a| a.get_id().to_string())
            .collect::<Vec<_>>();
        assert!(ungrouped.is_empty(), "not grouped: {ungrouped:?}");
    }
}
