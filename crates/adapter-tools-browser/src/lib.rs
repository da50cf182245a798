//! # adapter-tools-browser
//!
//! Headless-browser tools for Planwright agents. They drive Debian's `chromium` (headless,
//! over the Chrome DevTools Protocol, through chromiumoxide) and implement the domain port
//! [`domain::ports::Tool`]; `domain` must not depend on this crate (the app wires it in).
//!
//! | tool | arguments | idempotent |
//! |------|-----------|------------|
//! | `browser_navigate` | `url` (http/https only) | no |
//! | `browser_view` | — | yes |
//! | `browser_click` | `index`, or `x` and `y` | no |
//! | `browser_input` | `index`, `text`, `press_enter?` | no |
//! | `browser_scroll` | `direction`: up, down, top, bottom | no |
//! | `browser_press_key` | `key` (Enter, Tab, Escape, ArrowDown, Control+a...) | no |
//! | `browser_select_option` | `index`, `option` (visible text or value) | no |
//! | `browser_console_exec` | `js` | no |
//! | `browser_screenshot` | `full_page?` → `screenshots/<n>.png` in the workspace | yes |
//!
//! A view is the page's title and URL, its readable text (whitespace collapsed, cut with a
//! marker past [`BrowserConfig::max_view_chars`]) and its visible interactive elements,
//! numbered `[0] <button> Submit`, `[1] <input type=text name=q> value=""`... The numbers are
//! stored on the elements (`data-pw-index`) so they stay valid until the next view.
//!
//! [`Browsers`] is the per-run pool behind the tools: a run's first `browser_*` call starts
//! Chromium (fresh profile in a temporary folder, its own process group, flags fit for a
//! closed network), every later call of the run reuses it, a crashed browser is restarted
//! once per call (the model is told the page state was lost), and [`Browsers::close_run`]
//! — which the app must call when a run ends — quits it, kills its process group and deletes
//! the profile. Dropping the pool kills whatever is still running.
//!
//! Numbers are range-checked before the browser is asked (and the ranges declared in the
//! schemas): an element `index` is 0 to 399 (a view numbers at most 400 elements), a click's
//! `x` and `y` lie inside the window; anything else, and an empty `url`, `key` or `js`, is
//! an invalid-arguments error naming the argument, its range and the value.
//!
//! Chromium listens on no port: its DevTools travel over a pipe (`devtools_pipe.rs`), and
//! every connection it makes goes through the run's address guard (`address_guard.rs`), which
//! refuses loopback, private, link-local and unspecified addresses and this machine's own
//! (`own_addresses.rs`) unless [`BrowserConfig::allow_local`] (docs/security.md, "The
//! browser").
//!
//! Page problems (unknown element, refused connection, a server that never answers, a page
//! too large) come back to the model as error outputs; the browser stays usable.

use std::path::{Path, PathBuf};

mod address_guard;
mod address_policy;
mod args;
mod config;
mod devtools_pipe;
mod error;
mod keys;
mod own_addresses;
mod pool;
mod process;
mod scripts;
mod session;
mod tools;
mod view;

pub use address_policy::ALLOW_LOCAL_SWITCH;
pub use args::{
    ClickArgs, ConsoleExecArgs, InputArgs, NavigateArgs, PressKeyArgs, ScreenshotArgs, ScrollArgs,
    ScrollDirection, SelectOptionArgs, ViewArgs,
};
pub use config::BrowserConfig;
pub use pool::Browsers;

/// Name of the tool that opens a page.
pub const BROWSER_NAVIGATE: &str = "browser_navigate";
/// Name of the tool that shows the current page.
pub const BROWSER_VIEW: &str = "browser_view";
/// Name of the tool that clicks an element or a point.
pub const BROWSER_CLICK: &str = "browser_click";
/// Name of the tool that types into a field.
pub const BROWSER_INPUT: &str = "browser_input";
/// Name of the tool that scrolls.
pub const BROWSER_SCROLL: &str = "browser_scroll";
/// Name of the tool that presses a key.
pub const BROWSER_PRESS_KEY: &str = "browser_press_key";
/// Name of the tool that chooses a dropdown option.
pub const BROWSER_SELECT_OPTION: &str = "browser_select_option";
/// Name of the tool that runs JavaScript in the page.
pub const BROWSER_CONSOLE_EXEC: &str = "browser_console_exec";
/// Name of the tool that saves a screenshot.
pub const BROWSER_SCREENSHOT: &str = "browser_screenshot";

/// The marker that ends a page text cut at [`BrowserConfig::max_view_chars`].
pub const TEXT_CUT_MARKER: &str = view::TEXT_CUT_MARKER;

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

/// Why [`find_chromium`] found nothing.
pub(crate) fn not_found_reason() -> String {
    match std::env::var_os("PLANWRIGHT_CHROMIUM") {
        Some(p) => format!(
            "PLANWRIGHT_CHROMIUM is set to {}, which is not a file",
            Path::new(&p).display()
        ),
        None => "Chromium was not found: install it (Debian: apt-get install chromium) or set \
                 PLANWRIGHT_CHROMIUM to its path"
            .to_string(),
    }
}

pub(crate) fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nine_tools_with_unique_names_and_object_schemas() {
        let tools = Browsers::new(BrowserConfig::default()).tools();
        let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
        assert_eq!(
            names,
            [
                BROWSER_NAVIGATE,
                BROWSER_VIEW,
                BROWSER_CLICK,
                BROWSER_INPUT,
                BROWSER_SCROLL,
                BROWSER_PRESS_KEY,
                BROWSER_SELECT_OPTION,
                BROWSER_CONSOLE_EXEC,
                BROWSER_SCREENSHOT
            ]
        );
        for tool in &tools {
            let schema = tool.parameters();
            assert_eq!(schema["type"], "object", "{}", tool.name());
            assert!(schema["properties"].is_object(), "{}", tool.name());
            assert!(schema.get("$schema").is_none());
            assert!(schema.get("title").is_none());
            assert!(schema.get("$defs").is_none(), "{}: {schema}", tool.name());
            assert!(tool.description().len() > 40, "{}", tool.name());
        }
        let idempotent: Vec<&str> = tools
            .iter()
            .filter(|t| t.idempotent())
            .map(|t| t.name())
            .collect();
        assert_eq!(idempotent, [BROWSER_VIEW, BROWSER_SCREENSHOT]);
    }

    #[test]
    fn schemas_carry_the_contract() {
        let tools = Browsers::new(BrowserConfig::default()).tools();
        let schema = |name: &str| {
            tools
                .iter()
                .find(|t| t.name() == name)
                .unwrap()
                .parameters()
        };
        assert_eq!(
            schema(BROWSER_NAVIGATE)["required"],
            serde_json::json!(["url"])
        );
        let click = schema(BROWSER_CLICK);
        assert!(click.get("required").is_none());
        assert_eq!(click["properties"]["index"]["type"], "integer");
        assert_eq!(click["properties"]["x"]["type"], "number");
        let input = schema(BROWSER_INPUT);
        assert_eq!(input["required"], serde_json::json!(["index", "text"]));
        assert_eq!(input["properties"]["press_enter"]["type"], "boolean");
        let scroll = schema(BROWSER_SCROLL);
        assert_eq!(
            scroll["properties"]["direction"]["enum"],
            serde_json::json!(["up", "down", "top", "bottom"])
        );
        assert_eq!(
            schema(BROWSER_SELECT_OPTION)["required"],
            serde_json::json!(["index", "option"])
        );
        assert_eq!(
            schema(BROWSER_CONSOLE_EXEC)["required"],
            serde_json::json!(["js"])
        );
        let view = schema(BROWSER_VIEW);
        assert_eq!(view["properties"], serde_json::json!({}));
        assert_eq!(
            schema(BROWSER_SCREENSHOT)["properties"]["full_page"]["type"],
            "boolean"
        );
    }

    #[test]
    fn an_explicit_missing_binary_is_reported() {
        let browsers = Browsers::new(BrowserConfig {
            chromium: Some(PathBuf::from("/nonexistent/chromium")),
            ..BrowserConfig::default()
        });
        let e = browsers.is_available().unwrap_err();
        assert!(e.contains("/nonexistent/chromium"), "{e}");
    }
}
