//! What every whole-run test does: build a runtime over the shared fakes
//! (`crate::testing`), run a task to its outcome, then read the journal.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::engine::config::{Mode, RunConfig, SummaryStyle};
use crate::engine::runtime::RunOutcome;
use crate::model::event::{AdaptAction, Event, EventKind};
use crate::model::plan::StepStatus;
use crate::ports::llm::{ChatRequest, LlmClient, Role};
use crate::testing::runs::{request, runtime, RUN_ID};
use crate::testing::{EchoToolbox, MemoryStore};

/// A finished run: its outcome, the store it wrote to, the LLM it talked to, and how long
/// it took on tokio's clock.
pub(super) struct Run<L> {
    pub outcome: RunOutcome,
    pub store: Arc<MemoryStore>,
    pub llm: Arc<L>,
    pub elapsed: Duration,
}

impl<L> Run<L> {
    pub fn events(&self) -> Vec<Event> {
        self.store.events_of(RUN_ID)
    }
    pub fn names(&self) -> Vec<&'static str> {
        self.events().iter().map(|e| e.kind.name()).collect()
    }
    pub fn status(&self, description: &str) -> StepStatus {
        self.outcome
            .plan
            .steps()
            .iter()
            .find(|s| s.description == description)
            .map(|s| s.status())
            .unwrap_or_else(|| panic!("no step {description:?} in {:#?}", self.outcome.plan))
    }
    pub fn adapt_actions(&self) -> Vec<AdaptAction> {
        self.events()
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::StepAdapted { action, .. } => Some(*action),
                _ => None,
            })
            .collect()
    }
    pub fn errors(&self) -> Vec<String> {
        self.events()
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::Error { message, .. } => Some(message.clone()),
                _ => None,
            })
            .collect()
    }
}

/// Runs `task` with `llm` as planner and only agent, over `toolbox` and a fresh
/// [`MemoryStore`], until it has an outcome; checks its event log is gap-free.
pub(super) async fn run_task<L: LlmClient + 'static>(
    llm: L,
    toolbox: EchoToolbox,
    config: RunConfig,
    task: &str,
    cancel: CancellationToken,
) -> Run<L> {
    let llm = Arc::new(llm);
    let store = Arc::new(MemoryStore::new());
    let rt = runtime(llm.clone(), Arc::new(toolbox), store.clone(), config);
    let started = tokio::time::Instant::now();
    let outcome = rt
        .run(request(task), cancel)
        .await
        .expect("run ends with an outcome");
    let run = Run {
        outcome,
        store,
        llm,
        elapsed: started.elapsed(),
    };
    assert_gap_free(&run.events());
    run
}

/// The spine's behaviour: flow, an LLM-written summary, no retries, no re-plans, no waiting,
/// and a step may claim success at once (the scripts say `done` without acting; the claim
/// nudge has its own tests in `runtime::steps`).
pub(super) fn base_config() -> RunConfig {
    let mut config = RunConfig {
        mode: Mode::Flow,
        summary: SummaryStyle::Llm,
        retries: 0,
        retry_delay: Duration::ZERO,
        max_revisions: 0,
        ..RunConfig::default()
    };
    config.limits.nudges.claim_before_acting = false;
    config
}

/// [`base_config`] in `mode`.
pub(super) fn config(mode: Mode) -> RunConfig {
    RunConfig {
        mode,
        ..base_config()
    }
}

/// Events numbered 1, 2, 3... of run [`RUN_ID`].
pub(super) fn assert_gap_free(events: &[Event]) {
    for (i, e) in events.iter().enumerate() {
        assert_eq!(
            e.seq,
            i as u64 + 1,
            "event {i} ({}) has seq {}",
            e.kind.name(),
            e.seq
        );
        assert_eq!(e.run_id, RUN_ID);
    }
}

/// Every assistant tool call in every request is answered by a tool message right after it.
pub(super) fn assert_valid_transcripts(requests: &[ChatRequest]) {
    for req in requests {
        let msgs = &req.messages;
        for (i, m) in msgs.iter().enumerate() {
            if m.role == Role::Assistant && !m.tool_calls.is_empty() {
                let answers: Vec<_> = msgs[i + 1..]
                    .iter()
                    .take_while(|n| n.role == Role::Tool)
                    .filter_map(|n| n.tool_call_id.clone())
                    .collect();
                for call in &m.tool_calls {
                    assert!(
                        answers.contains(&call.id),
                        "tool call {} unanswered",
                        call.id
                    );
                }
            }
            if m.role == Role::Tool {
                assert!(i > 0, "a tool message cannot come first");
            }
        }
    }
}
