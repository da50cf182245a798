//! What one `planwright run --json` left behind: the outcome object on stdout and the run's
//! events (`planwright runs events RUN_ID --json`), read leniently — fields may be missing
//! (a killed run has no outcome) or new (`cached_prompt_tokens`).

use serde_json::Value;

/// Calls and tokens of one run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Usage {
    pub llm_calls: u64,
    pub prompt_tokens: u64,
    /// `None` when neither the outcome nor the events report it.
    pub cached_prompt_tokens: Option<u64>,
    pub completion_tokens: u64,
}

/// Everything the harness observed of one run.
#[derive(Debug, Clone, Default)]
pub(crate) struct Observed {
    /// Killed at the time limit.
    pub killed: bool,
    pub exit_code: Option<i32>,
    /// The `--json` object, when stdout held one.
    pub outcome: Option<Value>,
    /// The run's events, oldest first.
    pub events: Vec<Value>,
    /// The end of stderr, for runs that never produced an outcome.
    pub stderr_tail: String,
}

impl Observed {
    /// `completed`, `failed`, or `killed` / `no outcome` when there is no outcome.
    pub(crate) fn status(&self) -> String {
        if self.killed {
            return "killed".to_string();
        }
        self.outcome
            .as_ref()
            .and_then(|o| o["status"].as_str())
            .map_or_else(|| "no outcome".to_string(), str::to_string)
    }

    /// The outcome's `"verified"` flag (false when absent: a binary from before it, or a
    /// killed run).
    pub(crate) fn verified(&self) -> bool {
        self.outcome
            .as_ref()
            .and_then(|o| o["verified"].as_bool())
            .unwrap_or(false)
    }

    pub(crate) fn events_of<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
        self.events.iter().filter(move |e| e["type"] == kind)
    }

    /// Seconds spent in LLM calls (the `duration_ms` of every `llm_called` event).
    pub(crate) fn llm_secs(&self) -> f64 {
        self.events_of("llm_called")
            .filter_map(|e| e["duration_ms"].as_u64())
            .sum::<u64>() as f64
            / 1000.0
    }

    /// From the outcome, else from the final event, else summed over `llm_called` events.
    pub(crate) fn usage(&self) -> Usage {
        let final_usage = self
            .events
            .iter()
            .rev()
            .find(|e| e["type"] == "run_completed" || e["type"] == "run_failed")
            .map(|e| &e["usage"]);
        let from_object = |u: &Value| Usage {
            llm_calls: u["llm_calls"].as_u64().unwrap_or(0),
            prompt_tokens: u["prompt_tokens"].as_u64().unwrap_or(0),
            cached_prompt_tokens: u["cached_prompt_tokens"].as_u64(),
            completion_tokens: u["completion_tokens"].as_u64().unwrap_or(0),
        };
        let mut usage = match (self.outcome.as_ref().map(|o| &o["usage"]), final_usage) {
            (Some(u), _) if u.is_object() => from_object(u),
            (_, Some(u)) if u.is_object() => from_object(u),
            _ => {
                let mut sum = Usage::default();
                for e in self.events_of("llm_called") {
                    sum.llm_calls += 1;
                    sum.prompt_tokens += e["prompt_tokens"].as_u64().unwrap_or(0);
                    sum.completion_tokens += e["completion_tokens"].as_u64().unwrap_or(0);
                    if let Some(c) = e["cached_prompt_tokens"].as_u64() {
                        *sum.cached_prompt_tokens.get_or_insert(0) += c;
                    }
                }
                sum
            }
        };
        if usage.cached_prompt_tokens.is_none() {
            usage.cached_prompt_tokens =
                final_usage.and_then(|u| u["cached_prompt_tokens"].as_u64());
        }
        usage
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn usage_comes_from_the_outcome_and_reads_cached_tokens_leniently() {
        let obs = Observed {
            outcome: Some(json!({"status": "completed", "usage": {
                "llm_calls": 4, "prompt_tokens": 900, "completion_tokens": 80}})),
            events: vec![json!({"type": "run_completed",
                "usage": {"llm_calls": 4, "prompt_tokens": 900, "completion_tokens": 80,
                          "cached_prompt_tokens": 600}})],
            ..Observed::default()
        };
        assert_eq!(
            obs.usage(),
            Usage {
                llm_calls: 4,
                prompt_tokens: 900,
                cached_prompt_tokens: Some(600),
                completion_tokens: 80
            }
        );
        assert_eq!(obs.status(), "completed");
        assert!(!obs.verified(), "absent is false");
        let checked = Observed {
            outcome: Some(json!({"status": "completed", "verified": true})),
            ..Observed::default()
        };
        assert!(checked.verified());
        let without = Observed {
            outcome: obs.outcome.clone(),
            ..Observed::default()
        };
        assert_eq!(without.usage().cached_prompt_tokens, None);
    }

    #[test]
    fn a_killed_run_sums_its_llm_calls() {
        let obs = Observed {
            killed: true,
            events: vec![
                json!({"type": "llm_called", "ok": true, "prompt_tokens": 100, "completion_tokens": 10}),
                json!({"type": "tool_called", "ok": true}),
                json!({"type": "llm_called", "ok": true, "prompt_tokens": 150, "completion_tokens": 5}),
            ],
            ..Observed::default()
        };
        let u = obs.usage();
        assert_eq!(
            (u.llm_calls, u.prompt_tokens, u.completion_tokens),
            (2, 250, 15)
        );
        assert_eq!(u.cached_prompt_tokens, None);
        assert_eq!(obs.status(), "killed");
        assert_eq!(obs.llm_secs(), 0.0);
        let timed = Observed {
            events: vec![
                json!({"type": "llm_called", "duration_ms": 1500}),
                json!({"type": "llm_called", "duration_ms": 500}),
            ],
            ..Observed::default()
        };
        assert_eq!(timed.llm_secs(), 2.0);
    }
}
