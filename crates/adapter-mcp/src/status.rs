//! What `McpToolbox::status` reports for each server.

use crate::server::error::StartError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerStatus {
    pub name: String,
    pub state: ServerState,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerState {
    /// Nothing asked for its tools yet.
    NotStarted,
    Started {
        /// The model-facing names of its offered tools.
        tools: Vec<String>,
        /// The child's process id (stdio servers).
        pid: Option<u32>,
        /// False once the child exited; the next call starts it again if it may.
        alive: bool,
        restarts: u32,
    },
    Failed {
        error: StartError,
        restarts: u32,
    },
}
