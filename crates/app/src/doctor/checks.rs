//! The checks of the parts on this machine: Chromium, bubblewrap, Python, the database and
//! the workspace root (the model file and the endpoint are the providers' own checks,
//! `runner::providers::doctor`).

use std::path::{Path, PathBuf};

use super::{Check, Status};
use runner::database::Database;
use runner::SandboxMode;

/// The Chromium the browser tools would start. Fails when `--chromium` (or
/// `PLANWRIGHT_CHROMIUM`) names no program; warns when none is installed (the browser tools
/// are then not offered).
#[cfg(feature = "tools-browser")]
pub fn chromium(chosen: Option<&std::path::Path>) -> Check {
    let browsers = adapter_tools_browser::Browsers::new(adapter_tools_browser::BrowserConfig {
        chromium: chosen.map(std::path::Path::to_path_buf),
        ..Default::default()
    });
    match browsers.is_available() {
        Ok(path) => Check::new("chromium", Status::Ok, path.display().to_string()),
        Err(why) => match chosen {
            Some(_) => Check::new(
                "chromium",
                Status::Fail,
                format!(
                    "{why}: set --chromium (PLANWRIGHT_CHROMIUM) to Chromium's program, or \
                     unset it to use chromium from PATH"
                ),
            ),
            None => Check::new(
                "chromium",
                Status::Warn,
                format!("{why} (the browser tools are not offered without it)"),
            ),
        },
    }
}

#[cfg(not(feature = "tools-browser"))]
pub fn chromium(_chosen: Option<&std::path::Path>) -> Check {
    Check::new(
        "chromium",
        Status::Ok,
        "not part of this build (the `tools-browser` feature)",
    )
}

/// Whether the bubblewrap sandbox works here (the probe `--sandbox auto` uses). Fails only
/// when `--sandbox bwrap` requires it.
pub fn bubblewrap(sandbox: SandboxMode) -> Check {
    match runner::sandbox::bwrap_usable() {
        Ok(()) => Check::new(
            "bubblewrap",
            Status::Ok,
            "works: shell commands run sandboxed by default",
        ),
        Err(why) => {
            let why = why.split_whitespace().collect::<Vec<_>>().join(" ");
            let status = if sandbox == SandboxMode::Bwrap {
                Status::Fail
            } else {
                Status::Warn
            };
            Check::new(
                "bubblewrap",
                status,
                format!(
                    "{why}; until it works, shell commands run unsandboxed and `serve` and \
                     `worker` need --sandbox none"
                ),
            )
        }
    }
}

/// The `python3` programs run with, and whether pandas imports there: the embedded model
/// writes pandas for CSV files (docs/code-actions.md, "What a program can import"). Warns
/// when either is missing; runs go on either way.
pub fn python() -> Check {
    let probe =
        "import sys; print(sys.version.split()[0]); import pandas; print(pandas.__version__)";
    let out = match std::process::Command::new("python3")
        .args(["-c", probe])
        .stdin(std::process::Stdio::null())
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            return Check::new(
                "python3",
                Status::Warn,
                format!("cannot be started ({e}): programs in Python will fail; install python3"),
            )
        }
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    let version = lines.next().unwrap_or("of unknown version").to_string();
    match lines.next() {
        Some(pandas) if out.status.success() => {
            Check::new("python3", Status::Ok, format!("{version}, pandas {pandas}"))
        }
        _ => Check::new(
            "python3",
            Status::Warn,
            format!(
                "{version} without pandas: install python3-pandas (the embedded model writes \
                 pandas for CSV files)"
            ),
        ),
    }
}

/// The database: opened (which brings its schema up to date), its schema version, and
/// whether it can be written. A SQLite file that does not exist yet is not created.
pub async fn database(db: &Database) -> Check {
    if let Database::Sqlite(path) = db {
        if !path.exists() {
            let folder = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            return match writable(folder) {
                Ok(_) => Check::new(
                    "database",
                    Status::Ok,
                    format!("{db}: not created yet (the first run creates it), folder writable"),
                ),
                Err(e) => Check::new(
                    "database",
                    Status::Fail,
                    format!("{db} cannot be created: {e}: pass another --db or PLANWRIGHT_DB"),
                ),
            };
        }
    }
    if let Err(e) = db.open().await {
        return Check::new(
            "database",
            Status::Fail,
            format!("{e}: check --db / PLANWRIGHT_DB"),
        );
    }
    let version = schema_version(db);
    if let Database::Sqlite(path) = db {
        if let Err(e) = std::fs::OpenOptions::new().append(true).open(path) {
            return Check::new(
                "database",
                Status::Fail,
                format!(
                    "{db}: schema version {version}, but not writable ({e}): fix its permissions"
                ),
            );
        }
    }
    Check::new(
        "database",
        Status::Ok,
        format!("{db}: schema version {version}, writable"),
    )
}

/// The schema version an opened database is at (opening migrates it to the adapter's).
fn schema_version(db: &Database) -> String {
    match db {
        #[cfg(feature = "store-sqlite")]
        Database::Sqlite(_) => adapter_store_sqlite::SCHEMA_VERSION.to_string(),
        #[cfg(feature = "store-postgres")]
        Database::Postgres(_) => adapter_store_postgres::SCHEMA_VERSION.to_string(),
        #[allow(unreachable_patterns)]
        _ => "unknown".to_string(),
    }
}

/// The folder of the runs' workspaces can be written (or created).
pub fn workspace_root(root: &Path) -> Check {
    match writable(root) {
        Ok(dir) if dir == root => Check::new(
            "workspace root",
            Status::Ok,
            format!("{}: writable", root.display()),
        ),
        Ok(dir) => Check::new(
            "workspace root",
            Status::Ok,
            format!(
                "{}: created at the first run ({} is writable)",
                root.display(),
                dir.display()
            ),
        ),
        Err(e) => Check::new(
            "workspace root",
            Status::Fail,
            format!(
                "{}: {e}: pass another --workspace-root (PLANWRIGHT_WORKSPACE_ROOT) or fix \
                 its permissions",
                root.display()
            ),
        ),
    }
}

/// Writes and removes a file in `dir`, or in its nearest existing ancestor when `dir` does
/// not exist yet; returns the folder written in.
fn writable(dir: &Path) -> Result<PathBuf, String> {
    let mut at = dir.to_path_buf();
    while !at.exists() {
        match at.parent() {
            Some(p) if !p.as_os_str().is_empty() => at = p.to_path_buf(),
            _ => {
                at = PathBuf::from(".");
                break;
            }
        }
    }
    if !at.is_dir() {
        return Err(format!("{} is not a folder", at.display()));
    }
    let probe = at.join(format!(".planwright-doctor-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| format!("cannot write in {}: {e}", at.display()))?;
    let _ = std::fs::remove_file(&probe);
    Ok(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_root_is_fine_when_its_parent_is_writable() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("a/b");
        assert_eq!(workspace_root(&root).health, Status::Ok);
        assert_eq!(writable(&root).unwrap(), dir.path());
        assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
    }

    #[test]
    fn a_root_under_a_file_fails() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        let check = workspace_root(&file.join("runs"));
        assert_eq!(check.health, Status::Fail, "{check:?}");
    }
}
