//! The environment of a stdio server: an allow-list of Planwright's own variables plus the
//! declaration's `env`, never the whole parent environment (docs/security.md, "Secrets":
//! API keys and tokens must not reach a third-party server).

use std::collections::BTreeMap;
use std::ffi::OsString;

/// Variables passed through when set (exact names): what a program needs to run normally.
const ALLOWED: [&str; 11] = [
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LANGUAGE", "TZ", "TMPDIR",
    "NO_COLOR",
];
/// Prefixes of variables passed through when set (the locale's `LC_*`).
const ALLOWED_PREFIXES: [&str; 1] = ["LC_"];

/// The complete environment of a server: allowed variables of `parent`, then `declared`.
pub fn server_env(
    parent: impl IntoIterator<Item = (OsString, OsString)>,
    declared: &BTreeMap<String, String>,
) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = parent
        .into_iter()
        .filter(|(name, _)| {
            name.to_str().is_some_and(|name| {
                ALLOWED.contains(&name) || ALLOWED_PREFIXES.iter().any(|p| name.starts_with(p))
            })
        })
        .filter(|(name, _)| !name.to_str().is_some_and(|n| declared.contains_key(n)))
        .collect();
    env.extend(
        declared
            .iter()
            .map(|(name, value)| (OsString::from(name), OsString::from(value))),
    );
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_allowed_and_declared_variables_pass() {
        let parent = [
            ("PATH", "/usr/bin"),
            ("LC_ALL", "C"),
            ("OPENAI_API_KEY", "sk-secret"),
            ("HOME", "/home/me"),
        ]
        .map(|(n, v)| (OsString::from(n), OsString::from(v)));
        let declared = BTreeMap::from([
            ("HOME".to_owned(), "/srv".to_owned()),
            ("API_TOKEN".to_owned(), "mine".to_owned()),
        ]);
        let env = server_env(parent, &declared);
        let get = |name: &str| {
            env.iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.to_string_lossy().into_owned())
        };
        assert_eq!(get("PATH").as_deref(), Some("/usr/bin"));
        assert_eq!(get("LC_ALL").as_deref(), Some("C"));
        assert_eq!(get("HOME").as_deref(), Some("/srv"));
        assert_eq!(get("API_TOKEN").as_deref(), Some("mine"));
        assert_eq!(get("OPENAI_API_KEY"), None);
        assert_eq!(env.iter().filter(|(n, _)| n == "HOME").count(), 1);
    }
}
