//! `cargo xtask domain-untouched`: the commit that added each provider adapter swapped in
//! after the domain was written ([`SWAPPED_IN`]) touched no file under `crates/domain`
//! (docs/anthropic.md: a provider is swapped without changing the domain). It reads the
//! history with git: the commit adding the adapter's `Cargo.toml`, and the files it
//! changed. A history without that commit (a shallow clone) is a failure that says so.

use std::path::Path;
use std::process::Command;

/// The adapters whose adding commit must leave the domain alone.
pub const SWAPPED_IN: [&str; 1] = ["crates/adapter-anthropic"];

/// The folder no such commit may touch.
const DOMAIN: &str = "crates/domain/";

pub(crate) fn domain_untouched() -> Result<(), String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
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

    /// The check itself, on this repository's history (skipped where there is no git
    /// history to read, e.g. a source tarball).
    #[test]
    fn the_anthropic_adapter_was_added_without_touching_the_domain() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        if git(&root, &["rev-parse", "--git-dir"]).is_err() {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI needs the git history for this check"
            );
            return;
        }
        domain_untouched().unwrap_or_else(|e| panic!("{e}"));
    }
}
