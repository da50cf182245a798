//! The environment handed to shell commands: an allow-list, never the parent's whole
//! environment (docs/security.md, "Secrets").
//!
//! A command sees only the variables a program needs to behave normally (`PATH`, locale,
//! terminal, time zone, user name), `HOME` set to the workspace, `PWD`,
//! `PYTHONDONTWRITEBYTECODE=1` (a program that imports a module of the user's folder leaves
//! no `__pycache__` in it), and the variables the user named explicitly ([`ShellEnv::pass`], `--shell-env NAME`). Anything else —
//! API keys, `PLANWRIGHT_TOKEN`, `DATABASE_URL`, `GH_PAT`, proxies with credentials — is
//! absent whatever its name looks like.

use std::ffi::OsString;
use std::path::Path;

/// Variables passed through when set (exact names).
const ALLOWED: [&str; 10] = [
    "PATH",
    "LANG",
    "LANGUAGE",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "TZ",
    "USER",
    "LOGNAME",
    "SHELL",
];
/// Prefixes of variables passed through when set (the locale's `LC_*`).
const ALLOWED_PREFIXES: [&str; 1] = ["LC_"];
/// `PATH` when the parent has none.
const DEFAULT_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Which variables of Planwright's own environment reach shell commands.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellEnv {
    /// Extra variable names passed through unchanged when set (`--shell-env NAME`), on top
    /// of the built-in allow-list.
    pub pass: Vec<String>,
}

impl ShellEnv {
    /// Whether the variable `name` of the parent's environment reaches commands.
    pub fn allows(&self, name: &str) -> bool {
        ALLOWED.contains(&name)
            || ALLOWED_PREFIXES.iter().any(|p| name.starts_with(p))
            || self.pass.iter().any(|p| p == name)
    }

    /// The complete environment of a command working in `workspace`, taken from `parent`
    /// (the process environment in production): allowed variables, `HOME` and `PWD` set
    /// to the workspace, Python told to write no bytecode caches, and a default `PATH` when
    /// the parent has none.
    pub(crate) fn build(
        &self,
        parent: impl IntoIterator<Item = (OsString, OsString)>,
        workspace: &Path,
    ) -> Vec<(OsString, OsString)> {
        let mut env: Vec<(OsString, OsString)> = parent
            .into_iter()
            .filter(|(name, _)| {
                let name = name.to_string_lossy();
                name != "HOME" && name != "PWD" && self.allows(&name)
            })
            .collect();
        if !env.iter().any(|(name, _)| name == "PATH") {
            env.push(("PATH".into(), DEFAULT_PATH.into()));
        }
        env.push(("HOME".into(), workspace.as_os_str().to_owned()));
        env.push(("PWD".into(), workspace.as_os_str().to_owned()));
        env.push(("PYTHONDONTWRITEBYTECODE".into(), "1".into()));
        env
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(items: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        items
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    fn get<'a>(env: &'a [(OsString, OsString)], name: &str) -> Option<&'a str> {
        env.iter()
            .find(|(k, _)| k == name)
            .and_then(|(_, v)| v.to_str())
    }

    #[test]
    fn only_allowed_names_pass_whatever_the_others_look_like() {
        let parent = pairs(&[
            ("PATH", "/usr/bin"),
            ("LANG", "C.UTF-8"),
            ("LC_ALL", "C"),
            ("TERM", "xterm"),
            ("HOME", "/root"),
            ("PWD", "/somewhere"),
            ("OPENAI_API_KEY", "sk-1"),
            ("PLANWRIGHT_TOKEN", "t"),
            ("GH_PAT", "ghp_x"),
            ("DATABASE_URL", "postgres://u:pw@db/x"),
            ("https_proxy", "http://u:pw@proxy:3128"),
            ("CARGO_HOME", "/root/.cargo"),
        ]);
        let env = ShellEnv::default().build(parent, Path::new("/ws"));
        let names: Vec<String> = env
            .iter()
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            [
                "PATH",
                "LANG",
                "LC_ALL",
                "TERM",
                "HOME",
                "PWD",
                "PYTHONDONTWRITEBYTECODE"
            ]
        );
        assert_eq!(get(&env, "HOME"), Some("/ws"));
        assert_eq!(get(&env, "PWD"), Some("/ws"));
    }

    #[test]
    fn named_variables_pass_and_path_has_a_default() {
        let parent = pairs(&[("DATABASE_URL", "postgres://x"), ("GH_PAT", "g")]);
        let policy = ShellEnv {
            pass: vec!["DATABASE_URL".into()],
        };
        let env = policy.build(parent, Path::new("/ws"));
        assert_eq!(get(&env, "DATABASE_URL"), Some("postgres://x"));
        assert_eq!(get(&env, "GH_PAT"), None);
        assert_eq!(get(&env, "PATH"), Some(DEFAULT_PATH));
    }
}
