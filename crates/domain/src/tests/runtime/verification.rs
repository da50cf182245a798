//! Answers checked by running them (docs/verification.md), over the in-memory workspace and
//! its tools (a program's lines run as the fake shell's commands): a reproduction in a
//! scratch copy of the workspace as the run found it, compared with what the run left; a
//! disagreement gets a second look and may try the step again; a run ends `verified` only
//! when its answer came from executed actions and a reproduction agreed.

use std::sync::Arc;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::engine::config::{Mode, RunConfig, SummaryStyle};
use crate::engine::runtime::RunOutcome;
use crate::model::event::EventKind;
use crate::model::verification::CheckVerdict;
use crate::ports::llm::{Role, ToolChoice};
use crate::ports::RunStatus;
use crate::testing::replies::{call, done, fail, Reply};
use crate::testing::runs::{request, runtime, RUN_ID};
use crate::testing::{AnswersInOrder, MemoryStore, MemoryWorkspace, ScriptedLlm};
use crate::tests::support::{assert_gap_free, assert_valid_transcripts};

struct Checked {
    outcome: RunOutcome,
    store: Arc<MemoryStore>,
    llm: Arc<ScriptedLlm>,
}

impl Checked {
    /// The reasons of the run's nudges, in order.
    fn nudges(&self) -> Vec<String> {
        self.store
            .events_of(RUN_ID)
            .into_iter()
            .filter_map(|e| match e.kind {
                EventKind::Nudge { reason, .. } => Some(reason),
                _ => None,
            })
            .collect()
    }

    /// The last tool result the model read in LLM request `request`.
    fn last_tool_result(&self, request: usize) -> String {
        self.llm.requests()[request]
            .messages
            .iter()
            .rev()
            .find(|m| m.role == Role::Tool)
            .and_then(|m| m.content.clone())
            .unwrap_or_default()
    }

    fn checks(&self) -> Vec<(CheckVerdict, String)> {
        self.store
            .events_of(RUN_ID)
            .into_iter()
            .filter_map(|e| match e.kind {
                EventKind::AnswerChecked {
                    verdict, detail, ..
                } => Some((verdict, detail)),
                _ => None,
            })
            .collect()
    }
}

fn direct(retries: u32) -> RunConfig {
    RunConfig {
        mode: Mode::Direct,
        summary: SummaryStyle::Facts,
        retries,
        retry_delay: std::time::Duration::ZERO,
        ..RunConfig::default()
    }
}

async fn run(ws: &MemoryWorkspace, task: &str, script: Vec<Reply>, config: RunConfig) -> Checked {
    run_asking(ws, task, script, config, None).await
}

/// [`run`] with `user` answering the run's questions (nobody when `None`).
async fn run_asking(
    ws: &MemoryWorkspace,
    task: &str,
    script: Vec<Reply>,
    config: RunConfig,
    user: Option<Arc<AnswersInOrder>>,
) -> Checked {
    let llm = Arc::new(ScriptedLlm::new(script));
    let store = Arc::new(MemoryStore::new());
    let mut rt = runtime(llm.clone(), Arc::new(ws.toolbox()), store.clone(), config);
    rt.workspace_files = Some(Arc::new(ws.clone()));
    if let Some(user) = user {
        rt.user = user;
    }
    let outcome = rt
        .run(request(task), CancellationToken::new())
        .await
        .expect("an outcome");
    assert_gap_free(&store.events_of(RUN_ID));
    assert_valid_transcripts(&llm.requests());
    Checked {
        outcome,
        store,
        llm,
    }
}

fn program(code: &str) -> Reply {
    call("code_run", json!({"language": "bash", "code": code}))
}

const TASK: &str = "Add the numbers in a.txt and b.txt and write the sum to sum.txt";

fn numbers() -> MemoryWorkspace {
    MemoryWorkspace::with(&[("a.txt", "4\n"), ("b.txt", "5\n")])
}

#[tokio::test]
async fn an_answer_reproduced_in_a_scratch_copy_is_verified() {
    let ws = numbers();
    let h = run(
        &ws,
        TASK,
        vec![
            program("expr 4 + 5 > sum.txt"),
            done("sum.txt holds 9"),
            program("echo 9 > sum.txt"),
        ],
        direct(0),
    )
    .await;
    assert_eq!(
        h.outcome.status,
        RunStatus::Completed,
        "{:?}",
        h.outcome.error
    );
    assert!(
        h.outcome.verification.verified,
        "{:?}",
        h.outcome.verification
    );
    assert_eq!(
        h.checks(),
        [(
            CheckVerdict::Agree,
            "an independent program reproduced sum.txt".to_string()
        )]
    );
    assert!(
        h.outcome
            .summary
            .contains("Verified: an independent program reproduced sum.txt."),
        "{}",
        h.outcome.summary
    );
    // The check ran in its own folder: the workspace holds the run's files only.
    assert_eq!(ws.paths(), ["a.txt", "b.txt", "sum.txt"]);
    assert!(ws.scratch_folders().is_empty(), "discarded with the copies");
    // It saw the task and the workspace as the run found it, never the run's transcript,
    // and could only write a program.
    let check = h
        .llm
        .requests()
        .last()
        .cloned()
        .expect("the check's request");
    assert_eq!(check.tool_choice, ToolChoice::Function("code_run".into()));
    assert_eq!(check.tools.len(), 1);
    let user = check
        .messages
        .iter()
        .filter(|m| m.role == Role::User)
        .filter_map(|m| m.content.clone())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(user.starts_with(&format!("TASK: {TASK}")), "{user}");
    assert!(user.contains("a.txt (2 bytes, 1 lines)"), "{user}");
    assert!(
        !user.contains("sum.txt holds 9") && !user.contains("sum.txt ("),
        "{user}"
    );
    // And the executor's first prompt starts the same way (the model's cache reads it once).
    let first = h.llm.requests()[0].messages[1]
        .content
        .clone()
        .unwrap_or_default();
    assert_eq!(
        first.split("Do the task").next(),
        user.split("Do this task").next()
    );
}

#[tokio::test]
async fn two_checks_that_agree_against_the_run_try_the_step_again() {
    let ws = numbers();
    let h = run(
        &ws,
        TASK,
        vec![
            program("echo 8 > sum.txt"),
            done("sum.txt holds 8"),
            program("echo 9 > sum.txt"),
            program("expr 4 + 5 > sum.txt"),
            // The step again, told why.
            program("expr 4 + 5 > sum.txt"),
            done("sum.txt holds 9"),
            program("echo 9 > sum.txt"),
        ],
        direct(1),
    )
    .await;
    assert_eq!(
        h.outcome.status,
        RunStatus::Completed,
        "{:?}",
        h.outcome.error
    );
    assert!(
        h.outcome.verification.verified,
        "{:?}",
        h.outcome.verification
    );
    assert_eq!(ws.read("sum.txt").as_deref(), Some("9\n"));
    let verdicts: Vec<CheckVerdict> = h.checks().into_iter().map(|(v, _)| v).collect();
    assert_eq!(verdicts, [CheckVerdict::Disagree, CheckVerdict::Agree]);
    let retry = h.llm.requests()[4].messages[1]
        .content
        .clone()
        .unwrap_or_default();
    assert!(
        retry.contains("YOUR LAST ATTEMPT AT THIS STEP WAS NOT ACCEPTED: two independent programs")
            && retry.contains("sum.txt: the run left \"8\\n\", the check \"9\\n\""),
        "{retry}"
    );
}

/// A run that wrote its result into an input, where both checks wrote a new file and left
/// the input alone: the input is put back before the retry, and the model told.
#[tokio::test]
async fn an_input_both_checks_left_alone_is_put_back_before_the_retry() {
    let ws = numbers();
    let h = run(
        &ws,
        TASK,
        vec![
            program("echo 9 > a.txt"),
            done("a.txt holds 9"),
            program("expr 4 + 5 > sum.txt"),
            program("expr 4 + 5 > sum.txt"),
            // The step again, from a.txt as it was.
            program("expr 4 + 5 > sum.txt"),
            done("sum.txt holds 9"),
            program("echo 9 > sum.txt"),
        ],
        direct(1),
    )
    .await;
    assert!(
        h.outcome.verification.verified,
        "{:?}",
        h.outcome.verification
    );
    assert_eq!(ws.read("a.txt").as_deref(), Some("4\n"));
    assert_eq!(ws.read("sum.txt").as_deref(), Some("9\n"));
    let restored: Vec<String> = h
        .store
        .events_of(RUN_ID)
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::InputProtected {
                path,
                action: crate::model::inputs::InputAction::Restored,
                ..
            } => Some(path),
            _ => None,
        })
        .collect();
    assert_eq!(restored, ["a.txt"]);
    let retry = h.llm.requests()[4].messages[1]
        .content
        .clone()
        .unwrap_or_default();
    assert!(
        retry.contains(
            "Neither program changed a.txt, which existed before the run: it was put back"
        ),
        "{retry}"
    );
    assert_eq!(h.outcome.files.created, ["sum.txt"]);
    assert!(h.outcome.files.changed.is_empty(), "{:?}", h.outcome.files);
}

/// With no retry left, two checks that agree against the run still put back the input the
/// run changed and neither of them did: the run ends unverified, the user's file as it was.
#[tokio::test]
async fn an_input_both_checks_left_alone_is_put_back_when_no_retry_is_left() {
    let ws = numbers();
    let h = run(
        &ws,
        TASK,
        vec![
            program("echo 9 > a.txt"),
            done("a.txt holds 9"),
            program("expr 4 + 5 > sum.txt"),
            program("expr 4 + 5 > sum.txt"),
        ],
        direct(0),
    )
    .await;
    assert_eq!(h.outcome.status, RunStatus::Completed);
    assert!(!h.outcome.verification.verified);
    assert_eq!(ws.read("a.txt").as_deref(), Some("4\n"));
    let checks = h.checks();
    assert_eq!(checks.len(), 1, "{checks:?}");
    assert_eq!(checks[0].0, CheckVerdict::Disagree);
    assert!(
        checks[0]
            .1
            .contains("put back a.txt, which neither program changed"),
        "{checks:?}"
    );
    assert!(h.outcome.files.changed.is_empty(), "{:?}", h.outcome.files);
}

/// One check for the run and one against it verify nothing: the run ends unverified,
/// said plainly, and the step is not tried again.
#[tokio::test]
async fn a_second_check_that_agrees_with_the_run_splits_the_checks() {
    let ws = numbers();
    let h = run(
        &ws,
        TASK,
        vec![
            program("expr 4 + 5 > sum.txt"),
            done("sum.txt holds 9"),
            program("echo 10 > sum.txt"),
            program("echo 9 > sum.txt"),
        ],
        direct(1),
    )
    .await;
    assert_eq!(h.outcome.status, RunStatus::Completed);
    assert!(
        !h.outcome.verification.verified,
        "{:?}",
        h.outcome.verification
    );
    assert!(
        h.outcome
            .verification
            .detail
            .contains("the checks split: a first program disagreed (sum.txt: the run left \"9\\n\", the check \"10\\n\"), a second reproduced sum.txt"),
        "{:?}",
        h.outcome.verification
    );
    assert_eq!(h.llm.requests().len(), 4, "no retry of the step");
}

#[tokio::test]
async fn without_retries_left_a_disagreement_ends_unverified_said_plainly() {
    let ws = numbers();
    let h = run(
        &ws,
        TASK,
        vec![
            program("echo 8 > sum.txt"),
            done("sum.txt holds 8"),
            program("echo 9 > sum.txt"),
            program("echo 9 > sum.txt"),
        ],
        direct(0),
    )
    .await;
    assert_eq!(h.outcome.status, RunStatus::Completed);
    assert!(!h.outcome.verification.verified);
    assert!(
        h.outcome
            .summary
            .contains("Not verified: two independent programs still disagree")
            && h.outcome.summary.contains("Check the result yourself."),
        "{}",
        h.outcome.summary
    );
    let completed = h
        .store
        .events_of(RUN_ID)
        .into_iter()
        .find_map(|e| match e.kind {
            EventKind::RunCompleted { verified, .. } => Some(verified),
            _ => None,
        });
    assert_eq!(completed, Some(false));
}

#[tokio::test]
async fn an_answer_typed_without_acting_is_never_verified() {
    let ws = numbers();
    let h = run(&ws, "What is 4 + 5?", vec![done("9")], direct(0)).await;
    assert_eq!(h.outcome.status, RunStatus::Completed);
    assert!(!h.outcome.verification.verified);
    assert_eq!(
        h.checks(),
        [(
            CheckVerdict::NotRun,
            "no action was executed: the answer was typed, not computed".to_string()
        )]
    );
    assert_eq!(h.llm.requests().len(), 1, "no check program was asked for");
}

#[tokio::test]
async fn an_answer_is_checked_against_what_the_check_printed() {
    let ws = numbers();
    let h = run(
        &ws,
        "What is the sum of the numbers in a.txt and b.txt?",
        vec![
            program("expr 4 + 5"),
            done("The sum is 9."),
            program("expr 5 + 4"),
        ],
        direct(0),
    )
    .await;
    assert!(
        h.outcome.verification.verified,
        "{:?}",
        h.outcome.verification
    );
    assert_eq!(
        h.checks()[0].1,
        "an independent program reproduced the answer"
    );
}

/// A model decoding greedily writes, from the same task and workspace, the program the run
/// ran: that check is not run (it would agree whatever the answer) and the run ends
/// unverified.
#[tokio::test]
async fn a_check_that_copies_the_runs_program_checks_nothing() {
    let ws = numbers();
    let h = run(
        &ws,
        TASK,
        vec![
            program("expr 4 + 5 > sum.txt"),
            done("sum.txt holds 9"),
            program("expr 4 + 5 > sum.txt\n"),
        ],
        direct(0),
    )
    .await;
    assert_eq!(h.outcome.status, RunStatus::Completed);
    assert!(!h.outcome.verification.verified);
    assert_eq!(
        h.checks(),
        [(
            CheckVerdict::Undecided,
            "the check wrote the run's own program again: nothing independent checked the \
             answer"
                .to_string()
        )]
    );
    assert_eq!(h.llm.requests().len(), 3, "no second check is asked for");
    assert!(ws.scratch_folders().is_empty());
}

#[tokio::test]
async fn a_check_whose_program_keeps_failing_leaves_the_run_unverified() {
    let ws = numbers();
    let h = run(
        &ws,
        TASK,
        vec![
            program("expr 4 + 5 > sum.txt"),
            done("sum.txt holds 9"),
            program("fail"),
            program("fail again"),
        ],
        direct(0),
    )
    .await;
    assert_eq!(h.outcome.status, RunStatus::Completed);
    assert!(!h.outcome.verification.verified);
    assert_eq!(
        h.checks(),
        [(
            CheckVerdict::Undecided,
            "the check's program failed 2 times".to_string()
        )]
    );
    // The second program saw why the first failed.
    let fix = h.llm.requests()[3].messages.clone();
    assert!(
        fix.last()
            .and_then(|m| m.content.clone())
            .is_some_and(|c| c.contains("The program failed")),
        "{fix:?}"
    );
}

#[tokio::test]
async fn checks_switched_off_leave_every_run_unverified() {
    let ws = numbers();
    let h = run(
        &ws,
        TASK,
        vec![program("expr 4 + 5 > sum.txt"), done("sum.txt holds 9")],
        RunConfig {
            verification: false,
            ..direct(0)
        },
    )
    .await;
    assert!(!h.outcome.verification.verified);
    assert_eq!(h.checks()[0].0, CheckVerdict::NotRun);
    assert_eq!(h.llm.requests().len(), 2);
}

/// A step that finishes with a file it wrote left empty is sent back once to look at it
/// (docs/code-actions.md, "An empty file is looked at"); finished again, it stands, and a
/// check that leaves the same file empty verifies nothing.
#[tokio::test]
async fn a_finish_with_an_empty_output_is_looked_at_once_and_an_empty_reproduction_checks_nothing()
{
    let ws = numbers();
    let h = run(
        &ws,
        "Create the empty file marker.txt",
        vec![
            program("touch marker.txt\nfinal_answer made marker.txt"),
            done("marker.txt is empty, as the task asks"),
            program("echo > marker.txt"),
        ],
        direct(0),
    )
    .await;
    assert_eq!(
        h.outcome.status,
        RunStatus::Completed,
        "{:?}",
        h.outcome.error
    );
    assert_eq!(
        h.outcome.plan.steps()[0].result.as_deref(),
        Some("marker.txt is empty, as the task asks")
    );
    assert_eq!(h.nudges(), ["finished with an empty file"]);
    let second = &h.llm.requests()[1];
    let told = second
        .messages
        .iter()
        .rfind(|m| m.role == Role::User)
        .and_then(|m| m.content.clone())
        .unwrap_or_default();
    assert!(told.contains("marker.txt is empty (0 bytes)"), "{told}");
    // Decoding greedily, the model ran the same program again: the answer after samples.
    assert_eq!(h.llm.requests()[0].temperature, None);
    assert!(second.temperature.is_some());
    let checks = h.checks();
    assert_eq!(checks.len(), 1, "{checks:?}");
    assert_eq!(checks[0].0, CheckVerdict::Undecided, "{checks:?}");
    assert!(checks[0].1.contains("empty on both sides"), "{checks:?}");
    assert!(!h.outcome.verification.verified);
}

/// A step that finishes with an input it rewrote holding what it held when the run
/// started is sent back once to look at it (docs/code-actions.md, "A file rewritten
/// unchanged"); a changed one then finishes.
#[tokio::test]
async fn a_finish_with_an_input_rewritten_unchanged_is_looked_at_once() {
    let ws = numbers();
    let h = run(
        &ws,
        "In a.txt, 4 becomes 40",
        vec![
            program("echo 4 > a.txt\nfinal_answer a.txt changed"),
            program("echo 40 > a.txt\nfinal_answer a.txt changed"),
            program("echo 40 > a.txt"),
        ],
        direct(0),
    )
    .await;
    assert_eq!(
        h.outcome.status,
        RunStatus::Completed,
        "{:?}",
        h.outcome.error
    );
    assert_eq!(h.nudges(), ["finished with a file unchanged"]);
    let second = &h.llm.requests()[1];
    let told = second
        .messages
        .iter()
        .rev()
        .filter_map(|m| m.content.clone())
        .find(|c| c.contains("Not finished yet"))
        .unwrap_or_default();
    assert!(told.contains("a.txt holds exactly what it held"), "{told}");
    assert!(second.temperature.is_some(), "the answer after it samples");
    assert_eq!(ws.read("a.txt").as_deref(), Some("40\n"));
}

/// A program whose `final_answer` hands over nothing, having written nothing, did nothing:
/// the step goes on.
#[tokio::test]
async fn a_program_that_hands_over_nothing_does_not_finish_the_step() {
    let ws = numbers();
    let h = run(
        &ws,
        TASK,
        vec![
            program("final_answer"),
            program("expr 4 + 5 > sum.txt\nfinal_answer 9"),
            program("echo 9 > sum.txt"),
        ],
        direct(0),
    )
    .await;
    assert_eq!(
        h.outcome.status,
        RunStatus::Completed,
        "{:?}",
        h.outcome.error
    );
    assert_eq!(h.outcome.plan.steps()[0].result.as_deref(), Some("9"));
    assert_eq!(ws.read("sum.txt").as_deref(), Some("9\n"));
    let told = h.llm.requests()[1]
        .messages
        .iter()
        .rfind(|m| m.role == Role::User)
        .and_then(|m| m.content.clone())
        .unwrap_or_default();
    assert!(told.contains("handed over nothing"), "{told}");
}

/// A program that asks with `input()` stops at the question; the user is asked (the run
/// waits, as for `message_ask_user`) and the same program runs again from the start with
/// the answer, and the model reads both. The check's program is given the user's answer
/// and asks nobody (docs/code-actions.md, "A program that asks").
#[tokio::test]
async fn a_program_that_asks_is_answered_and_run_again() {
    let ws = numbers();
    let user = Arc::new(AnswersInOrder::new(&["7"]));
    let h = run_asking(
        &ws,
        "Ask me for a number and write it to pick.txt",
        vec![
            program("input Which number?\necho $REPLY > pick.txt"),
            done("pick.txt holds 7"),
            program("input A number, please\necho $REPLY > pick.txt"),
        ],
        direct(0),
        Some(user.clone()),
    )
    .await;
    assert_eq!(h.outcome.status, RunStatus::Completed, "{:?}", h.outcome);
    assert!(h.outcome.verification.verified, "{:?}", h.outcome);
    assert_eq!(user.asked(), ["Which number?"], "the check asked nobody");
    assert_eq!(ws.read("pick.txt").as_deref(), Some("7\n"));
    let events = h.store.events_of(RUN_ID);
    let waits = events
        .iter()
        .filter(|e| matches!(&e.kind, EventKind::WaitingForUser { question, .. } if question == "Which number?"))
        .count();
    assert_eq!(waits, 1);
    let runs: Vec<bool> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolCalled {
                tool,
                ok,
                journal_key: Some(_),
                ..
            } if tool == "code_run" => Some(*ok),
            _ => None,
        })
        .collect();
    assert_eq!(
        runs,
        [false, true],
        "stopped at the question, then run again"
    );
    let read = h.last_tool_result(1);
    assert!(
        read.starts_with(
            "The program asked the user \"Which number?\" and the user answered \"7\"."
        ),
        "{read}"
    );
}

/// With nobody to answer, the program stays stopped at its question and the model reads
/// that nobody can answer.
#[tokio::test]
async fn a_program_that_asks_with_nobody_to_answer_is_told_so() {
    let ws = numbers();
    let h = run(
        &ws,
        "Ask me for a number and write it to pick.txt",
        vec![
            program("input Which number?\necho $REPLY > pick.txt"),
            fail("nobody can tell me the number"),
        ],
        direct(0),
    )
    .await;
    assert_eq!(h.outcome.status, RunStatus::Failed, "{:?}", h.outcome);
    assert_eq!(ws.read("pick.txt"), None);
    let read = h.last_tool_result(1);
    assert!(
        read.contains(r#"[the program calls: {"tool":"message_ask_user","arguments":{"question":"Which number?"}}]"#),
        "{read}"
    );
    assert!(
        read.contains("Nobody can answer questions in this run"),
        "{read}"
    );
}

/// A tool of the step called as a function inside a program: the call is made (journaled,
/// as any tool call) and the program runs again with its output as the function's value,
/// which is what it computes its files from; the check's program can call it too
/// (docs/code-actions.md, "Tools in a program").
#[tokio::test]
async fn a_tool_called_in_a_program_is_made_and_the_program_run_again() {
    let ws = MemoryWorkspace::new();
    let task = "Read http://127.0.0.1:9/code and write what it says to code.txt";
    let h = run(
        &ws,
        task,
        vec![
            program("call browser_navigate http://127.0.0.1:9/code\necho $REPLY > page.txt\nmv page.txt code.txt\nfinal_answer wrote it"),
            // The check: another program (one holding the run's would check nothing).
            program("call browser_navigate http://127.0.0.1:9/code\necho $REPLY > code.txt\ncat code.txt"),
        ],
        direct(0),
    )
    .await;
    assert_eq!(h.outcome.status, RunStatus::Completed, "{:?}", h.outcome);
    assert_eq!(
        ws.read("code.txt").as_deref(),
        Some("page of http://127.0.0.1:9/code\n")
    );
    assert!(h.outcome.verification.verified, "{:?}", h.outcome);
    let calls: Vec<(String, bool)> = h
        .store
        .events_of(RUN_ID)
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::ToolCalled {
                tool,
                ok,
                journal_key: Some(_),
                ..
            } => Some((tool, ok)),
            _ => None,
        })
        .collect();
    assert_eq!(
        calls,
        [
            ("code_run".to_string(), false),
            ("browser_navigate".to_string(), true),
            ("code_run".to_string(), true),
        ]
    );
    // The first run was given the step's tools as functions.
    let first = h
        .store
        .events_of(RUN_ID)
        .into_iter()
        .find_map(|e| match e.kind {
            EventKind::ToolCalling { arguments, .. } => Some(arguments),
            _ => None,
        })
        .unwrap_or_default();
    assert!(
        first.contains(r#""functions":[{"name":"browser_navigate""#),
        "{first}"
    );
}

/// A program's calls whose outputs, given back with the code, would pass what a program
/// can carry stop there: the program is not run again and the model reads why.
#[tokio::test]
async fn calls_that_return_too_much_stop_the_program_there() {
    let ws = MemoryWorkspace::new();
    let long = format!("http://127.0.0.1:9/{}", "a".repeat(20 * 1024));
    let code = format!("call browser_navigate {long}\ncall browser_navigate {long}\ncall browser_navigate {long}\necho $REPLY > page.txt");
    let h = run(
        &ws,
        "Read http://127.0.0.1:9/ three times and write it to page.txt",
        vec![program(&code), fail("the pages are too long")],
        direct(0),
    )
    .await;
    assert_eq!(h.outcome.status, RunStatus::Failed, "{:?}", h.outcome);
    assert_eq!(ws.read("page.txt"), None);
    let read = h.last_tool_result(1);
    assert!(
        read.contains("more than a program can be given back"),
        "{}",
        &read[..read.len().min(400)]
    );
}

/// A run stopped after the user answered a program's question, before the program ran
/// again: resumed, it takes the answer from its journal (nobody is asked, nobody could be)
/// and runs the program again with it (docs/code-actions.md, "Tools in a program").
#[tokio::test]
async fn a_resumed_run_reuses_the_answer_its_program_was_given() {
    use crate::ports::RunStore;
    let task = "Ask me for a number and write it to pick.txt";
    let ask = "input Which number?\necho $REPLY > pick.txt";
    let first = run_asking(
        &numbers(),
        task,
        vec![
            program(ask),
            done("pick.txt holds 7"),
            program("input A number, please\necho $REPLY > pick.txt"),
        ],
        direct(0),
        Some(Arc::new(AnswersInOrder::new(&["7"]))),
    )
    .await;
    // The process died right after the answer was journaled.
    let events = first.store.events_of(RUN_ID);
    let replied = events
        .iter()
        .position(|e| matches!(e.kind, EventKind::UserReplied { .. }))
        .expect("the user replied");
    let store = Arc::new(MemoryStore::new());
    let mut record = first
        .store
        .get_run(RUN_ID)
        .await
        .expect("read")
        .expect("the run");
    record.status = RunStatus::Running;
    store.create_run(&record).await.expect("create run");
    for event in &events[..=replied] {
        store.append_event(event).await.expect("append event");
    }
    let ws = numbers();
    let llm = Arc::new(ScriptedLlm::new(vec![
        program(ask),
        done("pick.txt holds 7"),
        program("input A number, please\necho $REPLY > pick.txt"),
    ]));
    let mut rt = runtime(llm, Arc::new(ws.toolbox()), store.clone(), direct(0));
    rt.workspace_files = Some(Arc::new(ws.clone()));
    rt.user = Arc::new(crate::ports::NoUser);
    let outcome = rt
        .resume(RUN_ID, CancellationToken::new())
        .await
        .expect("the run resumes");
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    assert_eq!(ws.read("pick.txt").as_deref(), Some("7\n"));
    let waits = store
        .events_of(RUN_ID)
        .iter()
        .filter(|e| matches!(e.kind, EventKind::WaitingForUser { .. }))
        .count();
    assert_eq!(waits, 1, "asked once, before the stop");
}
