//! # planwright-runner
//!
//! Planwright's runner library: turns plain settings ([`RunSettings`]) into a domain
//! [`domain::Runtime`] wired with the adapters picked by cargo features ([`wiring`]), opens
//! the database ([`database`]) inside a guarded state folder ([`state_folder`]), probes the
//! sandbox ([`sandbox`]), offers the config files' MCP servers as tools ([`mcp`]), reads a
//! run's mailbox ([`mailbox`]), says whether a run's lease still holds ([`liveness`]) and
//! claims and executes queued runs ([`queue`]); [`providers`] lists the model providers of the
//! build. [`Planwright`] is all of it as one value
//! with the command line's defaults; [`prelude`] what an embedder imports.
//!
//! Architecture invariant (docs/architecture.md): this crate never depends on clap, on the
//! HTTP server (`planwright-server`) or on the `planwright` binary, and writes nothing to
//! the terminal itself: what a user should read goes through [`notice`], which the binary
//! points at stderr.

pub mod ca_certs;
pub mod caller;
pub mod database;
mod error;
pub mod json;
pub mod liveness;
pub mod mailbox;
pub mod mcp;
pub mod metrics;
pub mod notice;
pub mod owner;
mod planwright;
pub mod providers;
pub mod queue;
pub mod run_changes;
pub mod sandbox;
pub mod served_on;
pub mod service;
mod service_error;
mod settings;
pub mod state_folder;
pub mod telemetry;
pub mod wiring;
pub mod workspace;

pub use error::RunnerError;
pub use planwright::{prelude, Planwright};
pub use settings::{CheckpointSettings, RunSettings, SandboxMode, SearchChoice, ToolProtocol};
