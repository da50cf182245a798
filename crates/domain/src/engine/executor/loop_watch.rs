//! Spots a step's loop going round in circles: the same call three times, the same output
//! of a tool three times, the same answer twice, a tool failing twice in a row
//! (docs/design.md, "The tool router").

use std::collections::{HashMap, HashSet};

use serde_json::Value;

/// Watches a step's loop for repetition and failing tools (docs/design.md, "The tool router").
#[derive(Debug, Default)]
pub(super) struct LoopWatch {
    /// (tool, arguments) → times called in this attempt.
    calls: HashMap<(String, String), u32>,
    /// (tool, output) → times returned in this attempt: a small model re-reads a file with
    /// other line numbers and gets the same text each time.
    outputs: HashMap<(String, String), u32>,
    texts: HashSet<String>,
    /// tool → failures in a row.
    failures_in_a_row: HashMap<String, u32>,
    pub(super) nudged: bool,
    /// The tool of the last repeat spotted.
    pub(super) looping: Option<String>,
}

impl LoopWatch {
    /// Records a call; returns a description when the same call was made 3 times.
    pub(super) fn call(&mut self, name: &str, arguments: &str) -> Option<String> {
        let normalized = serde_json::from_str::<Value>(arguments)
            .map(|v| v.to_string())
            .unwrap_or_else(|_| arguments.trim().to_string());
        let n = self
            .calls
            .entry((name.to_string(), normalized))
            .or_insert(0);
        *n += 1;
        let n = *n;
        (n >= 3).then(|| {
            self.looping = Some(name.to_string());
            format!("`{name}` was called {n} times with the same arguments")
        })
    }

    /// Records a tool's output; returns a description when the tool returned the same
    /// output 3 times (whatever the arguments).
    pub(super) fn output(&mut self, name: &str, output: &str) -> Option<String> {
        let n = self
            .outputs
            .entry((name.to_string(), output.trim().to_string()))
            .or_insert(0);
        *n += 1;
        let n = *n;
        (n == 3).then(|| {
            self.looping = Some(name.to_string());
            format!("`{name}` returned the same output {n} times")
        })
    }

    /// Records assistant text; returns a description when the same text came twice.
    pub(super) fn text(&mut self, text: &str) -> Option<String> {
        let t = text.trim();
        if t.is_empty() {
            return None;
        }
        (!self.texts.insert(t.to_string())).then(|| "the same answer was given twice".to_string())
    }

    /// Records a tool outcome; returns the tool's name when it just failed twice in a row.
    pub(super) fn outcome(&mut self, name: &str, ok: bool) -> Option<String> {
        let n = self.failures_in_a_row.entry(name.to_string()).or_insert(0);
        if ok {
            *n = 0;
            return None;
        }
        *n += 1;
        (*n == 2).then(|| name.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loop_watch_spots_repeats_and_failing_tools() {
        let mut w = LoopWatch::default();
        assert_eq!(w.call("shell_exec", r#"{"command":"ls"}"#), None);
        assert_eq!(w.call("shell_exec", r#"{ "command": "ls" }"#), None);
        assert!(w.call("shell_exec", r#"{"command":"ls"}"#).is_some());
        assert_eq!(w.output("file_read", "4\n"), None);
        assert_eq!(w.output("file_read", "4"), None);
        assert_eq!(w.output("file_read", "5"), None);
        assert!(
            w.output("file_read", "4").is_some(),
            "the same text 3 times"
        );
        assert_eq!(w.output("file_read", "4"), None, "said once");
        assert_eq!(w.text("thinking"), None);
        assert!(w.text(" thinking ").is_some());
        assert_eq!(w.outcome("file_read", false), None);
        assert_eq!(w.outcome("file_read", false).as_deref(), Some("file_read"));
        assert_eq!(
            w.outcome("file_read", false),
            None,
            "hinted once per streak"
        );
        assert_eq!(w.outcome("file_read", true), None);
        assert_eq!(w.outcome("file_read", false), None);
        assert_eq!(w.outcome("file_read", false).as_deref(), Some("file_read"));
    }
}
