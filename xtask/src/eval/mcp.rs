//! The MCP part of an instance (`Instance::library`): the npm reference filesystem server, pinned
//! and installed once into the target folder (the same folder the adapter-mcp tests use),
//! serving a folder outside the workspace, declared in the run folder's `planwright.toml`
//! as `[mcp_servers.library]`. The shell sandbox and the file tools cannot reach that
//! folder's path by name in the prompt: the model has to call `mcp__library__*`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The pinned package, as in crates/adapter-mcp/tests/support.
const PACKAGE: &str = "@modelcontextprotocol/server-filesystem@2026.8.31";
const FOLDER: &str = "mcp-servers-2026.8.31";

/// The server's program, installed with npm when missing.
fn server(target: &Path) -> Result<PathBuf, String> {
    let dir = target.join("tmp").join(FOLDER);
    let bin = dir.join("node_modules/.bin/mcp-server-filesystem");
    if bin.exists() {
        return Ok(bin);
    }
    let partial = dir.with_extension(format!("partial-{}", std::process::id()));
    let out = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--prefix"])
        .arg(&partial)
        .arg(PACKAGE)
        .output()
        .map_err(|e| format!("npm (needed by the mcp_note family): {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "npm install {PACKAGE}: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    if std::fs::rename(&partial, &dir).is_err() && !dir.exists() {
        return Err(format!("cannot move the npm install to {}", dir.display()));
    }
    let _ = std::fs::remove_dir_all(&partial);
    Ok(bin)
}

/// A TOML basic string.
fn quoted(path: &Path) -> String {
    let text = path.to_string_lossy();
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// Seeds `dir/library` with `files` and declares the server in `dir/planwright.toml`.
pub(crate) fn set_up(target: &Path, dir: &Path, files: &[(String, String)]) -> Result<(), String> {
    let bin = server(target)?;
    let library = dir.join("library");
    std::fs::create_dir_all(&library).map_err(|e| format!("{}: {e}", library.display()))?;
    for (file, text) in files {
        let path = library.join(file);
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let config = format!(
        "# Written by cargo xtask eval for a task that needs an MCP server.\n\
         [mcp_servers.library]\ncommand = {}\nargs = [{}]\ncwd = {}\nstartup_timeout_secs = 60\n",
        quoted(&bin),
        quoted(&library),
        quoted(&library)
    );
    let path = dir.join("planwright.toml");
    std::fs::write(&path, config).map_err(|e| format!("{}: {e}", path.display()))
}
