//! `cargo xtask domain-untouched`: the commit that added each provider adapter swapped in
//! after the domain was written ([`SWAPPED_IN`]) touched no file under `crates/domain`
//! (docs/anthropic.md: a provider is swapped without changing the domain). It reads the
//! history with git: the commit adding the adapter's `Cargo.toml`, and the files it
//! changed. A shallow clone (CI machines may fetch one commit) cannot tell: the check says
//! so and passes; any other history without that commit is a failure.

use std::path::Path;
use std::process::Command;

/// The adapters whose adding commit must leave the domain alone.
pub const SWAPPED_IN: [&str; 1] = ["crates/adapter-anthropic"];

/// The folder no such commit may touch.
const DOMAIN: &str = "crates/domain/";

pub(crate) fn domain_untouched() -> Result<(), String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    if !full_history(&root) {
        crate::report(
            "domain-untouched: not checked: no full git history here (a shallow clone or a \
             source tarball)",
        );
        return Ok(());
    }
    for adapter in SWAPPED_IN {
        let commit = adding_commit(&root, adapter)?;
        let changed = git(
            &root,
            &[
                "diff-tree",
                "--no-commit-id",
                "--name-only",
                "-r",
                "--root",
                &commit,
            ],
        )?;
        let touched = domain_files(&changed);
        if !touched.is_empty() {
            return Err(format!(
                "the commit adding {adapter} ({commit}) changed the domain: {}",
                touched.join(", ")
            ));
        }
        crate::report(&format!(
            "{adapter}: added by {} without touching {DOMAIN}",
            &commit[..commit.len().min(12)]
        ));
    }
    Ok(())
}

/// The commit that added `{adapter}/Cargo.toml` (the oldest, should it have been added
/// twice).
fn adding_commit(root: &Path, adapter: &str) -> Result<String, String> {
    let manifest = format!("{adapter}/Cargo.toml");
    let log = git(
        root,
        &["log", "--diff-filter=A", "--format=%H", "--", &manifest],
    )?;
    log.lines().last().map(str::to_owned).ok_or_else(|| {
        format!(
            "no commit adds {manifest} in this history (a shallow clone? fetch the \
                 full history)"
        )
    })
}

/// Whether `root` has its whole git history (a repository, not a shallow clone).
fn full_history(root: &Path) -> bool {
    git(root, &["rev-parse", "--is-shallow-repository"]).is_ok_and(|s| s.trim() == "false")
}

/// The paths of `changed` (one a line) under `crates/domain/`.
fn domain_files(changed: &str) -> Vec<&str> {
    changed
        .lines()
        .map(str::trim)
        .filter(|path| path.starts_with(DOMAIN))
        .collect()
}

fn git(root: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .output()
        .map_err(|e| format!("cannot start git: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "`git {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_paths_under_the_domain_count() {
        let changed =
            "Cargo.toml\ncrates/adapter-anthropic/src/lib.rs\ncrates/domain/src/ports/llm.rs\n\
                       crates/domainx/a.rs\ndocs/anthropic.md\n";
        assert_eq!(domain_files(changed), ["crates/domain/src/ports/llm.rs"]);
        assert!(domain_files("crates/app/src/main.rs\n").is_empty());
    }

    /// The check itself, on this repository's history (it passes, saying it did not
    /// check, where there is no full history: a shallow clone, a source tarball).
    #[test]
    fn the_anthropic_adapter_was_added_without_touching_the_domain() {
        domain_untouched().unwrap_or_else(|e| panic!("{e}"));
    }
}
