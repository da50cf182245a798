//! Snapshots of every prompt: a change shows up as a snapshot diff in review.

use super::*;
use crate::engine::config::Actions;
use crate::model::event::EventKind;
use crate::model::observations::RunFacts;
use crate::model::plan::Plan;
use crate::model::plan::StepStatus;
use crate::model::step_input::{InputBudget, StepInput};
use crate::model::workspace_view::{ViewBudget, WorkspaceView};

const BUDGET: InputBudget = InputBudget {
    result_chars: 1200,
    total_chars: 2400,
};

/// What the steps of [`plan`] recorded: s1 asked the user and wrote notes.txt.
fn facts() -> RunFacts {
    let mut f = RunFacts::default();
    f.record(&EventKind::UserReplied {
        step_id: "s1".into(),
        answer: Some("three lines about Paris".into()),
        error: None,
        journal_key: None,
    });
    f.record(&EventKind::ToolCalling {
        step_id: Some("s1".into()),
        call_id: "c1".into(),
        tool: "file_write".into(),
        arguments: r#"{"path": "notes.txt", "content": "Paris\nis\nbig\n"}"#.into(),
        journal_key: Some("k1".into()),
    });
    f.record(&EventKind::ToolCalled {
        step_id: Some("s1".into()),
        call_id: "c1".into(),
        tool: "file_write".into(),
        ok: true,
        output: "Wrote 13 bytes to 'notes.txt'".into(),
        duration_ms: 1,
        journal_key: Some("k1".into()),
    });
    f
}

fn plan() -> Plan {
    let texts: Vec<String> = ["Create notes.txt", "[CODE] Count its lines", "Report"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut p = Plan::from_texts("plan_1", "Notes", "make notes", &texts).expect("valid plan");
    p.transition("s1", StepStatus::InProgress).expect("legal");
    p.transition("s1", StepStatus::Completed).expect("legal");
    p.steps_mut()[0].result = Some("Wrote notes.txt with 3 lines.".into());
    p.transition("s2", StepStatus::InProgress).expect("legal");
    p
}

#[test]
fn planner_system_single_executor() {
    insta::assert_snapshot!(planner_system(&[]));
}

#[test]
fn planner_system_lists_executors() {
    insta::assert_snapshot!(planner_system(&[
        ExecutorCard {
            kind: "CODE".into(),
            description: "writes and runs code".into()
        },
        ExecutorCard {
            kind: "SEARCH".into(),
            description: "finds information".into()
        },
    ]));
}

#[test]
fn planner_user_and_retry() {
    insta::assert_snapshot!(format!(
        "{}\n---\n{}\n---\n{}",
        planner_user("count lines", 6),
        planner_retry(
            "create",
            &[
                "the plan has 16 steps, at most 6 are allowed".to_string(),
                "steps 0 (\"1\"), 1 (\"2\") are only a number or punctuation".to_string()
            ],
            Some(r#"{"command": "create", "steps": ["1", "2"]}"#),
            6
        ),
        planner_retry("create", &[], None, 6)
    ));
}

#[test]
fn default_plan() {
    let long = "x".repeat(60);
    insta::assert_snapshot!(format!(
        "{}\n{}\n{:?}",
        default_plan_title("short task"),
        default_plan_title(&long),
        default_plan_steps()
    ));
}

#[test]
fn executor_system_prompt() {
    insta::assert_snapshot!(format!(
        "{}\n---\n{}",
        executor_system("general", "A general-purpose agent.", Actions::Code),
        executor_system("general", "A general-purpose agent.", Actions::Tools)
    ));
}

/// What a step is shown of the workspace: small text files whole, a long one's first
/// lines, a binary one by its size.
fn view() -> WorkspaceView {
    let long: String = (1..=80).map(|i| format!("{i},item{i}\n")).collect();
    WorkspaceView::build(
        vec![
            ("data.csv".into(), 18, Some(b"id,qty\n1,3\n2,5\n".to_vec())),
            ("big.csv".into(), long.len() as u64, Some(long.into_bytes())),
            ("logo.png".into(), 2048, Some(vec![0x89, 0x50, 0, 1])),
        ],
        ViewBudget::default(),
    )
}

#[test]
fn step_prompt_with_dependency_results() {
    let p = plan();
    let input = StepInput::new(&p, 1, &facts(), BUDGET);
    insta::assert_snapshot!(step_prompt("make notes", &input, None));
}

/// A later step sees the facts of an earlier step it does not depend on.
#[test]
fn step_prompt_with_earlier_facts() {
    let mut p = plan();
    p.transition("s2", StepStatus::Completed).expect("legal");
    p.steps_mut()[1].result = Some("3".into());
    p.transition("s3", StepStatus::InProgress).expect("legal");
    let input = StepInput::new(&p, 2, &facts(), BUDGET);
    insta::assert_snapshot!(step_prompt("make notes", &input, None));
}

/// Direct mode: the one step is the task; no plan digest, no step line.
#[test]
fn step_prompt_of_the_whole_task() {
    let task = "count the lines of data.csv into count.txt";
    let p = Plan::from_texts("plan_1", "t", task, &[task.to_string()]).expect("plan");
    let input = StepInput::new(&p, 0, &RunFacts::default(), BUDGET);
    assert!(input.whole_task);
    insta::assert_snapshot!(step_prompt(task, &input, Some(&view())));
}

/// The check of a run's answer starts as the step did (the model's cache reads it once).
#[test]
fn check_prompts() {
    let task = "count the lines of data.csv into count.txt";
    let answered = [crate::model::observations::Answered {
        question: "Which file?".into(),
        answer: "data.csv".into(),
    }];
    insta::assert_snapshot!(format!(
        "{}\n---\n{}\n---\n{}\n---\n{}\n---\n{}",
        check_prompt(task, &view(), &answered, 1),
        check_prompt(task, &view(), &[], 2),
        check_program_failed(),
        check_disagreed("count.txt: the run left \"7\", the check \"6\"", &[]),
        check_disagreed(
            "data.csv: the run left \"b\", the check (none)",
            &["data.csv".into()]
        )
    ));
}

#[test]
fn file_protection_prompts() {
    insta::assert_snapshot!(format!(
        "{}\n---\n{}\n---\n{}\n---\n{}\n---\n{}",
        protected_file("app.lock"),
        undeclared_change_undone(&["data.txt"]),
        change_not_undone(&["big.bin"]),
        verification_line(&crate::model::verification::Verification {
            verified: true,
            detail: "an independent program reproduced count.txt".into()
        }),
        verification_line(&crate::model::verification::Verification {
            verified: false,
            detail: "no action was executed: the answer was typed, not computed".into()
        })
    ));
}

#[test]
fn completion_and_answer_prompts() {
    insta::assert_snapshot!(format!(
        "{}\n---\n{}\n---\n{}",
        claim_after_failures(),
        completion_held(&["`shell_exec`".to_string()]),
        empty_user_answer()
    ));
}

#[test]
fn facts_report_snapshot() {
    let mut p = plan();
    p.transition("s2", StepStatus::Completed).expect("legal");
    p.steps_mut()[1].result = Some("3 lines".into());
    insta::assert_snapshot!(facts_report(&p, &facts()));
}

#[test]
fn adapt_and_loop_prompts() {
    insta::assert_snapshot!(format!(
        "{}\n---\n{}\n---\n{}\n---\n{}",
        tool_failed_twice_hint("file_read"),
        stuck_nudge("`shell_exec` was called 3 times with the same arguments"),
        json_repair("the answer contained no valid JSON object"),
        flow_replan("<plan text>", 1, "Count its lines", "wc is missing")
    ));
}

#[test]
fn plan_act_prompts() {
    insta::assert_snapshot!(format!(
        "{}\n---\n{}\n---\n{}\n---\n{}",
        plan_act_system(&[]),
        plan_act_create("count lines", 6),
        revise_plan("count lines", "{\"steps\": []}", "step s1 failed: no file"),
        revise_invalid(
            "unknown step id 's9'",
            &["s2".to_string(), "s3".to_string()]
        )
    ));
}

#[test]
fn todo_prompts() {
    insta::assert_snapshot!(format!(
        "{}\n---\n{}\n---\n{}\n---\n{}",
        todo_system(),
        todo_init("research rust web frameworks"),
        todo_update("t", "found 3 frameworks", "s1 [✓] list frameworks", 3, 20),
        todo_update("t", "r", "...", 16, 20)
    ));
}

#[test]
fn dag_auto_and_verify_prompts() {
    insta::assert_snapshot!(format!(
        "{}\n---\n{}\n---\n{}\n---\n{}\n---\n{}\n---\n{}",
        dag_system(),
        dag_create("compare two repos", 6),
        plan_invalid("the steps a1, a2 form a dependency cycle"),
        classify_task("compare two repos"),
        verify_system(),
        verify_step("t", "write x", "wrote x")
    ));
}

#[test]
fn nudge() {
    insta::assert_snapshot!(nudge_use_tools());
}

#[test]
fn too_many_calls_in_one_answer() {
    insta::assert_snapshot!(too_many_calls(16));
}

#[test]
fn summary_prompts() {
    let mut p = plan();
    p.steps_mut()[0].attachments = vec!["notes.txt".into()];
    p.transition("s2", StepStatus::Failed).expect("legal");
    p.steps_mut()[1].error = Some("claimed success without calling any tool".into());
    let calls = std::collections::HashMap::from([("s1".to_string(), 2)]);
    let failure = "step 1 (\"Count its lines\") failed: claimed success without calling any tool";
    let mut done = plan();
    done.transition("s2", StepStatus::Completed).expect("legal");
    done.transition("s3", StepStatus::InProgress)
        .expect("legal");
    done.transition("s3", StepStatus::Completed).expect("legal");
    insta::assert_snapshot!(format!(
        "{}\n---\n{}\n---\n{}\n---\n{}\n---\n{}",
        summary_system(),
        summary_user("make notes", &p, Some(failure), &calls, &facts()),
        outcome_line(&p, Some(failure)),
        summary_user("make notes", &done, None, &calls, &RunFacts::default()),
        outcome_line(&done, None)
    ));
}

#[test]
fn plain_report_snapshot() {
    insta::assert_snapshot!(plain_report("make notes", &plan(), "summary call failed"));
}

#[test]
fn truncation_marks_the_cut() {
    assert_eq!(truncate_chars("héllo", 10), "héllo");
    assert_eq!(truncate_chars("héllo", 2), "hé… [3 more characters cut]");
}

#[test]
fn json_instruction_prompts() {
    insta::assert_snapshot!(format!(
        "{}\n---\n{}",
        json_instruction(None),
        json_instruction(Some(&serde_json::json!({"type": "object"})))
    ));
}
