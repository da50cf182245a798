//! Planning: the plan a run starts from (the model's, a corrected one, the default plan), a
//! whole run from plan to summary, and steps routed to agents by kind tag.

use std::sync::Arc;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::run;
use crate::model::event::{EventKind, PlanSource};
use crate::model::plan::StepStatus;
use crate::ports::llm::{CallPurpose, LlmError, Role};
use crate::ports::RunStatus;
use crate::testing::replies::{acted, calls, create_plan, done, raw_calls, text};
use crate::testing::runs::{agent, request, runtime, RUN_ID};
use crate::testing::{EchoToolbox, MemoryStore, ScriptedLlm};
use crate::tests::support::{assert_gap_free, assert_valid_transcripts, base_config};

#[tokio::test]
async fn happy_path_plans_executes_every_step_and_summarizes() {
    let h = run(vec![
        create_plan(&["Write hello.txt", "Check hello.txt"]),
        calls(&[("shell_exec", json!({"command": "echo hi > hello.txt"}))]),
        done("wrote hello.txt"),
        calls(&[("shell_exec", json!({"command": "cat hello.txt"}))]),
        done("it says hi"),
        text("All done: hello.txt says hi."),
    ])
    .await;
    assert_eq!(h.outcome.status, RunStatus::Completed);
    assert_eq!(h.outcome.error, None);
    assert_eq!(
        h.outcome.summary,
        "Completed: 2 of 2 steps done.\n\nAll done: hello.txt says hi.\n\nNot verified: the \
         runtime has no workspace to check the answer in. Check the result yourself."
    );
    let steps = &h.outcome.plan.steps();
    assert_eq!(steps.len(), 2);
    assert!(steps.iter().all(|s| s.status() == StepStatus::Completed));
    assert_eq!(steps[0].result.as_deref(), Some("wrote hello.txt"));
    assert_eq!(steps[1].result.as_deref(), Some("it says hi"));
    assert_eq!(h.outcome.usage.llm_calls, 6);
    assert_eq!(h.outcome.usage.prompt_tokens, 60);
    assert_eq!(h.outcome.usage.completion_tokens, 30);
    let names: Vec<_> = h
        .names()
        .into_iter()
        .filter(|n| *n != "llm_called")
        .collect();
    assert_eq!(
        names,
        vec![
            "run_started",
            "plan_created",
            "step_started",
            "tool_calling",
            "tool_called",
            "step_completed",
            "step_started",
            "tool_calling",
            "tool_called",
            "step_completed",
            "run_completed"
        ]
    );
    assert_gap_free(&h.events());
    assert_valid_transcripts(&h.llm.requests());
    // Step 2's prompt carries step 1's result; the summary sees both results.
    let reqs = h.llm.requests();
    let step2_prompt = reqs[3].messages[1].content.clone().unwrap_or_default();
    assert!(step2_prompt.contains("wrote hello.txt"), "{step2_prompt}");
    let summary_prompt = reqs[5].messages[1].content.clone().unwrap_or_default();
    assert_eq!(reqs[5].purpose, CallPurpose::Summarize);
    assert!(summary_prompt.contains("it says hi"));
    assert!(
        summary_prompt.contains("[completed] Write hello.txt (1 tool call)"),
        "{summary_prompt}"
    );
    assert!(summary_prompt.contains("OUTCOME: The run COMPLETED"));
    // The run record ends completed with the usage.
    let last = h.store.run(RUN_ID).expect("run record");
    assert_eq!(last.status, RunStatus::Completed);
    assert_eq!(last.usage, h.outcome.usage);
}

/// A plan over `max_plan_steps` keeps its first steps, says so, and is not swapped for the
/// default plan.
#[tokio::test]
async fn a_plan_over_the_cap_is_cut_with_an_event() {
    let h = super::run_with(
        vec![
            create_plan(&["Step a", "Step b", "Step c", "Step d", "Step e"]),
            acted("a"),
            acted("b"),
            text("summary"),
        ],
        crate::RunConfig {
            max_plan_steps: 2,
            ..base_config()
        },
    )
    .await;
    let descriptions: Vec<_> = h
        .outcome
        .plan
        .steps()
        .iter()
        .map(|s| s.description.as_str())
        .collect();
    assert_eq!(descriptions, ["Step a", "Step b"]);
    assert_eq!(h.outcome.status, RunStatus::Completed);
    assert!(h.events().iter().any(|e| matches!(
        &e.kind,
        EventKind::PlanCreated {
            source: PlanSource::Llm,
            ..
        }
    )));
    assert!(
        h.errors()
            .iter()
            .any(|m| m.contains("listed 5 steps") && m.contains("kept the first 2")),
        "{:?}",
        h.errors()
    );
}

#[tokio::test]
async fn planner_garbage_gives_the_default_plan() {
    let h = run(vec![
        text("Sure! Here is my plan: 1. do it"),
        raw_calls(&[("planning", "{not json".to_string())]),
        done("analysed"),
        acted("executed"),
        acted("verified"),
        text("summary"),
    ])
    .await;
    let descriptions: Vec<_> = h
        .outcome
        .plan
        .steps()
        .iter()
        .map(|s| s.description.as_str())
        .collect();
    assert_eq!(
        descriptions,
        ["Analyze request", "Execute task", "Verify results"]
    );
    assert_eq!(h.outcome.status, RunStatus::Completed);
    let created = h
        .events()
        .into_iter()
        .find_map(|e| match e.kind {
            EventKind::PlanCreated { source, reason, .. } => Some((source, reason)),
            _ => None,
        })
        .expect("plan_created event");
    assert_eq!(created.0, PlanSource::Default);
    assert!(created.1.unwrap_or_default().contains("not valid JSON"));
    // The planner saw the error of its first answer before its second try.
    let second = &h.llm.requests()[1];
    assert!(second
        .messages
        .last()
        .and_then(|m| m.content.clone())
        .unwrap_or_default()
        .contains("without calling the `planning` tool"));
    assert_valid_transcripts(&h.llm.requests());
}

#[tokio::test]
async fn planner_llm_failure_gives_the_default_plan() {
    let h = run(vec![
        Err(LlmError::Transient("server down".into())),
        done("a"),
        acted("b"),
        acted("c"),
        text("summary"),
    ])
    .await;
    assert_eq!(h.outcome.plan.steps().len(), 3);
    assert_eq!(h.outcome.status, RunStatus::Completed);
    assert!(h.events().iter().any(|e| matches!(
        &e.kind,
        EventKind::Error { message, .. } if message.contains("server down")
    )));
}

#[tokio::test]
async fn an_invalid_planning_call_is_corrected_on_the_second_turn() {
    let h = run(vec![
        calls(&[(
            "planning",
            json!({"command": "create", "title": "T", "steps": []}),
        )]),
        create_plan(&["only step"]),
        done("ok"),
        text("summary"),
    ])
    .await;
    assert_eq!(h.outcome.plan.steps().len(), 1);
    assert_eq!(h.outcome.plan.steps()[0].description, "only step");
    let second = &h.llm.requests()[1];
    let tool_msg = second
        .messages
        .iter()
        .find(|m| m.role == Role::Tool)
        .and_then(|m| m.content.clone())
        .unwrap_or_default();
    assert!(tool_msg.contains("must not be empty"), "{tool_msg}");
}

#[tokio::test]
async fn steps_are_routed_by_kind_tag() {
    let planner = ScriptedLlm::new(vec![
        create_plan(&["[CODE] write code", "[SEARCH] look it up", "untagged"]),
        text("summary"),
    ]);
    let code_llm = Arc::new(ScriptedLlm::new(vec![acted("coded")]));
    let search_llm = Arc::new(ScriptedLlm::new(vec![
        acted("found"),
        done("untagged done"),
    ]));
    let toolbox = Arc::new(EchoToolbox::new());
    let mut rt = runtime(
        Arc::new(planner),
        toolbox.clone(),
        Arc::new(MemoryStore::new()),
        base_config(),
    );
    rt.executors = vec![
        agent("searcher", &["SEARCH"], search_llm.clone(), toolbox.clone()),
        agent("coder", &["CODE"], code_llm.clone(), toolbox),
    ];
    let outcome = rt
        .run(request("t"), CancellationToken::new())
        .await
        .expect("outcome");
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(code_llm.requests().len(), 1);
    // SEARCH goes to the searcher; the untagged step to the first executor (also the searcher).
    assert_eq!(search_llm.requests().len(), 2);
    assert_eq!(outcome.plan.steps()[0].result.as_deref(), Some("coded"));
}
