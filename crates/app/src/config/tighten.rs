//! A project file, even a trusted one, can only tighten the user's sandbox, approval policy
//! and rules, never weaken them (docs/security.md, "Project configuration and trust"): its
//! values weaker than the user's (the user file's, else the built-in default) are dropped,
//! its `deny` and `disabled_tools` lists are added to the user's instead of replacing them,
//! and its `allow` rules are dropped.

use super::file::{ConfigFile, Entry, Settings};
use super::keys::Key;
use super::show::toml_value;

/// How strict a value of a ranked key is (higher: stricter); `None` for other keys.
fn rank(key: &str, value: &str) -> Option<u8> {
    let order: &[&str] = match key {
        "sandbox" => &["none", "auto", "bwrap"],
        "approval" => &["auto", "ask", "read-only"],
        "sandbox_network" | "sandbox_vcs_writes" | "browser_allow_local" => &["true", "false"],
        _ => return None,
    };
    order.iter().position(|v| *v == value).map(|p| p as u8)
}

/// Lists whose project values are added to the user's.
const ADDED: [&str; 3] = ["deny", "disabled_tools", "protect"];

/// Drops what `project` would weaken; returns the warning naming what was dropped.
pub fn tighten(
    project: &mut ConfigFile,
    user: Option<&ConfigFile>,
    profile: Option<&str>,
    keys: &[Key],
) -> Option<String> {
    let users = |name: &str| -> Vec<String> {
        let from_file = user.and_then(|u| {
            profile
                .and_then(|p| u.profiles.get(p)?.get(name))
                .or_else(|| u.top.get(name))
        });
        match from_file {
            Some(entry) => entry.values.clone(),
            None => keys
                .iter()
                .find(|k| k.name == name)
                .map(Key::default)
                .unwrap_or_default(),
        }
    };
    let mut dropped = Vec::new();
    let mut one = |settings: &mut Settings| {
        let names: Vec<String> = settings.keys().cloned().collect();
        for name in names {
            let Some(entry) = settings.get(&name).cloned() else {
                continue;
            };
            let shown = || {
                let kind = keys.iter().find(|k| k.name == name).map(|k| k.kind);
                let value = kind.map_or_else(
                    || entry.values.join(","),
                    |kind| toml_value(kind, &entry.values),
                );
                format!("{name} = {value}")
            };
            if name == "allow" {
                if !entry.values.is_empty() {
                    dropped.push(shown());
                }
                settings.remove(&name);
            } else if ADDED.contains(&name.as_str()) {
                let mut values = users(&name);
                for v in &entry.values {
                    if !values.contains(v) {
                        values.push(v.clone());
                    }
                }
                settings.insert(
                    name.clone(),
                    Entry {
                        values,
                        line: entry.line,
                    },
                );
            } else if let [value] = entry.values.as_slice() {
                let theirs = users(&name);
                let weaker = match (rank(&name, value), theirs.first()) {
                    (Some(mine), Some(their)) => rank(&name, their).is_some_and(|t| mine < t),
                    _ => false,
                };
                if weaker {
                    dropped.push(shown());
                    settings.remove(&name);
                }
            }
        }
    };
    one(&mut project.top);
    for settings in project.profiles.values_mut() {
        one(settings);
    }
    if dropped.is_empty() {
        return None;
    }
    Some(format!(
        "{} cannot weaken your own sandbox, approval policy or rules; ignored: {} \
         (docs/security.md)",
        project.shown,
        dropped.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn keys() -> Vec<Key> {
        super::super::keys::keys(&crate::cli::Cli::command())
    }

    fn parse(text: &str) -> ConfigFile {
        super::super::file::parse("planwright.toml", text, &keys()).unwrap()
    }

    #[test]
    fn weaker_values_are_dropped_and_lists_add_up() {
        let mut project = parse(
            "sandbox = \"none\"\napproval = \"auto\"\nsandbox_network = true\nmodel = \"m\"\n\
             browser_allow_local = true\nsandbox_vcs_writes = true\n\
             allow = [\"shell_exec(git *)\"]\ndeny = [\"file_write(b/**)\"]\n\
             [profiles.p]\napproval = \"read-only\"\n",
        );
        let user = parse("approval = \"ask\"\ndeny = [\"shell_exec(rm *)\"]\n");
        let note = tighten(&mut project, Some(&user), None, &keys()).unwrap();
        assert_eq!(
            note,
            "planwright.toml cannot weaken your own sandbox, approval policy or rules; ignored: \
             allow = [\"shell_exec(git *)\"], approval = \"auto\", browser_allow_local = true, \
             sandbox = \"none\", sandbox_network = true, sandbox_vcs_writes = true \
             (docs/security.md)"
        );
        let names: Vec<&String> = project.top.keys().collect();
        assert_eq!(names, ["deny", "model"]);
        assert_eq!(
            project.top["deny"].values,
            ["shell_exec(rm *)", "file_write(b/**)"]
        );
        assert_eq!(project.profiles["p"]["approval"].values, ["read-only"]);
    }

    #[test]
    fn stricter_values_stay_and_say_nothing() {
        let mut project = parse("sandbox = \"bwrap\"\napproval = \"ask\"\n");
        assert_eq!(tighten(&mut project, None, None, &keys()), None);
        assert_eq!(project.top.len(), 2);
    }
}
