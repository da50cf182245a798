//! Prometheus metrics of the runs this process executes (docs/observability.md, "Metrics"):
//! [`MetricsSink`] counts a run's events as they are published (runs, steps, LLM calls and
//! tokens, tool calls, approvals); the queue runner counts its claims and takeovers;
//! [`exposition`] adds the gauges read at scrape time (active runs, the queue's depth and
//! oldest age) and writes the text format. `serve` serves it at `/metrics`, `worker` on
//! `--metrics-addr`.

mod registry;

use std::sync::{Arc, Mutex};

use chrono::Utc;
use domain::engine::trace::TraceLabels;
use domain::model::event::{Event, EventKind};
use domain::ports::{EventSink, RunStatus};

pub use registry::{families, metrics, Labels, Metrics, DURATION_BUCKETS};

use crate::queue::QueueRunner;

/// The content type of the text exposition.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Counts one run's events into [`metrics`], then hands them to `inner`.
pub struct MetricsSink {
    inner: Arc<dyn EventSink>,
    labels: TraceLabels,
    /// The run's mode as last announced (`auto` until a style is chosen).
    mode: Mutex<String>,
}

impl MetricsSink {
    pub fn new(inner: Arc<dyn EventSink>, labels: TraceLabels, mode: String) -> MetricsSink {
        MetricsSink {
            inner,
            labels,
            mode: Mutex::new(mode),
        }
    }

    fn mode(&self) -> String {
        self.mode.lock().map(|m| m.clone()).unwrap_or_default()
    }

    fn count(&self, kind: &EventKind) {
        use families::*;
        let m = metrics();
        let model = || {
            vec![
                ("provider", self.labels.provider.clone()),
                ("model", self.labels.model.clone()),
            ]
        };
        match kind {
            EventKind::RunStarted { mode, .. } => {
                if let Ok(mut m) = self.mode.lock() {
                    *m = mode.clone();
                }
                m.add(RUNS_STARTED, vec![("mode", mode.clone())], 1.0);
            }
            EventKind::RunResumed { .. } => {
                m.add(RUNS_STARTED, vec![("mode", self.mode())], 1.0);
            }
            EventKind::ModeChosen { mode, .. } => {
                if let Ok(mut m) = self.mode.lock() {
                    *m = mode.clone();
                }
            }
            EventKind::RunCompleted { .. } => m.add(
                RUNS_FINISHED,
                vec![("status", "completed".into()), ("mode", self.mode())],
                1.0,
            ),
            EventKind::RunFailed { cancelled, .. } => {
                let status = if *cancelled { "cancelled" } else { "failed" };
                m.add(
                    RUNS_FINISHED,
                    vec![("status", status.into()), ("mode", self.mode())],
                    1.0,
                );
            }
            EventKind::StepCompleted { .. } => {
                m.add(STEPS, vec![("outcome", "completed".into())], 1.0)
            }
            EventKind::StepFailed { status, .. } => {
                m.add(STEPS, vec![("outcome", status.as_str().into())], 1.0)
            }
            EventKind::StepSkipped { .. } => m.add(STEPS, vec![("outcome", "skipped".into())], 1.0),
            EventKind::LlmCalled {
                ok,
                prompt_tokens,
                completion_tokens,
                cached_prompt_tokens,
                duration_ms,
                ..
            } => {
                let outcome = if *ok { "ok" } else { "error" };
                let mut with_outcome = model();
                with_outcome.push(("outcome", outcome.into()));
                m.add(LLM_CALLS, with_outcome, 1.0);
                for (kind, n) in [
                    ("input", prompt_tokens),
                    ("output", completion_tokens),
                    ("cached_input", cached_prompt_tokens),
                ] {
                    let mut labels = model();
                    labels.push(("kind", kind.into()));
                    m.add(LLM_TOKENS, labels, *n as f64);
                }
                m.observe(LLM_SECONDS, model(), *duration_ms as f64 / 1000.0);
            }
            EventKind::ToolCalled {
                tool,
                ok,
                duration_ms,
                ..
            } => {
                let outcome = if *ok { "ok" } else { "error" };
                m.add(
                    TOOL_CALLS,
                    vec![("tool", tool.clone()), ("outcome", outcome.into())],
                    1.0,
                );
                m.observe(
                    TOOL_SECONDS,
                    vec![("tool", tool.clone())],
                    *duration_ms as f64 / 1000.0,
                );
            }
            EventKind::ApprovalRequested { .. } => m.add(APPROVALS_REQUESTED, Vec::new(), 1.0),
            EventKind::ApprovalDecided { .. } => m.add(APPROVALS_DECIDED, Vec::new(), 1.0),
            _ => {}
        }
    }
}

impl EventSink for MetricsSink {
    fn publish(&self, event: &Event) {
        self.count(&event.kind);
        self.inner.publish(event);
    }
}

/// Counts a claim by the queue runner; `takeover`: the run had been started by another
/// process whose lease lapsed.
pub fn claimed(takeover: bool) {
    metrics().add(families::CLAIMS, Vec::new(), 1.0);
    if takeover {
        metrics().add(families::TAKEOVERS, Vec::new(), 1.0);
    }
}

/// The text exposition: the counters and histograms, and the gauges read now from
/// `runner` (its active runs) and its store (the queue).
pub async fn exposition(runner: &QueueRunner) -> String {
    use families::*;
    let m = metrics();
    let active = runner
        .with_registry(|r| {
            r.runs
                .values()
                .filter(|e| e.phase == crate::queue::Phase::Active)
                .count()
        })
        .unwrap_or(0);
    let now = Utc::now();
    let (depth, oldest) = match runner.store.list_runs().await {
        Ok(runs) => {
            let queued: Vec<_> = runs
                .iter()
                .filter(|r| r.status == RunStatus::Queued)
                .collect();
            let oldest = queued
                .iter()
                .map(|r| (now - r.created_at).num_milliseconds().max(0) as f64 / 1000.0)
                .fold(0.0, f64::max);
            (queued.len() as f64, oldest)
        }
        Err(e) => {
            tracing::warn!(error = %e, "metrics: cannot read the queue");
            (0.0, 0.0)
        }
    };
    let waiting = (m.counter(APPROVALS_REQUESTED, &Vec::new())
        - m.counter(APPROVALS_DECIDED, &Vec::new()))
    .max(0.0);
    m.text(&[
        (ACTIVE_RUNS, active as f64),
        (QUEUE_DEPTH, depth),
        (QUEUE_OLDEST, oldest),
        (APPROVALS_WAITING, waiting),
    ])
}
