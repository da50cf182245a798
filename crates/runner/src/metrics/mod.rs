//! Prometheus metrics of the runs this process executes (docs/observability.md, "Metrics"):
//! [`MetricsSink`] counts a run's events as they are published (runs, steps, LLM calls and
//! tokens, tool calls, approvals); the queue runner counts its claims and takeovers;
//! [`exposition`] adds the gauges read at scrape time ([`Gauges`]: active runs, the
//! queue's depth and oldest age) and writes the text format. `serve` serves it at `/metrics`, `worker` on
//! `--metrics-addr`.

mod registry;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use chrono::Utc;
use domain::engine::trace::TraceLabels;
use domain::model::event::{Event, EventKind};
use domain::ports::{EventSink, QueueWaiting};

pub use registry::{families, metrics, Labels, Metrics, DURATION_BUCKETS};

/// The content type of the text exposition.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The label value of a provider, model or tool the process does not know.
pub const OTHER: &str = "other";

/// The providers a label may name besides those of [`crate::providers`]: a replayed
/// cassette, and a runtime without labels (or whose options name no provider it has).
const OTHER_PROVIDERS: [&str; 2] = ["replay", "unknown"];

/// The label values a process exposes (docs/observability.md, "Metrics"): the models it was
/// configured with and the tools its runs are offered. A client's made-up model or a
/// model's made-up tool name counts as [`OTHER`], so the number of series stays bounded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KnownLabels {
    pub models: BTreeSet<String>,
    pub tools: BTreeSet<String>,
}

impl KnownLabels {
    /// The known labels of a runtime configured with `model`: its executors' tools.
    pub fn of(model: &str, runtime: &domain::Runtime) -> KnownLabels {
        KnownLabels {
            models: [model.to_string()].into(),
            tools: runtime
                .executors
                .iter()
                .flat_map(|e| e.toolbox.schemas())
                .map(|s| s.name)
                .collect(),
        }
    }

    fn model(&self, model: &str) -> String {
        bounded(self.models.contains(model), model)
    }

    fn tool(&self, tool: &str) -> String {
        bounded(self.tools.contains(tool), tool)
    }
}

/// `value` when it is known, else [`OTHER`].
fn bounded(known: bool, value: &str) -> String {
    if known { value } else { OTHER }.to_string()
}

/// A provider's label: one of [`crate::providers`]' names (or [`OTHER_PROVIDERS`]), else
/// [`OTHER`].
fn provider_label(provider: &str) -> String {
    let known =
        OTHER_PROVIDERS.contains(&provider) || crate::providers::names().contains(&provider);
    bounded(known, provider)
}

/// Counts one run's events into [`metrics`], then hands them to `inner`.
pub struct MetricsSink {
    inner: Arc<dyn EventSink>,
    /// The run's provider and model labels, bounded.
    provider: String,
    model: String,
    known: KnownLabels,
    /// The run's mode as last announced (`auto` until a style is chosen).
    mode: Mutex<String>,
}

impl MetricsSink {
    /// `labels`: the run's provider and model; `known`: the values the labels may take.
    pub fn new(
        inner: Arc<dyn EventSink>,
        labels: &TraceLabels,
        mode: String,
        known: KnownLabels,
    ) -> MetricsSink {
        MetricsSink {
            inner,
            provider: provider_label(&labels.provider),
            model: known.model(&labels.model),
            known,
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
                ("provider", self.provider.clone()),
                ("model", self.model.clone()),
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
                let tool = self.known.tool(tool);
                m.add(
                    TOOL_CALLS,
                    vec![("tool", tool.clone()), ("outcome", outcome.into())],
                    1.0,
                );
                m.observe(
                    TOOL_SECONDS,
                    vec![("tool", tool)],
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

/// The gauges read at scrape time: the runs this process is executing and the queue's
/// waiting runs (`QueueRunner::gauges`, one aggregate read of the store).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Gauges {
    pub active_runs: usize,
    pub queue: QueueWaiting,
}

/// The text exposition: the counters and histograms, and `gauges`.
pub fn exposition(gauges: &Gauges) -> String {
    use families::*;
    let m = metrics();
    let oldest = gauges
        .queue
        .oldest
        .map(|at| (Utc::now() - at).num_milliseconds().max(0) as f64 / 1000.0)
        .unwrap_or(0.0);
    let waiting = (m.counter(APPROVALS_REQUESTED, &Vec::new())
        - m.counter(APPROVALS_DECIDED, &Vec::new()))
    .max(0.0);
    m.text(&[
        (ACTIVE_RUNS, gauges.active_runs as f64),
        (QUEUE_DEPTH, gauges.queue.count as f64),
        (QUEUE_OLDEST, oldest),
        (APPROVALS_WAITING, waiting),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::ports::llm::CallPurpose;
    use domain::ports::NoEventSink;

    fn llm_called() -> EventKind {
        EventKind::LlmCalled {
            purpose: CallPurpose::Execute,
            step_id: None,
            ok: true,
            prompt_tokens: 10,
            completion_tokens: 2,
            cached_prompt_tokens: 0,
            duration_ms: 30,
            key: None,
            request_hash: None,
            response: None,
        }
    }

    fn tool_called(tool: &str) -> EventKind {
        EventKind::ToolCalled {
            step_id: None,
            call_id: "c".into(),
            tool: tool.into(),
            ok: false,
            output: String::new(),
            duration_ms: 5,
            journal_key: None,
        }
    }

    /// `promtool check metrics` on `text`: its complaints, `None` when clean, or when
    /// promtool is not installed here (`test_support::require_or_skip`: then skipped, and a
    /// failure under CI).
    fn promtool_problems(text: &str) -> Option<String> {
        use std::io::Write as _;
        let child = std::process::Command::new("promtool")
            .args(["check", "metrics"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| format!("promtool is not installed (apt-get install prometheus): {e}"));
        let mut child = test_support::require_or_skip(child)?;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (!out.status.success() || !said.trim().is_empty()).then_some(said)
    }

    /// Issue 41, Medium 12: 150 models a client made up and 320 tool names a model made up
    /// are counted as `other`; the exposition stays small and promtool accepts it.
    #[test]
    fn made_up_models_and_tools_yield_a_bounded_number_of_series() {
        let known = KnownLabels {
            models: ["gpt-4o-mini".to_string()].into(),
            tools: ["shell_exec".to_string(), "file_read".to_string()].into(),
        };
        for i in 0..150 {
            let labels = TraceLabels {
                provider: if i % 2 == 0 {
                    "openai"
                } else {
                    "made-up-provider"
                }
                .into(),
                model: format!("made-up-model-{i}"),
                capture_message_content: false,
            };
            let sink =
                MetricsSink::new(Arc::new(NoEventSink), &labels, "flow".into(), known.clone());
            sink.count(&llm_called());
        }
        let labels = TraceLabels {
            provider: "replay".into(),
            model: "gpt-4o-mini".into(),
            capture_message_content: false,
        };
        let sink = MetricsSink::new(Arc::new(NoEventSink), &labels, "flow".into(), known);
        sink.count(&llm_called());
        sink.count(&tool_called("shell_exec"));
        for i in 0..320 {
            sink.count(&tool_called(&format!("made_up_tool_{i}")));
        }
        let text = metrics().text(&[]);
        assert!(
            !text.contains("made-up") && !text.contains("made_up"),
            "{text}"
        );
        assert!(text.contains("model=\"gpt-4o-mini\""), "{text}");
        assert!(text.contains("provider=\"replay\""), "{text}");
        assert!(text.contains("model=\"other\""), "{text}");
        assert!(text.contains("tool=\"other\""), "{text}");
        assert!(text.contains("tool=\"shell_exec\""), "{text}");
        // Before: one series per made-up value, 8,029 lines for the tools alone.
        let series = text.lines().filter(|l| !l.starts_with('#')).count();
        assert!(series < 200, "{series} series:\n{text}");
        if let Some(problems) = promtool_problems(&text) {
            panic!("promtool check metrics: {problems}\n{text}");
        }
    }
}
