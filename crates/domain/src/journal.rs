//! The run journal, read back from the event log when a run is resumed.
//!
//! Journal before effect: `tool_calling` is written before a tool runs and `tool_called`
//! after; `llm_called` carries the response under a stable key. On resume a finished call is
//! never made again: its recorded response or output is served instead. A tool call that
//! started but did not finish is re-run only if the tool is idempotent; otherwise the model is
//! told that its outcome is unknown.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use crate::event::{Event, EventKind};
use crate::llm::{ChatRequest, ChatResponse};

/// What the log says about one tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ToolEntry {
    /// `tool_calling` was written, `tool_called` was not: the outcome is unknown.
    Started,
    Finished {
        ok: bool,
        output: String,
    },
}

#[derive(Debug, Default)]
pub(crate) struct Journal {
    /// LLM call key → (request hash, response).
    llm: HashMap<String, (String, ChatResponse)>,
    tools: HashMap<String, (String, ToolEntry)>,
    /// `message_ask_user` answers by journal key.
    answers: HashMap<String, String>,
}

/// A stable fingerprint of what was asked (the purpose is metadata and left out).
pub(crate) fn request_hash(request: &ChatRequest) -> String {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    serde_json::to_string(&request.messages)
        .unwrap_or_default()
        .hash(&mut h);
    serde_json::to_string(&request.tools)
        .unwrap_or_default()
        .hash(&mut h);
    serde_json::to_string(&request.tool_choice)
        .unwrap_or_default()
        .hash(&mut h);
    serde_json::to_string(&request.response_format)
        .unwrap_or_default()
        .hash(&mut h);
    format!("{:016x}", h.finish())
}

impl Journal {
    pub fn from_events(events: &[Event]) -> Journal {
        let mut j = Journal::default();
        for e in events {
            match &e.kind {
                EventKind::LlmCalled {
                    key: Some(key),
                    request_hash: Some(hash),
                    response: Some(response),
                    ok: true,
                    ..
                } => {
                    j.llm.insert(key.clone(), (hash.clone(), response.clone()));
                }
                EventKind::ToolCalling {
                    journal_key: Some(key),
                    tool,
                    ..
                } => {
                    j.tools
                        .entry(key.clone())
                        .or_insert_with(|| (tool.clone(), ToolEntry::Started));
                }
                EventKind::ToolCalled {
                    journal_key: Some(key),
                    tool,
                    ok,
                    output,
                    ..
                } => {
                    j.tools.insert(
                        key.clone(),
                        (
                            tool.clone(),
                            ToolEntry::Finished {
                                ok: *ok,
                                output: output.clone(),
                            },
                        ),
                    );
                }
                EventKind::UserReplied {
                    journal_key: Some(key),
                    answer: Some(answer),
                    ..
                } => {
                    j.answers.insert(key.clone(), answer.clone());
                }
                _ => {}
            }
        }
        j
    }

    /// The recorded response of call `key`, if the same request was made.
    pub fn llm(&self, key: &str, hash: &str) -> Option<ChatResponse> {
        self.llm
            .get(key)
            .filter(|(h, _)| h == hash)
            .map(|(_, r)| r.clone())
    }

    pub fn tool(&self, key: &str) -> Option<&ToolEntry> {
        self.tools.get(key).map(|(_, e)| e)
    }

    pub fn answer(&self, key: &str) -> Option<&str> {
        self.answers.get(key).map(String::as_str)
    }

    /// Tool calls that started and never finished, as `tool (key)`.
    pub fn interrupted(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .tools
            .iter()
            .filter(|(_, (_, e))| *e == ToolEntry::Started)
            .map(|(k, (tool, _))| format!("{tool} ({k})"))
            .collect();
        v.sort();
        v
    }
}
