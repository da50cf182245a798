//! Trace context across processes (docs/observability.md, "Across processes"): a caller's
//! W3C `traceparent` (and `tracestate`) checked when a run is queued and kept in its queue
//! request, so the process that executes it (this one, a worker elsewhere, a resume after a
//! crash or a lease takeover) continues the caller's trace; and the current span's context
//! as headers on outgoing requests (`http_client::trace_headers`); a run span's own context
//! read and linked to, so a resumed run's span links to the interrupted one's.

use std::collections::HashMap;

use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::TraceContextExt;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use serde_json::Value;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The keys of a queue request that hold the caller's trace context.
const TRACEPARENT: &str = "traceparent";
const TRACESTATE: &str = "tracestate";

/// A caller's trace context, checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallerTrace {
    pub traceparent: String,
    pub tracestate: Option<String>,
}

/// Why an incoming `traceparent` is ignored (the run then starts a new trace).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("ignoring a malformed traceparent {0:?} (the run starts a new trace)")]
pub struct BadTraceparent(pub String);

impl CallerTrace {
    /// The context of a request's `traceparent` and `tracestate` headers: `Ok(None)`
    /// without a `traceparent`; an error when it is not version `00`'s
    /// `00-<32 hex>-<16 hex>-<2 hex>` with non-zero ids.
    pub fn from_headers(
        traceparent: Option<&str>,
        tracestate: Option<&str>,
    ) -> Result<Option<CallerTrace>, BadTraceparent> {
        let Some(raw) = traceparent.map(str::trim).filter(|t| !t.is_empty()) else {
            return Ok(None);
        };
        let parts: Vec<&str> = raw.split('-').collect();
        let hex = |s: &str, len: usize| {
            s.len() == len
                && s.bytes()
                    .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        };
        let valid = matches!(parts.as_slice(), [version, trace, span, flags]
            if *version == "00" && hex(trace, 32) && hex(span, 16) && hex(flags, 2)
                && trace.bytes().any(|b| b != b'0') && span.bytes().any(|b| b != b'0'));
        if !valid {
            let shown: String = raw.chars().take(80).collect();
            return Err(BadTraceparent(shown));
        }
        Ok(Some(CallerTrace {
            traceparent: raw.to_string(),
            tracestate: tracestate
                .map(str::trim)
                .filter(|t| !t.is_empty() && t.len() <= 512)
                .map(str::to_string),
        }))
    }

    /// Puts the context into a queued run's request (a JSON object).
    pub fn store_in(&self, request: &mut Value) {
        if let Some(object) = request.as_object_mut() {
            object.insert(TRACEPARENT.into(), Value::from(self.traceparent.clone()));
            if let Some(state) = &self.tracestate {
                object.insert(TRACESTATE.into(), Value::from(state.clone()));
            }
        }
    }
}

/// The span a claimed run executes under: a child of the caller's trace when its queue
/// request holds one (the domain's `invoke_workflow` span is then in the caller's trace),
/// else a root.
pub fn queued_run_span(request: Option<&Value>) -> tracing::Span {
    let span = tracing::info_span!(
        "queued_run",
        otel.name = "process planwright.queue",
        otel.kind = "consumer",
    );
    let field = |key: &str| {
        request
            .and_then(|r| r.get(key))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    if let Some(traceparent) = field(TRACEPARENT) {
        let _ = span.set_parent(extracted(traceparent, field(TRACESTATE)));
    }
    span
}

/// The context a W3C `traceparent` (and `tracestate`) names.
fn extracted(traceparent: String, tracestate: Option<String>) -> opentelemetry::Context {
    let mut carrier = HashMap::new();
    carrier.insert(TRACEPARENT.to_string(), traceparent);
    if let Some(state) = tracestate {
        carrier.insert(TRACESTATE.to_string(), state);
    }
    TraceContextPropagator::new().extract(&carrier)
}

/// The W3C fields of `span`'s context (empty when it is not exported).
fn injected(span: &tracing::Span) -> HashMap<String, String> {
    let mut carrier: HashMap<String, String> = HashMap::new();
    TraceContextPropagator::new().inject_context(&span.context(), &mut carrier);
    carrier
}

/// The W3C `traceparent` of `span` (none when it is not exported): how a run's span is kept
/// with the run (`domain::engine::trace::SpanContexts`).
pub fn traceparent_of(span: &tracing::Span) -> Option<String> {
    injected(span).remove(TRACEPARENT)
}

/// Links `span` to the span of `traceparent`, the run span of an interrupted life of the
/// same run (the link says so: `planwright.link` = `interrupted_run`).
pub fn link_to(span: &tracing::Span, traceparent: &str) {
    let linked = extracted(traceparent.to_string(), None);
    let linked = linked.span().span_context().clone();
    span.add_link_with_attributes(
        linked,
        vec![opentelemetry::KeyValue::new(
            "planwright.link",
            "interrupted_run",
        )],
    );
}

/// The W3C headers of the current span's context (none outside an exported span).
pub fn current_headers() -> Vec<(&'static str, String)> {
    let mut carrier = injected(&tracing::Span::current());
    let mut headers = Vec::new();
    if let Some(parent) = carrier.remove(TRACEPARENT) {
        headers.push((TRACEPARENT, parent));
    }
    if let Some(state) = carrier.remove(TRACESTATE).filter(|s| !s.is_empty()) {
        headers.push((TRACESTATE, state));
    }
    headers
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

    #[test]
    fn a_w3c_traceparent_is_kept_with_its_tracestate() {
        let trace = CallerTrace::from_headers(Some(GOOD), Some("vendor=1"))
            .unwrap()
            .unwrap();
        assert_eq!(trace.traceparent, GOOD);
        let mut request = serde_json::json!({"mode": "flow"});
        trace.store_in(&mut request);
        assert_eq!(request["traceparent"], GOOD);
        assert_eq!(request["tracestate"], "vendor=1");
        assert_eq!(CallerTrace::from_headers(None, Some("x")), Ok(None));
    }

    #[test]
    fn a_malformed_traceparent_is_refused_with_one_clear_error() {
        for bad in [
            "garbage",
            "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "00-00000000000000000000000000000000-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
            "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331",
        ] {
            let err = CallerTrace::from_headers(Some(bad), None).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("ignoring a malformed traceparent {bad:?} (the run starts a new trace)")
            );
        }
    }
}
