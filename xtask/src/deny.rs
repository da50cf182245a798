//! `cargo xtask deny`, also a step of `ci`: `cargo deny check` (advisories, licences,
//! duplicate crates, sources; rules in `deny.toml`).
//!
//! Advisories come from a RustSec database snapshot vendored as `xtask/advisory-db.tar.gz`
//! (its commit and date in `xtask/advisory-db.commit`), because the build machines reach
//! crates.io but not GitHub. It is unpacked as a one-commit git repository where cargo-deny
//! looks for its copy of `https://github.com/rustsec/advisory-db`, dated as the snapshot,
//! and checked with `--offline`. Refreshing it: docs/security.md, "Dependencies".

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{cargo, cargo_program, report};

/// The cargo-deny release the checks are written for (installed by README's test command).
pub(crate) const CARGO_DENY: &str = "0.20.2";
/// Where cargo-deny keeps its copy of the default database under `db-path` (the name it
/// derives from the URL).
const DB_FOLDER: &str = "advisory-db-3157b0e258782691";

pub(crate) fn deny() -> Result<(), String> {
    let root = workspace_root();
    let version = Command::new(cargo_program())
        .args(["deny", "--version"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .ok_or_else(|| {
            format!("cargo-deny is not installed: cargo install --locked cargo-deny@{CARGO_DENY}")
        })?;
    let (commit, date) = snapshot(&root)?;
    unpack(&root, &commit, &date)?;
    report(&format!(
        "{version}; advisories: RustSec snapshot {} of {date}",
        &commit[..commit.len().min(12)]
    ));
    // `--offline` makes cargo-deny use the snapshot; its `cargo metadata` then needs every
    // platform's crates on disk, which `cargo fetch` brings from crates.io.
    cargo(&["fetch", "--quiet"])?;
    cargo(&["deny", "--offline", "check"])
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// The vendored snapshot's commit and ISO date.
fn snapshot(root: &Path) -> Result<(String, String), String> {
    let path = root.join("xtask/advisory-db.commit");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut words = text.split_whitespace();
    match (words.next(), words.next()) {
        (Some(commit), Some(date)) => Ok((commit.to_owned(), date.to_owned())),
        _ => Err(format!("{}: expected `<commit> <date>`", path.display())),
    }
}

/// Unpacks the archive as a git repository dated `date`, unless this snapshot already is.
fn unpack(root: &Path, commit: &str, date: &str) -> Result<(), String> {
    let base = root.join("target/advisory-db");
    let dir = base.join(DB_FOLDER);
    let stamp = base.join("snapshot");
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s.trim() == commit)
        && dir.join(".git").exists()
    {
        return Ok(());
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let archive = root.join("xtask/advisory-db.tar.gz");
    run(Command::new("tar")
        .arg("xzf")
        .arg(&archive)
        .arg("-C")
        .arg(&dir))?;
    let git = |args: &[&str]| {
        let mut command = Command::new("git");
        command
            .arg("-C")
            .arg(&dir)
            .args([
                "-c",
                "user.name=planwright",
                "-c",
                "user.email=ci@planwright.invalid",
            ])
            .args(args)
            .env("GIT_AUTHOR_DATE", date)
            .env("GIT_COMMITTER_DATE", date);
        run(&mut command)
    };
    git(&["init", "--quiet"])?;
    git(&["add", "--all"])?;
    git(&["commit", "--quiet", "--no-gpg-sign", "-m", commit])?;
    std::fs::write(&stamp, commit).map_err(|e| format!("cannot write {}: {e}", stamp.display()))
}

fn run(command: &mut Command) -> Result<(), String> {
    let status = command
        .status()
        .map_err(|e| format!("cannot start {command:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{command:?} exited with {status}"))
    }
}
