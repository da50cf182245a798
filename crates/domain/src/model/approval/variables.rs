//! Environment and shell variables that change what runs (docs/approvals.md, "What a
//! shell rule sees"): set before a command, exported, assigned by `read`, `printf -v` or
//! `${x:=…}`, they make the command line one the rules cannot judge (a deny rule is unsure
//! of it). This is a deny-list for deny rules only, which are a convenience: allow rules
//! allow no assignment at all.

/// Names that change which program runs, what it loads, or which commands the shell or a
/// program runs on its own (prompts, traces, pagers, editors, configuration).
const RISKY: [&str; 37] = [
    "PATH",
    "BASH_ENV",
    "ENV",
    "IFS",
    "PROMPT_COMMAND",
    "PS0",
    "PS1",
    "PS2",
    "PS3",
    "PS4",
    "SHELLOPTS",
    "BASHOPTS",
    "BASH_XTRACEFD",
    "BASH_LOADABLES_PATH",
    "CDPATH",
    "GLOBIGNORE",
    "HOME",
    "SHELL",
    "PAGER",
    "MANPAGER",
    "MANOPT",
    "LESSOPEN",
    "LESSCLOSE",
    "LESSKEY",
    "EDITOR",
    "VISUAL",
    "BROWSER",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "PERL5OPT",
    "PERL5LIB",
    "PERLLIB",
    "RUBYOPT",
    "RUBYLIB",
    "NODE_OPTIONS",
    "NODE_PATH",
    "TAR_OPTIONS",
];

/// Prefixes of families of such names: the dynamic loader (`LD_PRELOAD`), git's
/// configuration and helpers (`GIT_CONFIG_COUNT`, `GIT_EXTERNAL_DIFF`, `GIT_SSH_COMMAND`),
/// exported bash functions (`BASH_FUNC_ls%%`), Python's start-up (`PYTHONSTARTUP`), the
/// configuration folders programs read (`XDG_CONFIG_HOME`).
const RISKY_PREFIXES: [&str; 5] = ["LD_", "GIT_", "BASH_FUNC_", "PYTHON", "XDG_"];

/// Whether setting `name` may change what runs.
pub(crate) fn is_risky_variable(name: &str) -> bool {
    RISKY.contains(&name) || RISKY_PREFIXES.iter().any(|p| name.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::is_risky_variable;

    #[test]
    fn names_that_change_what_runs_are_risky() {
        for name in [
            "PATH",
            "PS4",
            "LD_PRELOAD",
            "GIT_CONFIG_COUNT",
            "GIT_EXTERNAL_DIFF",
            "BASH_FUNC_ls%%",
            "HOME",
        ] {
            assert!(is_risky_variable(name), "{name}");
        }
        for name in ["LANG", "CI", "RUST_LOG", "A", "MY_PATH"] {
            assert!(!is_risky_variable(name), "{name}");
        }
    }
}
