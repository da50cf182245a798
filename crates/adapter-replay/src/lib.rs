//! # adapter-replay
//!
//! Record and replay of whole runs at the LLM port.
//!
//! - [`RecordingLlm`] wraps any [`LlmClient`](domain::ports::LlmClient) and appends every
//!   request/response pair to a **cassette**: a JSON-lines file whose first line is a header
//!   (`{"cassette": 1, "created_at", "model"}`) and each further line one call
//!   (`{"seq", "request", "response"}` or `{"seq", "request", "error": {"kind", "message",
//!   "retry_after_ms"}}`). Each line is flushed as it is written; secrets handed to the
//!   recorder (the API key) are replaced by `[REDACTED]`.
//! - [`ReplayLlm`] serves a cassette with no network and no key. Every request must equal
//!   (as JSON, nothing ignored) the next recorded one not yet served, or a later one (so
//!   parallel steps may interleave); otherwise the replay has **diverged**: the call fails
//!   with a message naming the recorded request number, the first differing JSON path and
//!   both values, and [`ReplayLlm::divergence`] keeps it for the caller to report.
//!
//! This is an adapter: the app depends on it, and `domain` must never depend on it.

mod cassette;
mod diff;
mod error;
mod record;
mod replay;

pub use cassette::{Entry, ErrorRecord, Header, CASSETTE_VERSION};
pub use error::CassetteError;
pub use record::RecordingLlm;
pub use replay::ReplayLlm;
