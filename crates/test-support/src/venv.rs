//! A Python virtual environment with one pip package, made once under a test target's
//! temporary folder and kept for later runs (the official MCP SDK, Arize Phoenix).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The venv `<root>/<name>-<package>` (`==` as `-`) with `package` installed (a pip
/// requirement, e.g. `mcp==2.3.0`); returns its `python`. Made aside and renamed into
/// place, so a run cut short never leaves a half-installed venv and test processes racing
/// to make it agree. An error says which step failed (the last line of its stderr).
pub fn pip_venv(root: &Path, name: &str, package: &str) -> Result<PathBuf, String> {
    let dir = root.join(format!("{name}-{}", package.replace("==", "-")));
    let python = dir.join("bin").join("python");
    if dir.join(".installed").exists() {
        return Ok(python);
    }
    let building = dir.with_extension(format!("building-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&building);
    step(
        Command::new("python3").args(["-m", "venv"]).arg(&building),
        "python3 -m venv",
    )?;
    step(
        Command::new(building.join("bin").join("python")).args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            package,
        ]),
        &format!("pip install {package}"),
    )?;
    std::fs::write(building.join(".installed"), package).map_err(|e| e.to_string())?;
    if std::fs::rename(&building, &dir).is_err() {
        // Another test process installed it meanwhile.
        let _ = std::fs::remove_dir_all(&building);
    }
    if dir.join(".installed").exists() {
        Ok(python)
    } else {
        Err(format!("{} could not be made", dir.display()))
    }
}

fn step(cmd: &mut Command, what: &str) -> Result<(), String> {
    let out = cmd
        .output()
        .map_err(|e| format!("{what}: cannot start: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{what} failed: {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or_default()
        ))
    }
}
