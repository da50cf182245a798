//! The direct style and what comes with it (docs/direct.md): the task as one step with no
//! planner call, `auto` sending small jobs there by rules, `complete_step` beside the last
//! tool calls, the summary written from the facts, and what earlier steps did reaching later
//! ones. Bad input: tools that all failed, empty answers, a question nobody can answer.

use std::sync::Arc;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::engine::config::SummaryStyle;
use crate::engine::config::{Mode, RunConfig};
use crate::model::event::{EventKind, PlanSource};
use crate::ports::llm::{ChatRequest, Role};
use crate::ports::RunStatus;
use crate::testing::replies::{call, calls, create_plan, done, fail, Reply};
use crate::testing::runs::{request, runtime, RUN_ID};
use crate::testing::{AnswersInOrder, EchoToolbox, MemoryStore, ScriptedLlm};
use crate::tests::support::{assert_gap_free, config as spine_config};
use crate::RunOutcome;

/// The spine's config in `mode`, with the default summary (from the facts when they say
/// everything).
fn config(mode: Mode) -> RunConfig {
    RunConfig {
        summary: SummaryStyle::Auto,
        ..spine_config(mode)
    }
}

const README_JOB: &str = "Write hello.txt containing 'hello from planwright' with the shell \
tool, then read it back and report its content";

struct Direct {
    outcome: RunOutcome,
    store: Arc<MemoryStore>,
    llm: Arc<ScriptedLlm>,
}

impl Direct {
    fn events(&self) -> Vec<EventKind> {
        self.store
            .events_of(RUN_ID)
            .into_iter()
            .map(|e| e.kind)
            .collect()
    }

    fn requests(&self) -> Vec<ChatRequest> {
        self.llm.requests()
    }

    /// What the model read back for its calls in request `n` (the tool messages after the
    /// last assistant message).
    fn tool_answers(&self, n: usize) -> Vec<String> {
        self.requests()[n]
            .messages
            .iter()
            .rev()
            .take_while(|m| m.role != Role::Assistant)
            .filter(|m| m.role == Role::Tool)
            .filter_map(|m| m.content.clone())
            .collect()
    }
}

async fn run_direct(script: Vec<Reply>, config: RunConfig, task: &str, answers: &[&str]) -> Direct {
    let llm = Arc::new(ScriptedLlm::new(script));
    let store = Arc::new(MemoryStore::new());
    let mut rt = runtime(
        llm.clone(),
        Arc::new(EchoToolbox::new().offering("boom").offering("code_run")),
        store.clone(),
        config,
    );
    rt.user = Arc::new(AnswersInOrder::new(answers));
    let outcome = rt
        .run(request(task), CancellationToken::new())
        .await
        .expect("an outcome");
    assert_gap_free(&store.events_of(RUN_ID));
    Direct {
        outcome,
        store,
        llm,
    }
}

fn shell(command: &str) -> (&'static str, serde_json::Value) {
    ("shell_exec", json!({"command": command}))
}

fn complete(result: &str) -> (&'static str, serde_json::Value) {
    ("complete_step", json!({"success": true, "result": result}))
}

#[tokio::test]
async fn direct_runs_the_task_as_one_step_with_no_planner_and_no_summary_call() {
    let r = run_direct(
        vec![
            calls(&[shell("echo 'hello from planwright' > hello.txt")]),
            calls(&[shell("cat hello.txt"), complete("hello.txt holds it")]),
        ],
        config(Mode::Direct),
        README_JOB,
        &[],
    )
    .await;
    assert_eq!(r.outcome.status, RunStatus::Completed);
    // Two executor calls, nothing else: no planner, no summary call.
    assert_eq!(r.requests().len(), 2);
    let steps = r.outcome.plan.steps();
    assert_eq!(steps.len(), 1);
    assert_eq!(steps[0].description, README_JOB);
    assert!(r.events().iter().any(|e| matches!(
        e,
        EventKind::PlanCreated {
            source: PlanSource::Task,
            ..
        }
    )));
    // The step prompt is the task alone, not a plan around it.
    let prompt = r.requests()[0].messages[1]
        .content
        .clone()
        .unwrap_or_default();
    assert!(
        prompt.starts_with(&format!("TASK: {README_JOB}")),
        "{prompt}"
    );
    assert!(!prompt.contains("PLAN:"), "{prompt}");
    // The summary is written from the facts: the result and the last output.
    let summary = &r.outcome.summary;
    assert!(
        summary.starts_with("Completed: 1 of 1 step done."),
        "{summary}"
    );
    assert!(summary.contains("hello.txt holds it"), "{summary}");
    assert!(summary.contains("ran cat hello.txt"), "{summary}");
}

#[tokio::test]
async fn auto_sends_the_readme_job_direct_by_rules() {
    let r = run_direct(
        vec![calls(&[
            shell("echo 'hello from planwright' > hello.txt && cat hello.txt"),
            complete("hello from planwright"),
        ])],
        config(Mode::Auto),
        README_JOB,
        &[],
    )
    .await;
    assert_eq!(r.outcome.status, RunStatus::Completed);
    let chosen = r.events().into_iter().find_map(|e| match e {
        EventKind::ModeChosen { mode, by, .. } => Some((mode, by)),
        _ => None,
    });
    assert_eq!(chosen, Some(("direct".to_string(), "rules".to_string())));
    assert_eq!(r.requests().len(), 1, "one LLM call for the whole job");
}

#[tokio::test]
async fn complete_step_beside_a_failed_call_is_held_and_the_model_goes_on() {
    let r = run_direct(
        vec![
            calls(&[complete("done"), ("boom", json!({}))]),
            calls(&[shell("true"), complete("done after all")]),
        ],
        config(Mode::Direct),
        "Write hello.txt",
        &[],
    )
    .await;
    assert_eq!(r.outcome.status, RunStatus::Completed);
    assert_eq!(
        r.outcome.plan.steps()[0].result.as_deref(),
        Some("done after all")
    );
    // The failed call ran although it came after `complete_step`; the completion was held,
    // and the answers keep the calls' order.
    let answers = r.tool_answers(1);
    assert_eq!(answers.len(), 2, "{answers:?}");
    assert!(answers[0].contains("kaboom"), "{answers:?}");
    assert!(
        answers[1].starts_with("Not accepted yet: `boom` failed"),
        "{answers:?}"
    );
}

#[tokio::test]
async fn a_step_whose_tools_all_failed_is_told_before_its_claim_stands() {
    let r = run_direct(
        vec![
            call("boom", json!({})),
            done("count.txt written"),
            done("count.txt written"),
        ],
        {
            let mut c = config(Mode::Direct);
            c.limits.nudges.claim_before_acting = true;
            c
        },
        "count the lines of data.csv into count.txt",
        &[],
    )
    .await;
    assert_eq!(r.outcome.status, RunStatus::Completed);
    assert!(!r.outcome.verification.verified);
    assert!(
        r.tool_answers(2)[0].starts_with("Not accepted yet: every call of this step failed"),
        "{:?}",
        r.tool_answers(2)
    );
}

#[tokio::test]
async fn an_empty_answer_is_said_so_and_a_second_one_fails_the_step() {
    let ask = || call("message_ask_user", json!({"question": "Which city?"}));
    let r = run_direct(
        vec![ask(), ask()],
        config(Mode::Direct),
        "ask the user their city and write it to city.txt",
        &["", "  "],
    )
    .await;
    assert_eq!(r.outcome.status, RunStatus::Failed);
    assert_eq!(
        r.outcome.plan.steps()[0].error.as_deref(),
        Some("the user gave no answer (asked twice)")
    );
    assert!(
        r.tool_answers(1)[0].starts_with("The user gave an empty answer"),
        "{:?}",
        r.tool_answers(1)
    );
    assert!(
        r.outcome.summary.contains("the user gave an empty answer"),
        "{}",
        r.outcome.summary
    );
}

/// The user's answer in step 0 reaches step 2 verbatim, although step 2 depends only on
/// step 1; every step recorded outputs, so the summary needs no LLM call.
#[tokio::test]
async fn the_users_answer_and_written_files_reach_later_steps() {
    let r = run_direct(
        vec![
            create_plan(&[
                "Ask the user their city",
                "Count the letters of the city",
                "Write city.txt",
            ]),
            call("message_ask_user", json!({"question": "Which city?"})),
            calls(&[
                (
                    "file_write",
                    json!({"path": "answer.txt", "content": "Paris"}),
                ),
                complete("asked"),
            ]),
            calls(&[shell("printf Paris | wc -c"), complete("5 letters")]),
            calls(&[
                shell("cat answer.txt > city.txt"),
                complete("wrote city.txt"),
            ]),
        ],
        config(Mode::Flow),
        "ask the user their city, then count its letters, then write it to city.txt",
        &["Paris"],
    )
    .await;
    assert_eq!(r.outcome.status, RunStatus::Completed);
    let reqs = r.requests();
    assert_eq!(reqs.len(), 5, "planner + 4 executor calls, no summary call");
    let last_step = reqs[4].messages[1].content.clone().unwrap_or_default();
    assert!(
        last_step.contains("the user answered: Paris"),
        "{last_step}"
    );
    assert!(
        last_step.contains("wrote answer.txt: \"Paris\""),
        "{last_step}"
    );
    assert!(last_step.contains("5 letters"), "{last_step}");
    assert!(
        r.outcome.summary.contains("the user answered: Paris"),
        "{}",
        r.outcome.summary
    );
}

/// The user answered once (`--answer Lisbon`), the model asked a second question nobody
/// can answer, then the step was retried and asked the first question again. The second question gets the earlier answers instead of failing the
/// step, and the repeated one is answered from the run without asking the user.
#[tokio::test]
async fn a_question_answered_before_is_not_asked_again_and_no_second_answer_fails_nothing() {
    let ask = |q: &str| call("message_ask_user", json!({"question": q}));
    let r = run_direct(
        vec![
            ask("Which city do you live in?"),
            ask("Shall I create city.txt?"),
            calls(&[
                (
                    "file_write",
                    json!({"path": "city.txt", "content": "Lisbon"}),
                ),
                complete("wrote city.txt"),
            ]),
        ],
        config(Mode::Direct),
        "Ask me which city I live in, then write my answer into city.txt.",
        &["Lisbon"],
    )
    .await;
    assert_eq!(r.outcome.status, RunStatus::Completed, "{:?}", r.outcome);
    let second = &r.tool_answers(2)[0];
    assert!(
        second.contains("cannot be asked again") && second.contains("\"Lisbon\""),
        "{second}"
    );

    // A retry that asks the same question again: answered from the run, and the retry's
    // prompt already says what the user answered.
    let r = run_direct(
        vec![
            ask("Which city do you live in?"),
            call(
                "complete_step",
                json!({"success": false, "result": "no file tool"}),
            ),
            ask("which city do you live in"),
            calls(&[
                (
                    "file_write",
                    json!({"path": "city.txt", "content": "Lisbon"}),
                ),
                complete("wrote city.txt"),
            ]),
        ],
        RunConfig {
            retries: 1,
            ..config(Mode::Direct)
        },
        "Ask me which city I live in, then write my answer into city.txt.",
        &["Lisbon"],
    )
    .await;
    assert_eq!(r.outcome.status, RunStatus::Completed, "{:?}", r.outcome);
    let retry = r.requests()[2].messages[1]
        .content
        .clone()
        .unwrap_or_default();
    assert!(
        retry
            .contains("What your earlier attempts' tools really did:\n  the user answered: Lisbon"),
        "{retry}"
    );
    assert_eq!(r.tool_answers(3), ["The user answered: Lisbon"]);
    let waits = r
        .events()
        .iter()
        .filter(|e| matches!(e, EventKind::WaitingForUser { .. }))
        .count();
    assert_eq!(waits, 1, "the user was asked once");
}

/// A question nobody can answer, whatever the task says: the model is told to go on with
/// what it has (no word of the task is read to decide).
#[tokio::test]
async fn a_question_nobody_can_answer_does_not_fail_the_step() {
    let ask = || {
        call(
            "message_ask_user",
            json!({"question": "Overwrite poem.txt?"}),
        )
    };
    for task in [
        "Count the words in poem.txt and write the number into words.txt",
        "Ask me which poem to count, then count its words into words.txt",
    ] {
        let r = run_direct(
            vec![
                ask(),
                calls(&[shell("wc -w < poem.txt > words.txt"), complete("words.txt")]),
            ],
            config(Mode::Direct),
            task,
            &[],
        )
        .await;
        assert_eq!(r.outcome.status, RunStatus::Completed, "{task}");
        assert!(
            r.tool_answers(1)[0].contains("Nobody can answer questions in this run"),
            "{:?}",
            r.tool_answers(1)
        );
    }
}

#[tokio::test]
async fn the_llm_summary_stays_selectable() {
    let r = run_direct(
        vec![
            calls(&[shell("true"), complete("done")]),
            crate::testing::replies::text("An LLM-written report."),
        ],
        RunConfig {
            summary: SummaryStyle::Llm,
            ..config(Mode::Direct)
        },
        "Write hello.txt",
        &[],
    )
    .await;
    assert_eq!(r.requests().len(), 2);
    assert!(
        r.outcome.summary.contains("An LLM-written report."),
        "{}",
        r.outcome.summary
    );
}

/// A failure claimed right after a program failed is sent back to be fixed, twice at most;
/// a third claim stands.
#[tokio::test]
async fn giving_up_right_after_a_failing_call_is_sent_back_twice() {
    let r = run_direct(
        vec![
            call("code_run", json!({"language": "python", "code": "x1"})),
            fail("the program failed"),
            call("code_run", json!({"language": "python", "code": "x2"})),
            fail("the program failed"),
            call("code_run", json!({"language": "python", "code": "x3"})),
            fail("the program failed"),
        ],
        config(Mode::Direct),
        "count the lines of data.csv into count.txt",
        &[],
    )
    .await;
    assert_eq!(r.outcome.status, RunStatus::Failed);
    for n in [2, 4] {
        assert!(
            r.tool_answers(n)[0].starts_with("Not accepted yet: the last call failed"),
            "{:?}",
            r.tool_answers(n)
        );
    }
    let error = r.outcome.plan.steps()[0].error.clone().unwrap_or_default();
    assert!(
        error.contains("the program failed"),
        "the third claim stands: {error}"
    );
    // The answer after a give-up sent back is asked without the way to finish, so the
    // model acts (a greedy model wrote the same give-up again when only told).
    let offers_finish = |n: usize| {
        r.requests()[n]
            .tools
            .iter()
            .any(|t| t.name == "complete_step")
    };
    assert!(offers_finish(0) && offers_finish(1));
    assert!(
        !offers_finish(2) && !offers_finish(4),
        "withheld after each refusal"
    );
    assert!(
        offers_finish(3) && offers_finish(5),
        "offered again once it acted"
    );
}

/// A retry that gives up before trying anything is sent back once, in words (the way to
/// finish stays offered); the model then acts and the retry completes.
#[tokio::test]
async fn a_retry_giving_up_before_trying_is_sent_back_to_act() {
    let r = run_direct(
        vec![
            calls(&[shell("cat data.csv")]),
            fail("data.csv is not there"),
            fail("data.csv is not there"),
            calls(&[shell("echo 1 > out.txt")]),
            calls(&[complete("out.txt")]),
        ],
        RunConfig {
            retries: 1,
            ..config(Mode::Direct)
        },
        "write 1 into out.txt",
        &[],
    )
    .await;
    assert_eq!(r.outcome.status, RunStatus::Completed);
    assert!(
        r.tool_answers(3)[0].starts_with("Not accepted yet: this is a new attempt"),
        "{:?}",
        r.tool_answers(3)
    );
    assert!(r.requests()[3]
        .tools
        .iter()
        .any(|t| t.name == "complete_step"));
}

/// A retry of a step samples: a greedy model shown the retry's prompt (the same from the
/// second retry on) answered the same every time. It is not told the give-up that ended
/// the attempt before it (a small model repeated it at once, every retry).
#[tokio::test]
async fn a_retry_samples_and_is_not_told_the_give_up() {
    let r = run_direct(
        vec![
            calls(&[shell("wc -l < data.csv")]),
            fail("data.csv is not there"),
            calls(&[shell("wc -l < data.csv > count.txt")]),
            calls(&[complete("count.txt")]),
        ],
        RunConfig {
            retries: 1,
            ..config(Mode::Direct)
        },
        "count the lines of data.csv into count.txt",
        &[],
    )
    .await;
    assert_eq!(r.outcome.status, RunStatus::Completed);
    let temperatures: Vec<Option<f32>> = r.requests().iter().map(|q| q.temperature).collect();
    assert_eq!(
        temperatures[..2],
        [None, None],
        "the first attempt is greedy"
    );
    assert!(
        temperatures[2..].iter().all(Option::is_some),
        "a retry samples: {temperatures:?}"
    );
    // Each sampled call with its own seed (with one seed for all, every sampled call drew
    // the same numbers and wrote what the call before it wrote); greedy calls with none.
    let seeds: Vec<Option<u32>> = r.requests().iter().map(|q| q.seed).collect();
    assert_eq!(seeds[..2], [None, None], "{seeds:?}");
    assert!(
        seeds[2].is_some() && seeds[3].is_some() && seeds[2] != seeds[3],
        "{seeds:?}"
    );
    let retry = r.requests()[2].messages[1]
        .content
        .clone()
        .unwrap_or_default();
    assert!(!retry.contains("NOT ACCEPTED"), "{retry}");
    assert!(!retry.contains("data.csv is not there"), "{retry}");
}
