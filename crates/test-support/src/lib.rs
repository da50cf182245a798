//! # test-support
//!
//! Helpers the crates' tests share, so that each is written once:
//!
//! - [`require_or_skip`] (and [`skip_unless`], [`under_ci`]): the one rule for a resource
//!   a test needs from the machine (Chromium, bubblewrap, PostgreSQL, Node.js, the model
//!   file): on a laptop without it the test is skipped with a note on stderr; under
//!   `CI=true` (CI installs them all) it fails with the reason;
//! - [`tool_context`]: the `ToolContext` a tool call gets, for tests calling tools directly;
//! - [`wait_until`]: polls a condition until it holds (never a fixed sleep), and
//!   [`process_gone`]: whether a process is dead (gone, or a zombie);
//! - [`pip_venv`]: a Python venv with one pip package, made once and kept;
//! - [`Swapper`]: a thread exchanging two paths in a loop (a file or folder and a symbolic
//!   link), for the tests of races between a check and a use.
//!
//! The fakes of the ports stay in `domain::testing` (feature `testing`), in memory and
//! beside the ports they fake; this crate is for what needs the machine.
//!
//! A dev-only crate (`publish = false`, a `[dev-dependencies]` entry only: no binary ships
//! it). It depends on `domain` (for its types) and on no adapter, so any crate's tests can
//! use it.

#![allow(clippy::print_stderr)] // the test harness shows it: why a test did nothing

mod ci;
mod process;
mod swap;
mod venv;

pub use ci::{require_or_skip, skip_unless, under_ci};
pub use process::{process_gone, wait_until};
pub use swap::Swapper;
pub use venv::pip_venv;

use std::path::Path;

use domain::ports::ToolContext;
use tokio_util::sync::CancellationToken;

/// The context of a tool call in run `run_id`, step `s1`, with `workspace` as the run's
/// workspace and a fresh cancellation token.
pub fn tool_context(workspace: &Path, run_id: &str) -> ToolContext {
    ToolContext {
        run_id: run_id.to_string(),
        step_id: Some("s1".to_string()),
        workspace: workspace.to_path_buf(),
        cancel: CancellationToken::new(),
    }
}
