//! [`BrowserConfig`]: where Chromium is and how long the tools wait for it.

use std::path::PathBuf;
use std::time::Duration;

/// Settings shared by every browser of a [`crate::Browsers`] pool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrowserConfig {
    /// The Chromium binary; `None` means [`crate::find_chromium`] (`PLANWRIGHT_CHROMIUM`,
    /// else `chromium` / `chromium-browser` on `PATH`).
    pub chromium: Option<PathBuf>,
    /// Longest wait for a page to load after `browser_navigate` or a click that navigates
    /// (default 20 s).
    pub navigation_timeout: Duration,
    /// Longest wait for any other browser operation (default 10 s).
    pub action_timeout: Duration,
    /// Longest wait for Chromium to start and accept the DevTools connection (default 30 s).
    pub launch_timeout: Duration,
    /// Most characters of one page view; longer pages are cut with a marker (default 12 000).
    pub max_view_chars: usize,
    /// More Chromium command-line flags, appended after the built-in ones.
    pub extra_args: Vec<String>,
    /// Window size in CSS pixels, which is also the screenshot size (default 1280 × 800).
    pub window: (u32, u32),
    /// Let the browser open loopback and private-network addresses (local test pages);
    /// link-local (cloud metadata) addresses and `file:` stay refused
    /// ([`crate::ALLOW_LOCAL_SWITCH`], docs/security.md). Default false.
    pub allow_local: bool,
    /// More addresses of this machine, refused like its interfaces' (which the address
    /// guard reads itself) unless `allow_local`: what the process serves on (`serve
    /// --addr`). Default none.
    pub this_machine: Vec<std::net::IpAddr>,
}

impl Default for BrowserConfig {
    fn default() -> Self {
        BrowserConfig {
            chromium: None,
            navigation_timeout: Duration::from_secs(20),
            action_timeout: Duration::from_secs(10),
            launch_timeout: Duration::from_secs(30),
            max_view_chars: 12_000,
            extra_args: Vec::new(),
            window: (1280, 800),
            allow_local: false,
            this_machine: Vec::new(),
        }
    }
}

/// The flags every browser starts with: headless, no sandbox (Planwright runs in containers,
/// often as root), no GPU, and nothing that reaches out to the network on its own (closed
/// networks must not see stalls or errors from it), with a fresh profile in `profile_dir`,
/// DevTools on a pipe (no port: [`crate::devtools_pipe`]) and every connection, `localhost`
/// included, through the address guard at `proxy_server` ([`crate::address_guard`]); WebRTC
/// may not send UDP around it.
pub(crate) fn chromium_args(
    config: &BrowserConfig,
    profile_dir: &std::path::Path,
    proxy_server: &str,
) -> Vec<String> {
    let (width, height) = config.window;
    let mut args: Vec<String> = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--disable-default-apps",
        "--disable-dev-shm-usage",
        "--disable-breakpad",
        "--disable-domain-reliability",
        "--disable-client-side-phishing-detection",
        "--disable-features=Translate,MediaRouter,OptimizationHints,AutofillServerCommunication",
        "--metrics-recording-only",
        "--password-store=basic",
        "--use-mock-keychain",
        "--mute-audio",
        "--hide-scrollbars",
        "--remote-debugging-pipe",
        "--proxy-bypass-list=<-loopback>",
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    args.push(format!("--proxy-server={proxy_server}"));
    args.push(format!("--user-data-dir={}", profile_dir.display()));
    args.push(format!("--window-size={width},{height}"));
    args.extend(config.extra_args.iter().cloned());
    args.push("about:blank".to_string());
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_flags() {
        let config = BrowserConfig {
            extra_args: vec!["--lang=fr".into()],
            ..BrowserConfig::default()
        };
        assert_eq!(config.navigation_timeout, Duration::from_secs(20));
        assert_eq!(config.action_timeout, Duration::from_secs(10));
        assert!(!config.allow_local);
        let args = chromium_args(
            &config,
            std::path::Path::new("/tmp/p"),
            "socks5://127.0.0.1:9",
        );
        for flag in [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--user-data-dir=/tmp/p",
            "--window-size=1280,800",
            "--remote-debugging-pipe",
            "--proxy-server=socks5://127.0.0.1:9",
            "--proxy-bypass-list=<-loopback>",
        ] {
            assert!(
                args.iter().any(|a| a == flag),
                "{flag} missing from {args:?}"
            );
        }
        assert_eq!(args[args.len() - 2], "--lang=fr");
        assert_eq!(args.last().map(String::as_str), Some("about:blank"));
        assert!(
            !args
                .iter()
                .any(|a| a.starts_with("--remote-debugging-port")),
            "{args:?}"
        );
    }
}
