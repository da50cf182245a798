//! The environment handed to shell commands: the parent's, minus anything secret-looking.

use std::ffi::OsString;

/// Name fragments (upper case) that mark a variable as secret.
const SECRET_FRAGMENTS: [&str; 5] = ["KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL"];
/// Name prefixes (upper case) of provider and Planwright settings.
const SECRET_PREFIXES: [&str; 3] = ["OPENAI_", "ANTHROPIC_", "PLANWRIGHT_"];

/// Whether a variable must not reach the shell (case-insensitive).
pub(crate) fn is_secret_name(name: &str) -> bool {
    let upper = name.to_uppercase();
    SECRET_FRAGMENTS.iter().any(|f| upper.contains(f))
        || SECRET_PREFIXES.iter().any(|p| upper.starts_with(p))
}

/// The current process environment without secret-looking variables.
pub(crate) fn filtered_env() -> Vec<(OsString, OsString)> {
    std::env::vars_os()
        .filter(|(name, _)| !is_secret_name(&name.to_string_lossy()))
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_recognised() {
        for name in [
            "OPENAI_API_KEY",
            "openai_base_url",
            "ANTHROPIC_VERSION",
            "PLANWRIGHT_MODEL",
            "MY_TOKEN",
            "github_token",
            "AWS_SECRET_ACCESS_KEY",
            "DB_PASSWORD",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "SSH_AUTH_KEYS",
            "apikey",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "LANG",
            "TERM",
            "USER",
            "CARGO_HOME",
            "MY_OPENAI_URL",
        ] {
            assert!(!is_secret_name(name), "{name}");
        }
    }
}
