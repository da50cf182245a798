//! The auto style: rules pick a style for clear tasks, the LLM for unclear ones, and the
//! complex style is the fallback.

use serde_json::json;

use super::dag::dag;
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
    // A listed, sequential task gets a flow plan.
    let llm = RoutedLlm::new().plans(vec![flow_plan(&["write it", "check it"])]);
    let r = run(
        llm,
        config(Mode::Auto),
        "Do this:\n- write hello.txt\n- check it",
    )
    .await;
    assert_eq!(chosen(&r), ("flow".to_string(), "rules".to_string()));
    assert_eq!(r.outcome.status, RunStatus::Completed);
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
        "Investigate why the build is slow, then compare it with last week",
    )
    .await;
    assert_eq!(chosen(&r), ("todo".to_string(), "llm".to_string()));
    assert_eq!(r.outcome.plan.steps()[0].description, "look around");
}

#[tokio::test(start_paused = true)]
async fn auto_falls_back_to_complex_when_the_classifier_fails() {
    let llm = RoutedLlm::new().plans(vec![
        text("dunno"),
        text("still dunno"),
        dag(json!([{"id": "a", "description": "a"}])),
    ]);
    let r = run(
        llm,
        config(Mode::Auto),
        "Investigate the logs, then compare both servers",
    )
    .await;
    assert_eq!(chosen(&r), ("dag".to_string(), "fallback".to_string()));
    assert_eq!(r.outcome.status, RunStatus::Completed);
}
