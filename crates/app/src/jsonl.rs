//! `--output jsonl`: every event of the run as one JSON line on stdout as it happens, the
//! same JSON the store keeps and `runs events --json` and the SSE stream send. Part of the
//! CLI's output layer, beside `view` (which goes on writing its account on stderr).

use std::io::Write;
use std::sync::Arc;

use domain::model::event::Event;
use domain::ports::EventSink;

/// Writes each event as a JSON line on stdout, then hands it to `then` (the live view).
pub struct JsonLines {
    then: Arc<dyn EventSink>,
}

impl JsonLines {
    pub fn new(then: Arc<dyn EventSink>) -> JsonLines {
        JsonLines { then }
    }
}

/// One event as its line (newline included).
pub fn line(event: &Event) -> String {
    match serde_json::to_string(event) {
        Ok(json) => format!("{json}\n"),
        // An event is plain data; if it ever fails to serialize, the line still parses.
        Err(e) => format!(
            "{}\n",
            serde_json::json!({"run_id": event.run_id, "seq": event.seq, "type": "error",
                               "message": format!("event not serializable: {e}")})
        ),
    }
}

impl EventSink for JsonLines {
    fn publish(&self, event: &Event) {
        {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(line(event).as_bytes());
            let _ = out.flush();
        }
        self.then.publish(event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::model::event::EventKind;

    #[test]
    fn a_line_is_the_event_json_and_ends_the_line() {
        let event = Event {
            run_id: "run_1".into(),
            seq: 3,
            at: chrono::Utc::now(),
            kind: EventKind::RunStarted {
                task: "t\nwith a newline".into(),
                mode: "flow".into(),
                workspace: "/w".into(),
            },
        };
        let text = line(&event);
        assert!(text.ends_with('\n'));
        assert_eq!(text.matches('\n').count(), 1, "{text}");
        let back: Event = serde_json::from_str(text.trim_end()).expect("parses");
        assert_eq!(back, event);
    }
}
