//! The process's Prometheus metrics (docs/observability.md, "Metrics"): counters and
//! histograms kept in memory, written in the Prometheus text exposition format. Hand-written
//! (a few maps and a writer) rather than a crate: nothing else needs one. Label values are
//! bounded (modes, statuses, outcomes, providers, models, tool names): never a run id or
//! task text.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Mutex, OnceLock};

/// The buckets of the duration histograms, in seconds.
pub const DURATION_BUCKETS: [f64; 12] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// Labels as (name, value) pairs, in a fixed order per metric.
pub type Labels = Vec<(&'static str, String)>;

#[derive(Debug, Default, Clone)]
struct Histogram {
    /// Per bucket of [`DURATION_BUCKETS`], observations at most its bound (cumulative on
    /// output).
    buckets: [u64; DURATION_BUCKETS.len()],
    count: u64,
    sum: f64,
}

/// A metric's declaration: name, help, type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Family {
    pub name: &'static str,
    pub help: &'static str,
    pub kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Counter,
    Gauge,
    Histogram,
}

/// Every metric the process exposes (gauges are filled at scrape time, see
/// [`crate::metrics::exposition`]).
pub mod families {
    use super::{Family, Kind};

    macro_rules! family {
        ($id:ident, $name:literal, $kind:ident, $help:literal) => {
            pub const $id: Family = Family {
                name: $name,
                help: $help,
                kind: Kind::$kind,
            };
        };
    }
    family!(
        RUNS_STARTED,
        "planwright_runs_started_total",
        Counter,
        "Runs started (or resumed) in this process, by mode."
    );
    family!(
        RUNS_FINISHED,
        "planwright_runs_finished_total",
        Counter,
        "Runs that ended in this process, by status and mode."
    );
    family!(
        STEPS,
        "planwright_steps_finished_total",
        Counter,
        "Step attempts that ended, by outcome."
    );
    family!(
        LLM_CALLS,
        "planwright_llm_calls_total",
        Counter,
        "LLM calls, by provider, model and outcome."
    );
    family!(
        LLM_TOKENS,
        "planwright_llm_tokens_total",
        Counter,
        "LLM tokens, by provider, model and kind (input, output, cached input)."
    );
    family!(
        LLM_SECONDS,
        "planwright_llm_call_duration_seconds",
        Histogram,
        "LLM call latency, by provider and model."
    );
    family!(
        TOOL_CALLS,
        "planwright_tool_calls_total",
        Counter,
        "Tool calls, by tool and outcome."
    );
    family!(
        TOOL_SECONDS,
        "planwright_tool_call_duration_seconds",
        Histogram,
        "Tool call duration, by tool."
    );
    family!(
        APPROVALS_REQUESTED,
        "planwright_approvals_requested_total",
        Counter,
        "Tool calls that waited for a person's approval."
    );
    family!(
        APPROVALS_DECIDED,
        "planwright_approvals_decided_total",
        Counter,
        "Approval requests answered."
    );
    family!(
        CLAIMS,
        "planwright_queue_claims_total",
        Counter,
        "Queued runs this process claimed."
    );
    family!(
        TAKEOVERS,
        "planwright_lease_takeovers_total",
        Counter,
        "Runs this process claimed after another process's lease on them lapsed."
    );
    family!(
        APPROVALS_WAITING,
        "planwright_approvals_waiting",
        Gauge,
        "Tool calls of this process's runs waiting for approval now."
    );
    family!(
        ACTIVE_RUNS,
        "planwright_active_runs",
        Gauge,
        "Runs this process executes now."
    );
    family!(
        QUEUE_DEPTH,
        "planwright_queue_depth",
        Gauge,
        "Runs waiting in the queue."
    );
    family!(
        QUEUE_OLDEST,
        "planwright_queue_oldest_age_seconds",
        Gauge,
        "Age of the oldest run waiting in the queue (0 when none)."
    );
}

/// The counters and histograms.
#[derive(Debug, Default)]
pub struct Metrics {
    counters: Mutex<BTreeMap<(&'static str, Labels), f64>>,
    histograms: Mutex<BTreeMap<(&'static str, Labels), Histogram>>,
}

/// The process's metrics.
pub fn metrics() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(Metrics::default)
}

impl Metrics {
    /// Adds `by` to a counter.
    pub fn add(&self, family: Family, labels: Labels, by: f64) {
        if let Ok(mut counters) = self.counters.lock() {
            *counters.entry((family.name, labels)).or_insert(0.0) += by;
        }
    }

    /// Records one observation of `seconds` in a histogram.
    pub fn observe(&self, family: Family, labels: Labels, seconds: f64) {
        if let Ok(mut histograms) = self.histograms.lock() {
            let h = histograms.entry((family.name, labels)).or_default();
            if let Some(i) = DURATION_BUCKETS.iter().position(|b| seconds <= *b) {
                h.buckets[i] += 1;
            }
            h.count += 1;
            h.sum += seconds;
        }
    }

    /// The value of a counter (0 when never added to): for tests and gauges.
    pub fn counter(&self, family: Family, labels: &Labels) -> f64 {
        self.counters
            .lock()
            .ok()
            .and_then(|c| c.get(&(family.name, labels.clone())).copied())
            .unwrap_or(0.0)
    }

    /// The text exposition of every family, with `gauges` (family and value) filled at
    /// scrape time.
    pub fn text(&self, gauges: &[(Family, f64)]) -> String {
        let counters = self.counters.lock().map(|c| c.clone()).unwrap_or_default();
        let histograms = self
            .histograms
            .lock()
            .map(|h| h.clone())
            .unwrap_or_default();
        let mut out = String::new();
        use families::*;
        let counter_families = [
            RUNS_STARTED,
            RUNS_FINISHED,
            STEPS,
            LLM_CALLS,
            LLM_TOKENS,
            TOOL_CALLS,
            APPROVALS_REQUESTED,
            APPROVALS_DECIDED,
            CLAIMS,
            TAKEOVERS,
        ];
        for family in counter_families {
            header(&mut out, family);
            for ((name, labels), value) in &counters {
                if *name == family.name {
                    let _ = writeln!(
                        out,
                        "{name}{} {}",
                        labels_text(labels, None),
                        number(*value)
                    );
                }
            }
        }
        for family in [LLM_SECONDS, TOOL_SECONDS] {
            header(&mut out, family);
            for ((name, labels), h) in &histograms {
                if *name != family.name {
                    continue;
                }
                let mut cumulative = 0;
                for (bound, n) in DURATION_BUCKETS.iter().zip(h.buckets) {
                    cumulative += n;
                    let le = number(*bound);
                    let _ = writeln!(
                        out,
                        "{name}_bucket{} {cumulative}",
                        labels_text(labels, Some(&le))
                    );
                }
                let _ = writeln!(
                    out,
                    "{name}_bucket{} {}",
                    labels_text(labels, Some("+Inf")),
                    h.count
                );
                let _ = writeln!(
                    out,
                    "{name}_sum{} {}",
                    labels_text(labels, None),
                    number(h.sum)
                );
                let _ = writeln!(out, "{name}_count{} {}", labels_text(labels, None), h.count);
            }
        }
        for (family, value) in gauges {
            header(&mut out, *family);
            let _ = writeln!(out, "{} {}", family.name, number(*value));
        }
        out
    }
}

fn header(out: &mut String, family: Family) {
    let kind = match family.kind {
        Kind::Counter => "counter",
        Kind::Gauge => "gauge",
        Kind::Histogram => "histogram",
    };
    let _ = writeln!(out, "# HELP {} {}", family.name, family.help);
    let _ = writeln!(out, "# TYPE {} {kind}", family.name);
}

/// `{a="x",b="y"}` (with `le` last for a bucket), or nothing without labels.
fn labels_text(labels: &Labels, le: Option<&str>) -> String {
    let mut parts: Vec<String> = labels
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
        .collect();
    if let Some(le) = le {
        parts.push(format!("le=\"{le}\""));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("{{{}}}", parts.join(","))
    }
}

/// A label value escaped as the format says: backslash, double quote, newline.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        format!("{value}")
    }
}

#[cfg(test)]
mod tests {
    use super::families::*;
    use super::*;

    #[test]
    fn counters_and_histograms_are_written_in_the_text_format() {
        let m = Metrics::default();
        m.add(
            TOOL_CALLS,
            vec![("tool", "shell_exec".into()), ("outcome", "ok".into())],
            1.0,
        );
        m.add(
            TOOL_CALLS,
            vec![("tool", "shell_exec".into()), ("outcome", "ok".into())],
            1.0,
        );
        m.add(
            TOOL_CALLS,
            vec![("tool", "a\"b".into()), ("outcome", "error".into())],
            1.0,
        );
        m.observe(TOOL_SECONDS, vec![("tool", "shell_exec".into())], 0.02);
        m.observe(TOOL_SECONDS, vec![("tool", "shell_exec".into())], 100.0);
        let text = m.text(&[(QUEUE_DEPTH, 3.0)]);
        assert!(text.contains("# TYPE planwright_tool_calls_total counter\n"));
        assert!(
            text.contains("planwright_tool_calls_total{tool=\"shell_exec\",outcome=\"ok\"} 2\n")
        );
        assert!(text.contains("planwright_tool_calls_total{tool=\"a\\\"b\",outcome=\"error\"} 1\n"));
        assert!(text.contains(
            "planwright_tool_call_duration_seconds_bucket{tool=\"shell_exec\",le=\"0.01\"} 0\n"
        ));
        assert!(text.contains(
            "planwright_tool_call_duration_seconds_bucket{tool=\"shell_exec\",le=\"0.025\"} 1\n"
        ));
        assert!(text.contains(
            "planwright_tool_call_duration_seconds_bucket{tool=\"shell_exec\",le=\"+Inf\"} 2\n"
        ));
        assert!(
            text.contains("planwright_tool_call_duration_seconds_count{tool=\"shell_exec\"} 2\n")
        );
        assert!(text.contains("planwright_queue_depth 3\n"));
    }
}
