//! Where the config files are: the project's, in the working folder, and the user's.

use std::path::PathBuf;

/// The project's file, looked up in the working folder (kept read-only to sandboxed
/// commands by the runner, which names it too).
pub const PROJECT_FILE: &str = runner::wiring::PROJECT_FILE;

/// The user's file: `$XDG_CONFIG_HOME/planwright/config.toml` (an absolute
/// `XDG_CONFIG_HOME` only, as the XDG spec says), else `$HOME/.config/planwright/config.toml`.
pub fn user_file() -> Option<PathBuf> {
    runner::state_folder::user_config_dir().map(|dir| dir.join("config.toml"))
}
