//! The headers that carry the current trace context on an outgoing request (W3C
//! `traceparent`, `tracestate`; docs/observability.md): supplied by whoever exports traces
//! (the runner's telemetry, once at start), read by each adapter as it sends a request.
//! None until a source is set, so a process without export adds nothing. And the target of
//! the events that are span events ([`SPAN_EVENTS`]).

use std::sync::OnceLock;

/// The `tracing` target of events meant as span events of the current span (a retry of an
/// LLM call): the runner's trace export sends these events, and no other log line.
pub const SPAN_EVENTS: &str = "planwright::span_event";

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
