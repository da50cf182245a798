//! A failed run's transcript, from its events (`planwright runs events RUN_ID --json`):
//! the plan, each step, every tool call with its arguments and output, messages, questions
//! and answers, errors, and how the run ended; long texts trimmed. Events of a kind this
//! file does not know (added after it) are shown by their type and their text fields, so a
//! new kind of action still shows up.

use serde_json::Value;

/// Lines of a tool's output or a program kept.
const MAX_LINES: usize = 12;
/// Characters of one text kept.
const MAX_CHARS: usize = 700;

/// Events left out: bookkeeping that says nothing about what the run did.
const QUIET: &[&str] = &[
    "llm_called",
    "checkpoint_taken",
    "inputs_recorded",
    "tool_calling",
    "run_started",
];

/// `text` cut to `MAX_LINES` lines and `MAX_CHARS` characters, each line indented.
fn trimmed(text: &str, indent: &str) -> String {
    let mut out = String::new();
    let mut chars = 0;
    let all: Vec<&str> = text.trim_end().lines().collect();
    for (i, line) in all.iter().enumerate() {
        if i == MAX_LINES || chars > MAX_CHARS {
            out.push_str(&format!("{indent}… ({} more lines)\n", all.len() - i));
            break;
        }
        let line: String = line
            .chars()
            .take(MAX_CHARS - chars.min(MAX_CHARS))
            .collect();
        chars += line.chars().count();
        out.push_str(&format!("{indent}{line}\n"));
    }
    out
}

fn str_of<'a>(e: &'a Value, key: &str) -> &'a str {
    e[key].as_str().unwrap_or("")
}

/// The transcript of a run's `events`, oldest first.
pub(crate) fn of(events: &[Value]) -> String {
    let mut s = String::new();
    // Arguments of each call, from its `tool_calling`, shown with its `tool_called`.
    let arguments = |call_id: &str| {
        events
            .iter()
            .find(|e| e["type"] == "tool_calling" && e["call_id"] == call_id)
            .map(|e| str_of(e, "arguments").to_string())
            .unwrap_or_default()
    };
    for e in events {
        let kind = str_of(e, "type");
        match kind {
            k if QUIET.contains(&k) => {}
            "mode_chosen" => s.push_str(&format!(
                "mode {} ({})\n",
                str_of(e, "mode"),
                str_of(e, "reason")
            )),
            "plan_created" | "plan_updated" => {
                s.push_str(&format!("{}:\n", kind.replace('_', " ")));
                for step in e["plan"]["steps"].as_array().into_iter().flatten() {
                    s.push_str(&format!(
                        "  {}: {}\n",
                        str_of(step, "id"),
                        str_of(step, "description")
                    ));
                }
            }
            "step_started" => s.push_str(&format!(
                "step {} (attempt {}): {}\n",
                str_of(e, "step_id"),
                e["attempt"].as_u64().unwrap_or(1),
                str_of(e, "description")
            )),
            "tool_called" => {
                let ok = if e["ok"] == true { "ok" } else { "FAILED" };
                s.push_str(&format!("  → {} {ok}\n", str_of(e, "tool")));
                let args = arguments(str_of(e, "call_id"));
                if !args.is_empty() {
                    s.push_str(&trimmed(&args, "      in: "));
                }
                s.push_str(&trimmed(str_of(e, "output"), "      out: "));
            }
            "message" | "user_notified" => {
                s.push_str(&trimmed(str_of(e, "text"), "  says: "));
            }
            "waiting_for_user" => s.push_str(&format!("  asks: {}\n", str_of(e, "question"))),
            "user_replied" => s.push_str(&format!(
                "  user: {}\n",
                e["answer"].as_str().or(e["error"].as_str()).unwrap_or("")
            )),
            "nudge" => s.push_str(&format!("  nudged: {}\n", str_of(e, "reason"))),
            "error" => s.push_str(&format!("  error: {}\n", str_of(e, "message"))),
            "input_protected" => s.push_str(&format!(
                "  input protected: {} {} by {}\n",
                e["action"],
                str_of(e, "path"),
                str_of(e, "tool")
            )),
            "step_verified" => s.push_str(&format!(
                "  verified {}: {}\n",
                if e["ok"] == true { "ok" } else { "NOT ok" },
                str_of(e, "reason")
            )),
            "step_completed" => s.push_str(&trimmed(
                str_of(e, "result"),
                &format!("step {} completed: ", str_of(e, "step_id")),
            )),
            "step_failed" => s.push_str(&format!(
                "step {} {}: {}\n",
                str_of(e, "step_id"),
                e["status"].as_str().unwrap_or("failed"),
                str_of(e, "error")
            )),
            "run_completed" => s.push_str(&trimmed(str_of(e, "summary"), "run completed: ")),
            "run_failed" => s.push_str(&format!(
                "run failed: {}\n{}",
                str_of(e, "reason"),
                trimmed(str_of(e, "summary"), "  ")
            )),
            other => {
                // A kind added after this file: its text fields.
                let mut fields = Vec::new();
                if let Some(map) = e.as_object() {
                    for (k, v) in map {
                        if let Some(t) = v.as_str() {
                            if !["type", "run_id", "at", "step_id", "journal_key"]
                                .contains(&k.as_str())
                            {
                                fields.push(format!("{k}: {t}"));
                            }
                        }
                    }
                }
                s.push_str(&format!("  {other}\n"));
                for f in fields {
                    s.push_str(&trimmed(&f, "      "));
                }
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_transcript_shows_calls_with_their_arguments_and_trims_long_output() {
        let long: String = (1..=40).map(|i| format!("line {i}\n")).collect();
        let events = vec![
            json!({"type": "run_started", "task": "t"}),
            json!({"type": "plan_created", "plan": {"steps": [{"id": "s1", "description": "count"}]}}),
            json!({"type": "step_started", "step_id": "s1", "attempt": 1, "description": "count"}),
            json!({"type": "tool_calling", "call_id": "c1", "tool": "shell_exec", "arguments": "{\"command\":\"wc -l a.txt\"}"}),
            json!({"type": "tool_called", "call_id": "c1", "tool": "shell_exec", "ok": true, "output": long}),
            json!({"type": "waiting_for_user", "step_id": "s1", "question": "Which city?"}),
            json!({"type": "user_replied", "step_id": "s1", "answer": "Oslo"}),
            json!({"type": "code_ran", "step_id": "s1", "code": "print(1)", "exit_code": 0}),
            json!({"type": "step_failed", "step_id": "s1", "status": "failed", "error": "turn limit"}),
            json!({"type": "run_failed", "reason": "step s1 failed", "summary": "nothing done"}),
        ];
        let t = of(&events);
        assert!(t.contains("plan created:\n  s1: count"), "{t}");
        assert!(
            t.contains("→ shell_exec ok\n      in: {\"command\":\"wc -l a.txt\"}"),
            "{t}"
        );
        assert!(
            t.contains("      out: line 12\n      out: … (28 more lines)"),
            "{t}"
        );
        assert!(!t.contains("line 13"), "{t}");
        assert!(t.contains("asks: Which city?\n  user: Oslo"), "{t}");
        assert!(t.contains("code_ran\n      code: print(1)"), "{t}");
        assert!(t.contains("step s1 failed: turn limit"), "{t}");
        assert!(t.contains("run failed: step s1 failed"), "{t}");
        assert!(!t.contains("run_started"), "{t}");
    }
}
