//! The headers that carry the current trace context on an outgoing request (W3C
//! `traceparent`, `tracestate`; docs/observability.md): supplied by whoever exports traces
//! (the runner's telemetry, once at start), read by each adapter as it sends a request.
//! None until a source is set, so a process without export adds nothing.

use std::sync::OnceLock;

/// Gives the headers of the trace context current on the calling task.
pub type TraceHeaderSource = fn() -> Vec<(&'static str, String)>;

static SOURCE: OnceLock<TraceHeaderSource> = OnceLock::new();

/// Sets the source; the first call wins.
pub fn set_trace_header_source(source: TraceHeaderSource) {
    let _ = SOURCE.set(source);
}

/// The trace-context headers to add to a request sent now (none without a source).
pub fn trace_headers() -> Vec<(&'static str, String)> {
    SOURCE.get().map(|source| source()).unwrap_or_default()
}
