//! The run journal, read back from the event log when a run is resumed.
//!
//! Journal before effect: `tool_calling` is written before a tool runs and `tool_called`
//! after; `llm_called` carries the response under a stable key. On resume a finished call is
//! never made again: its recorded response or output is served instead. A tool call that
//! started but did not finish is re-run only if the tool is idempotent; otherwise the model is
//! told that its outcome is unknown.

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

use crate::model::approval::{record_writes, ApprovalDecision, WrittenFiles};
use crate::model::event::{Event, EventKind};
use crate::model::observations::RunFacts;
use crate::model::verification::Checks;
use crate::model::verification::{CheckVerdict, Verification};
use crate::model::workspace_view::WorkspaceView;
use crate::ports::checkpoints::CheckpointLog;
use crate::ports::llm::{fnv1a, ChatRequest, ChatResponse};

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
    /// Approval decisions by the journal key of their tool call.
    approvals: HashMap<String, ApprovalDecision>,
    /// Tools approved for the rest of the run.
    always_approved: HashSet<String>,
    /// What each step really did (answers, files, outputs).
    facts: RunFacts,
    /// The tool calls the approval gate let through (`tool_calling`), in order: tool and
    /// arguments as the model wrote them.
    let_through: Vec<(String, String)>,
    /// The workspace checkpoints already taken (docs/checkpoints.md).
    checkpoints: CheckpointLog,
    /// What the checks of the run's answer found (docs/verification.md).
    checks: Checks,
    /// What each (step, attempt) was shown of the workspace.
    views: HashMap<(String, u32), WorkspaceView>,
}

/// A stable fingerprint of what was asked (the purpose is metadata and left out):
/// `fnv1a:` and the 64-bit FNV-1a hash of the JSON of the messages, tools, tool choice and
/// response format, each followed by a 0 byte ([`fnv1a`], written out in the domain so it
/// stays the same across toolchains).
pub(crate) fn request_hash(request: &ChatRequest) -> String {
    let parts = request_parts(request);
    let h = fnv1a(
        parts
            .iter()
            .flat_map(|part| part.bytes().chain(std::iter::once(0))),
    );
    format!("{HASH_PREFIX}{h:016x}")
}

const HASH_PREFIX: &str = "fnv1a:";

fn request_parts(request: &ChatRequest) -> [String; 4] {
    [
        serde_json::to_string(&request.messages).unwrap_or_default(),
        serde_json::to_string(&request.tools).unwrap_or_default(),
        serde_json::to_string(&request.tool_choice).unwrap_or_default(),
        serde_json::to_string(&request.response_format).unwrap_or_default(),
    ]
}

/// The fingerprint runs recorded before `fnv1a:` carry (std's `DefaultHasher`, 16 hex
/// digits): still recognised, so those runs stay resumable on the toolchain that wrote them.
fn legacy_request_hash(request: &ChatRequest) -> String {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for part in request_parts(request) {
        part.hash(&mut h);
    }
    format!("{:016x}", h.finish())
}

/// Whether `recorded` (from a journal) fingerprints `request`.
pub(crate) fn same_request(recorded: &str, request: &ChatRequest) -> bool {
    if recorded.starts_with(HASH_PREFIX) {
        recorded == request_hash(request)
    } else {
        recorded == legacy_request_hash(request)
    }
}

impl Journal {
    pub fn from_events(events: &[Event]) -> Journal {
        let mut j = Journal {
            facts: RunFacts::from_events(events),
            checkpoints: CheckpointLog::from_events(events),
            ..Journal::default()
        };
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
                    journal_key,
                    tool,
                    arguments,
                    ..
                } => {
                    if let Some(key) = journal_key {
                        j.tools
                            .entry(key.clone())
                            .or_insert_with(|| (tool.clone(), ToolEntry::Started));
                    }
                    j.let_through.push((tool.clone(), arguments.clone()));
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
                EventKind::WorkspaceShown {
                    step_id,
                    attempt,
                    view,
                } => {
                    j.views.insert((step_id.clone(), *attempt), view.clone());
                }
                EventKind::AnswerChecked {
                    verdict, detail, ..
                } => {
                    j.checks.last = Some(Verification {
                        verified: *verdict == CheckVerdict::Agree,
                        detail: detail.clone(),
                    });
                    j.checks.retried |= *verdict == CheckVerdict::Disagree;
                }
                EventKind::ApprovalDecided {
                    journal_key: Some(key),
                    tool,
                    decision,
                    ..
                } => {
                    j.approvals.insert(key.clone(), *decision);
                    if *decision == ApprovalDecision::Always {
                        j.always_approved.insert(tool.clone());
                    }
                }
                _ => {}
            }
        }
        j
    }

    /// The recorded response of call `key`, if the same request was made.
    /// The recorded response of call `key`, when it answered this very `request`.
    pub fn llm(&self, key: &str, request: &ChatRequest) -> Option<ChatResponse> {
        self.llm
            .get(key)
            .filter(|(h, _)| same_request(h, request))
            .map(|(_, r)| r.clone())
    }

    /// What attempt `attempt` of step `step_id` was shown of the workspace.
    pub fn view(&self, step_id: &str, attempt: u32) -> Option<&WorkspaceView> {
        self.views.get(&(step_id.to_string(), attempt))
    }

    pub fn tool(&self, key: &str) -> Option<&ToolEntry> {
        self.tools.get(key).map(|(_, e)| e)
    }

    pub fn answer(&self, key: &str) -> Option<&str> {
        self.answers.get(key).map(String::as_str)
    }

    /// The decision recorded on the tool call of journal key `key`.
    pub fn approval(&self, key: &str) -> Option<ApprovalDecision> {
        self.approvals.get(key).copied()
    }

    /// What each step did before the run stopped.
    pub fn checkpoints(&self) -> &CheckpointLog {
        &self.checkpoints
    }

    pub fn facts(&self) -> &RunFacts {
        &self.facts
    }

    /// What the checks of the run's answer found before the run stopped.
    pub fn checks(&self) -> &Checks {
        &self.checks
    }

    /// Tools a person approved for the rest of the run.
    pub fn always_approved(&self) -> &HashSet<String> {
        &self.always_approved
    }

    /// What the run wrote before it stopped, as the approval gate had recorded it (docs/
    /// approvals.md, "Scripts"): rebuilt from the calls it let through, so a script the run
    /// wrote is still judged by its content after a crash. `workspace` (absolute) makes
    /// paths workspace-relative.
    pub fn written_files(&self, workspace: Option<&str>) -> WrittenFiles {
        let mut written = WrittenFiles::default();
        for (tool, arguments) in &self.let_through {
            let args = if arguments.trim().is_empty() {
                serde_json::Value::Object(Default::default())
            } else {
                match serde_json::from_str(arguments) {
                    Ok(v @ serde_json::Value::Object(_)) => v,
                    // Arguments that are not an object never reached a tool.
                    _ => continue,
                }
            };
            record_writes(tool, &args, workspace, &mut written);
        }
        written
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::llm::{CallPurpose, ChatMessage};

    fn request(text: &str) -> ChatRequest {
        ChatRequest::new(
            CallPurpose::Execute,
            vec![ChatMessage::system("s"), ChatMessage::user(text)],
        )
    }

    /// The fingerprint's definition is fixed: this value must never change, or every
    /// journaled run would stop being recognised on resume.
    #[test]
    fn the_request_hash_is_pinned() {
        assert_eq!(request_hash(&request("hello")), PINNED_HELLO);
        assert_ne!(request_hash(&request("hello!")), PINNED_HELLO);
    }

    const PINNED_HELLO: &str = "fnv1a:358221b3798ec170";

    /// A run journaled before the `fnv1a:` fingerprint (std's hasher, bare hex) is still
    /// served from its journal; a different request under the same key is not.
    #[test]
    fn runs_recorded_with_the_old_fingerprint_are_still_recognised() {
        let asked = request("hello");
        let legacy = legacy_request_hash(&asked);
        assert!(!legacy.starts_with(HASH_PREFIX));
        let mut journal = Journal::default();
        journal
            .llm
            .insert("exec:s1:1#1".into(), (legacy, ChatResponse::default()));
        assert!(journal.llm("exec:s1:1#1", &asked).is_some());
        assert!(journal.llm("exec:s1:1#1", &request("other")).is_none());
        let mut journal = Journal::default();
        journal.llm.insert(
            "exec:s1:1#1".into(),
            (request_hash(&asked), ChatResponse::default()),
        );
        assert!(journal.llm("exec:s1:1#1", &asked).is_some());
        assert!(journal.llm("exec:s1:1#1", &request("other")).is_none());
    }
}
