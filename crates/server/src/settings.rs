//! What `serve`, `worker` and `mcp serve` are started with, as plain values (the binary
//! fills them from its command line, `crates/app/src/cli/`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use runner::RunSettings;

/// `planwright serve`.
#[derive(Debug, Clone)]
pub struct ServeSettings {
    pub addr: SocketAddr,
    pub max_connections: u32,
    /// How long a connection may take to send its request's headers.
    pub header_timeout: Duration,
    /// How long a run waits for its user's answer.
    pub ask_timeout: Duration,
    /// Runs executed at once; `None`: 4 on a SQLite file, 0 on a shared database.
    pub workers: Option<u32>,
    /// Where runs' workspaces are created.
    pub workspace_root: PathBuf,
    /// The admin token; `None`: the one kept beside the database (created on first use).
    pub token: Option<String>,
    /// Serve `/metrics` without the token.
    pub metrics_public: bool,
    /// The settings of the runs it executes (a client may pick the mode and model).
    pub run: RunSettings,
    /// Only the lines supervisors wait for on stderr (`-q`).
    pub quiet: bool,
}

/// `planwright worker`.
#[derive(Debug, Clone)]
pub struct WorkerSettings {
    /// Runs executed at once.
    pub concurrency: u32,
    pub ask_timeout: Duration,
    /// The root the claimed runs' workspaces must be under.
    pub workspace_root: PathBuf,
    /// Where `/metrics` is served; `None`: nowhere.
    pub metrics_addr: Option<std::net::SocketAddr>,
    pub run: RunSettings,
    pub quiet: bool,
}

/// `planwright mcp serve`.
#[derive(Debug, Clone)]
pub struct McpServeSettings {
    /// Runs executed at once; `None` as for `serve`.
    pub workers: Option<u32>,
    pub ask_timeout: Duration,
    pub workspace_root: PathBuf,
    pub run: RunSettings,
}
