//! The real MCP servers the tests start: npm packages, pinned, installed once into the
//! target folder and reused by later runs.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use domain::ports::ToolContext;

/// The pinned packages (`npm view <pkg> version`).
const PACKAGES: [&str; 2] = [
    "@modelcontextprotocol/server-filesystem@2026.8.31",
    "@modelcontextprotocol/server-everything@2026.8.31",
];

/// The folder holding `node_modules/.bin/mcp-server-*`, or `None` (skip) when node or npm
/// is missing on a laptop; with `CI=true` a missing node fails the test.
pub fn servers_or_skip() -> Option<&'static Path> {
    static INSTALLED: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    test_support::require_or_skip(
        INSTALLED
            .get_or_init(install)
            .as_deref()
            .map_err(|why| format!("the MCP test servers are unavailable: {why}")),
    )
}

fn install() -> Result<PathBuf, String> {
    for tool in ["node", "npm"] {
        let found = Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            return Err(format!("`{tool}` not found"));
        }
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("mcp-servers-2026.8.31");
    if bin(&dir, "mcp-server-filesystem").exists() && bin(&dir, "mcp-server-everything").exists() {
        return Ok(dir);
    }
    // Installed beside, then renamed: an interrupted install is never taken for a done one.
    let partial = dir.with_extension(format!("partial-{}", std::process::id()));
    let output = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--prefix"])
        .arg(&partial)
        .args(PACKAGES)
        .output()
        .map_err(|e| format!("npm: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "npm install failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    if std::fs::rename(&partial, &dir).is_err() && !dir.exists() {
        return Err("cannot move the npm install in place".into());
    }
    let _ = std::fs::remove_dir_all(&partial);
    Ok(dir)
}

pub fn bin(dir: &Path, name: &str) -> PathBuf {
    dir.join("node_modules").join(".bin").join(name)
}

pub fn ctx(workspace: &Path) -> ToolContext {
    test_support::tool_context(workspace, "run-1")
}
