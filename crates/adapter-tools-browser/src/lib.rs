//! # adapter-tools-browser
//!
//! **Skeleton.** This crate will hold the `browser_*` tools (navigate, view, click, input,
//! scroll, press_key, select_option, console_exec, screenshot) driving Debian's headless
//! `chromium` through chromiumoxide, one browser per run. Until the tools issue lands it only
//! locates the Chromium binary and offers **no** tools: [`browser_tools`] returns an empty
//! list, so the model is never shown a tool that cannot run.
//!
//! It implements the domain's `Tool` port; `domain` must not depend on this crate.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use domain::ports::Tool;

/// Where the Chromium binary is: `PLANWRIGHT_CHROMIUM`, else `chromium` or
/// `chromium-browser` on `PATH`.
pub fn find_chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PLANWRIGHT_CHROMIUM") {
        let p = PathBuf::from(p);
        return p.is_file().then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| ["chromium", "chromium-browser"].map(|n| dir.join(n)))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// The browser tools offered to executors: none yet (see the crate docs).
pub fn browser_tools() -> Vec<Arc<dyn Tool>> {
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_browser_tool_is_offered_before_it_is_real() {
        assert!(browser_tools().is_empty());
    }
}
