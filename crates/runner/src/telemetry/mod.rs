//! OpenTelemetry trace export (docs/observability.md): the domain's `tracing` spans (run,
//! step, LLM call, tool call, named by the GenAI semantic conventions) sent over OTLP
//! HTTP/protobuf to a collector, when one is configured ([`TelemetrySettings`]). The binary
//! calls [`start`] once, adds [`Telemetry::layer`] to its subscriber and keeps the
//! [`Telemetry`] until the process ends: dropping it flushes what is queued (bounded wait).
//!
//! Export never hurts a run: spans go to a bounded queue drained by the SDK's batch processor
//! on its own thread; a full queue drops spans, a collector that is down, slow or refusing is
//! one warning line (`http.rs`).

pub mod context;
mod http;
mod settings;

use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry::KeyValue;
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::trace::{BatchConfigBuilder, BatchSpanProcessor, SdkTracerProvider};
use opentelemetry_sdk::Resource;
use tracing_subscriber::registry::LookupSpan;

pub use settings::{ExportPlan, Sampler, SettingsError, TelemetrySettings, HTTP_PROTOBUF};

/// How many finished spans wait for export at most; more are dropped.
pub const MAX_QUEUE: usize = 2048;
/// How long the end of the process waits for the queue to be sent.
pub const FLUSH_WAIT: Duration = Duration::from_secs(5);

/// The exporter of a process, while it is kept.
#[derive(Debug)]
pub struct Telemetry {
    provider: SdkTracerProvider,
}

/// The provider [`flush`] reaches (a process quitting at once, e.g. on a third Ctrl-C).
static ACTIVE: OnceLock<Mutex<Option<SdkTracerProvider>>> = OnceLock::new();

/// Whether message content is recorded on spans, decided once by [`start`].
static CAPTURE_CONTENT: OnceLock<bool> = OnceLock::new();

/// Whether prompts, replies and tool arguments and outputs go on spans
/// (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`); false before [`start`].
pub fn capture_message_content() -> bool {
    CAPTURE_CONTENT.get().copied().unwrap_or(false)
}

/// Starts exporting as `settings` say: `Ok(None)` when no endpoint is set; an error (one
/// line for the user) when a value cannot be used: traces are then not exported and the
/// process goes on.
pub fn start(settings: &TelemetrySettings) -> Result<Option<Telemetry>, TelemetryError> {
    let _ = CAPTURE_CONTENT.set(settings.capture_message_content);
    let Some(plan) = settings.plan()? else {
        return Ok(None);
    };
    let url = reqwest::Url::parse(&plan.url)
        .map_err(|e| SettingsError::Endpoint(format!("{}: {e}", plan.url)))?;
    let client = http::OtlpHttpClient::new(&url).map_err(TelemetryError::Client)?;
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_http_client(client)
        .with_endpoint(plan.url.clone())
        .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
        .with_timeout(http::EXPORT_TIMEOUT)
        .with_headers(plan.headers.clone().into_iter().collect())
        .build()
        .map_err(|e| TelemetryError::Client(e.to_string()))?;
    let processor = BatchSpanProcessor::builder(exporter)
        .with_batch_config(
            BatchConfigBuilder::default()
                .with_max_queue_size(MAX_QUEUE)
                .with_scheduled_delay(Duration::from_secs(1))
                .build(),
        )
        .build();
    let resource = Resource::builder_empty()
        .with_service_name(plan.service_name.clone())
        .with_attributes(
            plan.resource
                .iter()
                .map(|(k, v)| KeyValue::new(k.clone(), v.clone())),
        )
        .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
        .build();
    let provider = SdkTracerProvider::builder()
        .with_span_processor(processor)
        .with_sampler(sampler(plan.sampler))
        .with_resource(resource)
        .build();
    http_client::set_trace_header_source(context::current_headers);
    if let Ok(mut active) = ACTIVE.get_or_init(|| Mutex::new(None)).lock() {
        *active = Some(provider.clone());
    }
    Ok(Some(Telemetry { provider }))
}

/// How the runs' spans' contexts are read and linked (`RuntimeBuilder::span_contexts`):
/// without an exporter a span has none, and nothing is kept.
pub fn span_contexts() -> domain::engine::trace::SpanContexts {
    domain::engine::trace::SpanContexts {
        traceparent: context::traceparent_of,
        link: context::link_to,
    }
}

fn sampler(sampler: Sampler) -> opentelemetry_sdk::trace::Sampler {
    use opentelemetry_sdk::trace::Sampler as S;
    match sampler {
        Sampler::AlwaysOn => S::AlwaysOn,
        Sampler::AlwaysOff => S::AlwaysOff,
        Sampler::Ratio(r) => S::TraceIdRatioBased(r),
        Sampler::ParentBasedAlwaysOn => S::ParentBased(Box::new(S::AlwaysOn)),
        Sampler::ParentBasedAlwaysOff => S::ParentBased(Box::new(S::AlwaysOff)),
        Sampler::ParentBasedRatio(r) => S::ParentBased(Box::new(S::TraceIdRatioBased(r))),
    }
}

impl Telemetry {
    /// The `tracing` layer turning spans into exported ones, for the binary's subscriber:
    /// Planwright's own `info` spans only (the domain's, the runner's, the server's),
    /// whatever the log shows, and the events meant as span events (target
    /// [`http_client::SPAN_EVENTS`]: a retry); never log lines, which may quote content.
    pub fn layer<S>(&self) -> Box<dyn tracing_subscriber::Layer<S> + Send + Sync>
    where
        S: tracing::Subscriber + for<'a> LookupSpan<'a> + Send + Sync,
    {
        use tracing_subscriber::Layer as _;
        let tracer = self.provider.tracer("planwright");
        let ours = tracing_subscriber::filter::filter_fn(exported);
        Box::new(
            tracing_opentelemetry::layer()
                .with_tracer(tracer)
                .with_location(false)
                .with_threads(false)
                .with_level(false)
                .with_target(false)
                .with_tracked_inactivity(false)
                .with_filter(ours),
        )
    }
}

/// Whether the exporter takes what `meta` describes: Planwright's own `info` spans and the
/// span events, nothing else (the layer's filter; the telemetry benchmark counts by it).
pub fn exported(meta: &tracing::Metadata<'_>) -> bool {
    if meta.is_event() {
        return meta.target() == http_client::SPAN_EVENTS;
    }
    meta.is_span()
        && *meta.level() <= tracing::Level::INFO
        && matches!(
            meta.target().split("::").next(),
            Some("domain" | "runner" | "server")
        )
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        let _ = self.provider.shutdown_with_timeout(FLUSH_WAIT);
    }
}

/// Sends what is queued now (bounded wait): for a process about to quit without unwinding.
pub fn flush() {
    let provider = ACTIVE
        .get()
        .and_then(|m| m.lock().ok())
        .and_then(|p| p.clone());
    if let Some(provider) = provider {
        let _ = provider.shutdown_with_timeout(FLUSH_WAIT);
    }
}

/// Why traces are not exported.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TelemetryError {
    #[error("traces are not exported: {0}")]
    Settings(#[from] SettingsError),
    #[error("traces are not exported: {0}")]
    Client(String),
}
