//! The auto style: a short task that is not a list goes direct by its shape, in any
//! language; the LLM classifies the others, and the sequential style is the fallback.

use serde_json::json;

use super::{flow_plan, run};
use crate::ports::RunStatus;
use crate::testing::replies::{json_reply, text};
use crate::testing::RoutedLlm;
use crate::tests::support::{config, Run};
use crate::{EventKind, Mode};

fn chosen(r: &Run<RoutedLlm>) -> (String, String) {
    r.events()
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::ModeChosen { mode, by, .. } => Some((mode.clone(), by.clone())),
            _ => None,
        })
        .expect("mode_chosen event")
}

#[tokio::test(start_paused = true)]
async fn auto_uses_rules_for_clear_tasks() {
    // A small job goes direct: no planner call, the task is the one step.
    let r = run(
        RoutedLlm::new(),
        config(Mode::Auto),
        "Write hello.txt containing hi",
    )
    .await;
    assert_eq!(chosen(&r), ("direct".to_string(), "rules".to_string()));
    assert_eq!(r.outcome.status, RunStatus::Completed);
    assert_eq!(r.outcome.plan.steps().len(), 1);
    let r = run(
        RoutedLlm::new(),
        config(Mode::Auto),
        "Écris bonjour dans salut.txt",
    )
    .await;
    assert_eq!(chosen(&r), ("direct".to_string(), "rules".to_string()));
}

#[tokio::test(start_paused = true)]
async fn auto_asks_the_llm_when_the_rules_are_unsure() {
    let llm = RoutedLlm::new().plans(vec![
        json_reply(json!({"class": "emergent", "reason": "open-ended"})),
        json_reply(json!({"todos": [{"description": "look around"}]})),
        json_reply(json!({"needs_update": false})),
    ]);
    let r = run(
        llm,
        config(Mode::Auto),
        "Look into the build:\n- why it is slow\n- what changed\n- what to try",
    )
    .await;
    assert_eq!(chosen(&r), ("todo".to_string(), "llm".to_string()));
    assert_eq!(r.outcome.plan.steps()[0].description, "look around");
}

#[tokio::test(start_paused = true)]
async fn auto_falls_back_to_sequential_when_the_classifier_fails() {
    let llm = RoutedLlm::new().plans(vec![
        text("dunno"),
        text("still dunno"),
        flow_plan(&["read the logs", "compare the servers"]),
    ]);
    let r = run(
        llm,
        config(Mode::Auto),
        "Steps:\n1. read the logs\n2. compare both servers\n3. report",
    )
    .await;
    assert_eq!(chosen(&r), ("flow".to_string(), "fallback".to_string()));
    assert_eq!(r.outcome.status, RunStatus::Completed);
}
