//! Protected inputs and grounded completion (docs/security.md, "Input files", "Outputs"),
//! over the in-memory workspace: a change the task does not ask for is refused or undone and
//! the model told; changes it asks for stand; the outcome lists the files from the
//! workspace; a run does not complete while an output the task names is missing.

use std::sync::Arc;

use async_trait::async_trait;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::engine::config::RunConfig;
use crate::engine::runtime::RunOutcome;
use crate::model::approval::{ApprovalDecision, ApprovalMode, ApprovalPolicy};
use crate::model::event::EventKind;
use crate::model::inputs::{InputAction, MovedFile};
use crate::ports::llm::ToolChoice;
use crate::ports::{ApprovalRequest, AskUserError, RunStatus, UserChannel};
use crate::testing::replies::{call, create_plan, done, text, Reply};
use crate::testing::runs::{request, runtime, RUN_ID};
use crate::testing::{MemoryStore, MemoryWorkspace, ScriptedLlm};
use crate::tests::support::{assert_gap_free, base_config};

struct Finished {
    outcome: RunOutcome,
    store: Arc<MemoryStore>,
    llm: Arc<ScriptedLlm>,
}

impl Finished {
    fn events(&self) -> Vec<EventKind> {
        self.store
            .events_of(RUN_ID)
            .into_iter()
            .map(|e| e.kind)
            .collect()
    }
    /// What the model read back for each tool call, in order.
    fn outputs(&self) -> Vec<(bool, String)> {
        self.events()
            .into_iter()
            .filter_map(|e| match e {
                EventKind::ToolCalled { ok, output, .. } => Some((ok, output)),
                _ => None,
            })
            .collect()
    }
    fn protected(&self) -> Vec<(String, InputAction)> {
        self.events()
            .into_iter()
            .filter_map(|e| match e {
                EventKind::InputProtected { path, action, .. } => Some((path, action)),
                _ => None,
            })
            .collect()
    }
}

async fn run_in(
    ws: &MemoryWorkspace,
    task: &str,
    script: Vec<Reply>,
    config: RunConfig,
) -> Finished {
    run_as(ws, task, script, config, Arc::new(crate::ports::NoUser)).await
}

/// As [`run_in`], with `user` to answer approvals.
async fn run_as(
    ws: &MemoryWorkspace,
    task: &str,
    script: Vec<Reply>,
    config: RunConfig,
    user: Arc<dyn UserChannel>,
) -> Finished {
    let llm = Arc::new(ScriptedLlm::new(script));
    let store = Arc::new(MemoryStore::new());
    let mut rt = runtime(llm.clone(), Arc::new(ws.toolbox()), store.clone(), config);
    rt.workspace_files = Some(Arc::new(ws.clone()));
    rt.user = user;
    let outcome = rt
        .run(request(task), CancellationToken::new())
        .await
        .expect("an outcome");
    assert_gap_free(&store.events_of(RUN_ID));
    Finished {
        outcome,
        store,
        llm,
    }
}

fn shell(command: &str) -> Reply {
    call("shell_exec", json!({ "command": command }))
}

fn write(path: &str, content: &str) -> Reply {
    call("file_write", json!({ "path": path, "content": content }))
}

const SUM_TASK: &str = "Sum the numbers in data.txt and write the total to total.txt";

#[tokio::test]
async fn a_shell_command_that_overwrites_an_input_is_undone_and_the_model_told() {
    let ws = MemoryWorkspace::with(&[("data.txt", "1\n2\n")]);
    let h = run_in(
        &ws,
        SUM_TASK,
        vec![
            create_plan(&["Compute the total"]),
            shell("echo 3 > data.txt"),
            write("total.txt", "total: 3\n"),
            done("total.txt holds 3"),
            text("Wrote the total."),
        ],
        base_config(),
    )
    .await;
    assert_eq!(
        h.outcome.status,
        RunStatus::Completed,
        "{:?}",
        h.outcome.error
    );
    assert_eq!(ws.read("data.txt").as_deref(), Some("1\n2\n"), "restored");
    let outputs = h.outputs();
    assert!(!outputs[0].0, "the call is reported failed: {outputs:?}");
    assert!(
        outputs[0]
            .1
            .starts_with("Refused: data.txt is an input of this task")
            && outputs[0]
                .1
                .contains("write your result to total.txt instead"),
        "{outputs:?}"
    );
    // The model read it in its next turn.
    let seen = format!("{:?}", h.llm.requests()[2].messages);
    assert!(seen.contains("data.txt is an input of this task"), "{seen}");
    assert_eq!(
        h.protected(),
        [("data.txt".to_string(), InputAction::Restored)]
    );
    let files = &h.outcome.files;
    assert_eq!(files.created, ["total.txt"]);
    assert_eq!(files.restored, ["data.txt"]);
    assert!(
        files.changed.is_empty() && files.deleted.is_empty(),
        "{files:?}"
    );
    assert!(
        h.outcome.summary.contains("- created: total.txt"),
        "{}",
        h.outcome.summary
    );
    assert!(
        h.outcome
            .summary
            .contains("restored (changes undone by the runtime): data.txt"),
        "{}",
        h.outcome.summary
    );
    assert_eq!(ws.copies(), 0, "the copies are deleted when the run ends");
}

#[tokio::test]
async fn deleting_or_moving_an_input_away_is_undone_too() {
    let ws = MemoryWorkspace::with(&[("data.txt", "1\n2\n")]);
    let h = run_in(
        &ws,
        SUM_TASK,
        vec![
            create_plan(&["Compute the total"]),
            shell("mv data.txt old.txt"),
            shell("rm data.txt"),
            write("total.txt", "total: 3\n"),
            done("total.txt holds 3"),
            text("Wrote the total."),
        ],
        base_config(),
    )
    .await;
    assert_eq!(
        h.outcome.status,
        RunStatus::Completed,
        "{:?}",
        h.outcome.error
    );
    assert_eq!(ws.read("data.txt").as_deref(), Some("1\n2\n"));
    let outputs = h.outputs();
    assert!(!outputs[0].0 && !outputs[1].0, "{outputs:?}");
    assert_eq!(h.protected().len(), 2);
    assert!(h.outcome.files.deleted.is_empty(), "{:?}", h.outcome.files);
}

/// Issue 41 (Low): `chmod 000` on an input changes neither its size nor its time; it was
/// neither noticed nor undone.
#[tokio::test]
async fn a_chmod_of_an_input_is_noticed_and_undone() {
    let ws = MemoryWorkspace::with(&[("data.txt", "1\n2\n")]);
    ws.chmod("data.txt", 0o644);
    let h = run_in(
        &ws,
        SUM_TASK,
        vec![
            create_plan(&["Compute the total"]),
            shell("chmod 000 data.txt"),
            write("total.txt", "total: 3\n"),
            done("total.txt holds 3"),
            text("Wrote the total."),
        ],
        base_config(),
    )
    .await;
    assert_eq!(
        h.outcome.status,
        RunStatus::Completed,
        "{:?}",
        h.outcome.error
    );
    assert_eq!(ws.mode("data.txt"), Some(0o644), "the permissions are back");
    assert_eq!(ws.read("data.txt").as_deref(), Some("1\n2\n"));
    let outputs = h.outputs();
    assert!(
        !outputs[0].0 && outputs[0].1.starts_with("Refused: data.txt is an input"),
        "{outputs:?}"
    );
    assert_eq!(
        h.protected(),
        [("data.txt".to_string(), InputAction::Restored)]
    );
}

#[tokio::test]
async fn a_file_tool_writing_an_input_is_refused_before_it_runs() {
    let ws = MemoryWorkspace::with(&[("data.txt", "1\n2\n")]);
    let h = run_in(
        &ws,
        SUM_TASK,
        vec![
            create_plan(&["Compute the total"]),
            call(
                "file_str_replace",
                json!({"path": "./data.txt", "old": "1", "new": "3"}),
            ),
            write("total.txt", "total: 3\n"),
            done("total.txt holds 3"),
            text("Wrote the total."),
        ],
        base_config(),
    )
    .await;
    assert_eq!(h.outcome.status, RunStatus::Completed);
    assert_eq!(ws.read("data.txt").as_deref(), Some("1\n2\n"));
    let outputs = h.outputs();
    assert!(
        !outputs[0].0 && outputs[0].1.contains("this call was not run"),
        "{outputs:?}"
    );
    let started = h
        .events()
        .iter()
        .filter(|e| matches!(e, EventKind::ToolCalling { .. }))
        .count();
    assert_eq!(started, 1, "the refused call never started");
    assert_eq!(
        h.protected(),
        [("data.txt".to_string(), InputAction::Refused)]
    );
}

#[tokio::test]
async fn an_edit_the_task_asks_for_stands_and_is_reported() {
    let ws = MemoryWorkspace::with(&[("notes.md", "helo world\n"), ("data.txt", "1\n")]);
    let h = run_in(
        &ws,
        "Fix the typo in notes.md; do not modify data.txt",
        vec![
            create_plan(&["Fix the typo"]),
            call(
                "file_str_replace",
                json!({"path": "notes.md", "old": "helo", "new": "hello"}),
            ),
            shell("echo x > data.txt"),
            done("fixed notes.md"),
            text("Fixed."),
        ],
        base_config(),
    )
    .await;
    assert_eq!(
        h.outcome.status,
        RunStatus::Completed,
        "{:?}",
        h.outcome.error
    );
    assert_eq!(ws.read("notes.md").as_deref(), Some("hello world\n"));
    assert_eq!(
        ws.read("data.txt").as_deref(),
        Some("1\n"),
        "not asked: undone"
    );
    assert_eq!(h.outcome.files.changed, ["notes.md"]);
    assert_eq!(h.outcome.files.restored, ["data.txt"]);
}

#[tokio::test]
async fn a_rename_the_task_asks_for_is_allowed_but_not_a_content_change() {
    let ws = MemoryWorkspace::with(&[("a.txt", "keep me\n")]);
    let h = run_in(
        &ws,
        "Rename a.txt to b.txt without changing it",
        vec![
            create_plan(&["Rename the file"]),
            write("a.txt", "changed"),
            shell("mv a.txt b.txt"),
            done("renamed a.txt to b.txt"),
            text("Renamed."),
        ],
        base_config(),
    )
    .await;
    assert_eq!(
        h.outcome.status,
        RunStatus::Completed,
        "{:?}",
        h.outcome.error
    );
    assert_eq!(ws.read("a.txt"), None);
    assert_eq!(ws.read("b.txt").as_deref(), Some("keep me\n"));
    let outputs = h.outputs();
    assert!(
        !outputs[0].0 && outputs[0].1.contains("not to change its content"),
        "{outputs:?}"
    );
    assert!(outputs[1].0, "{outputs:?}");
    assert_eq!(
        h.outcome.files.moved,
        [MovedFile {
            from: "a.txt".into(),
            to: "b.txt".into()
        }]
    );
    assert!(h.outcome.files.created.is_empty(), "{:?}", h.outcome.files);
}

#[tokio::test]
async fn allow_input_edits_lifts_the_protection() {
    let ws = MemoryWorkspace::with(&[("data.txt", "1\n2\n")]);
    let h = run_in(
        &ws,
        SUM_TASK,
        vec![
            create_plan(&["Compute the total"]),
            shell("echo 3 > data.txt"),
            write("total.txt", "total: 3\n"),
            done("total.txt holds 3"),
            text("Wrote the total."),
        ],
        RunConfig {
            allow_input_edits: true,
            ..base_config()
        },
    )
    .await;
    assert_eq!(h.outcome.status, RunStatus::Completed);
    assert_eq!(ws.read("data.txt").as_deref(), Some("3\n"));
    assert!(h.protected().is_empty());
    assert_eq!(h.outcome.files.changed, ["data.txt"]);
}

#[tokio::test]
async fn an_output_that_already_exists_may_be_written_and_the_rest_stays_protected() {
    let ws = MemoryWorkspace::with(&[("essay.txt", "one two\n"), ("count.txt", "old\n")]);
    let h = run_in(
        &ws,
        "Write the word count of essay.txt to count.txt",
        vec![
            create_plan(&["Count the words"]),
            write("count.txt", "2 words\n"),
            write("essay.txt", "2 words\n"),
            done("count.txt holds 2"),
            text("Counted."),
        ],
        base_config(),
    )
    .await;
    assert_eq!(
        h.outcome.status,
        RunStatus::Completed,
        "{:?}",
        h.outcome.error
    );
    assert_eq!(ws.read("count.txt").as_deref(), Some("2 words\n"));
    assert_eq!(ws.read("essay.txt").as_deref(), Some("one two\n"));
    assert_eq!(h.outcome.files.changed, ["count.txt"]);
}

#[tokio::test]
async fn a_task_that_names_no_output_completes_on_its_steps() {
    let ws = MemoryWorkspace::with(&[("data.txt", "1\n2\n")]);
    let h = run_in(
        &ws,
        "How many lines does data.txt have?",
        vec![
            create_plan(&["Count the lines"]),
            shell("wc -l data.txt"),
            done("2 lines"),
            text("It has 2 lines."),
        ],
        base_config(),
    )
    .await;
    assert_eq!(
        h.outcome.status,
        RunStatus::Completed,
        "{:?}",
        h.outcome.error
    );
    assert!(h.outcome.files.is_empty(), "{:?}", h.outcome.files);
}

#[tokio::test]
async fn a_run_missing_its_output_is_retried_with_the_reason_then_fails_naming_it() {
    let ws = MemoryWorkspace::new();
    let h = run_in(
        &ws,
        "Write the total of 4 and 5 to total.txt",
        vec![
            create_plan(&["Compute the total"]),
            shell("echo 9"),
            done("the total is 9"),
            // Refused twice in the loop, then the attempt ends.
            done("the total is 9"),
            done("the total is 9"),
            // The retry reads why.
            shell("echo 9"),
            done("the total is 9"),
            done("the total is 9"),
            done("the total is 9"),
            text("Could not finish."),
        ],
        RunConfig {
            retries: 1,
            ..base_config()
        },
    )
    .await;
    assert_eq!(h.outcome.status, RunStatus::Failed);
    let error = h.outcome.error.clone().unwrap_or_default();
    assert!(
        error.contains("the task asks for total.txt, which does not exist"),
        "{error}"
    );
    let requests = h.llm.requests();
    // In the loop: the refusal says what is missing, and file_write is the next call.
    let refusal = format!("{:?}", requests[3].messages.last());
    assert!(
        refusal.contains("Not accepted yet: the task asks for total.txt, which does not exist")
            && refusal.contains("call `file_write` now"),
        "{refusal}"
    );
    assert_eq!(
        requests[3].tool_choice,
        ToolChoice::Function("file_write".into())
    );
    let retry_prompt = format!("{:?}", requests[5].messages);
    assert!(
        retry_prompt.contains("NOT ACCEPTED: the task asks for total.txt"),
        "{retry_prompt}"
    );
}

/// The 0.5B model computes 9 with a command and then claims success without writing it
/// (the eval's `sum`): the refusal hands it the call that writes what it printed.
#[tokio::test]
async fn a_result_printed_but_not_written_is_sent_into_the_output_by_its_own_command() {
    let ws = MemoryWorkspace::new();
    let h = run_in(
        &ws,
        "Write the total of 4 and 5 to total.txt",
        vec![
            create_plan(&["Compute the total"]),
            shell("expr 4 + 5"),
            done("the total is 9"),
            write("total.txt", "9\n"),
            done("total.txt holds 9"),
            text("Done."),
        ],
        base_config(),
    )
    .await;
    assert_eq!(
        h.outcome.status,
        RunStatus::Completed,
        "{:?}",
        h.outcome.error
    );
    assert_eq!(ws.read("total.txt").as_deref(), Some("9\n"));
    let requests = h.llm.requests();
    let refusal = format!("{:?}", requests[3].messages.last());
    assert!(
        refusal.contains("your command `expr 4 + 5` printed \\\"9\\\"")
            && refusal
                .contains("write it with file_write (path \\\"total.txt\\\", content \\\"9\\\")")
            && refusal.contains("or run `expr 4 + 5 > total.txt`")
            && refusal.contains("call `file_write` now"),
        "{refusal}"
    );
    assert_eq!(
        requests[3].tool_choice,
        ToolChoice::Function("file_write".into())
    );
}

/// The same computing command run again and again is a loop whose nudge names the call that
/// writes its result, `file_write` for a one-line result.
#[tokio::test]
async fn a_command_printing_the_result_again_and_again_is_told_where_to_send_it() {
    let ws = MemoryWorkspace::new();
    let h = run_in(
        &ws,
        "Write the total of 4 and 5 to total.txt",
        vec![
            create_plan(&["Compute the total"]),
            shell("expr 4 + 5"),
            shell("expr 4 + 5"),
            shell("expr 4 + 5"),
            shell("expr 4 + 5 > total.txt"),
            done("total.txt holds 9"),
            text("Done."),
        ],
        base_config(),
    )
    .await;
    assert_eq!(
        h.outcome.status,
        RunStatus::Completed,
        "{:?}",
        h.outcome.error
    );
    let requests = h.llm.requests();
    let nudge = format!("{:?}", requests[4].messages.last());
    assert!(
        nudge.contains("You seem stuck") && nudge.contains("`expr 4 + 5 > total.txt`"),
        "{nudge}"
    );
    // A one-line result: the looping tool is not the way out, file_write is.
    assert_eq!(
        requests[4].tool_choice,
        ToolChoice::Function("file_write".into())
    );
}

/// A small model re-reads its input with other line numbers and gets the same text each
/// time (the eval's 0.5B `sum`): the third same output is the stuck nudge, and with the
/// output still missing it names it and makes `file_write` the next call.
#[tokio::test]
async fn the_same_output_read_again_and_again_is_a_loop_pointing_at_the_missing_output() {
    let ws = MemoryWorkspace::with(&[("a.txt", "4\n")]);
    let h = run_in(
        &ws,
        "a.txt holds a number. Write a sentence giving it into out.txt",
        vec![
            create_plan(&["Double it"]),
            call("file_read", json!({"path": "a.txt"})),
            call("file_read", json!({"path": "a.txt", "start_line": 1})),
            call("file_read", json!({"path": "a.txt", "end_line": 1})),
            write("out.txt", "The number is 4.\n"),
            done("out.txt holds it"),
            text("Done."),
        ],
        base_config(),
    )
    .await;
    assert_eq!(
        h.outcome.status,
        RunStatus::Completed,
        "{:?}",
        h.outcome.error
    );
    let requests = h.llm.requests();
    let nudge = format!("{:?}", requests[4].messages.last());
    assert!(
        nudge.contains("`file_read` returned the same output 3 times")
            && nudge.contains("the task asks for out.txt, which does not exist")
            && nudge.contains("Call `file_write` now"),
        "{nudge}"
    );
    assert_eq!(
        requests[4].tool_choice,
        ToolChoice::Function("file_write".into())
    );
}

#[tokio::test]
async fn an_input_the_task_moves_must_have_left_its_place() {
    let task = "Move r1.txt and r2.txt into the folder archive. notes.txt stays.";
    let seed = [
        ("r1.txt", "one\n"),
        ("r2.txt", "two\n"),
        ("notes.txt", "n\n"),
    ];
    let ws = MemoryWorkspace::with(&seed);
    let h = run_in(
        &ws,
        task,
        vec![
            create_plan(&["Move the files"]),
            shell("mv r1.txt archive/r1.txt"),
            done("moved both files into archive"),
            // The retry reads why.
            shell("mv r2.txt archive/r2.txt"),
            done("moved r2.txt too"),
            text("Moved."),
        ],
        RunConfig {
            retries: 1,
            ..base_config()
        },
    )
    .await;
    assert_eq!(
        h.outcome.status,
        RunStatus::Completed,
        "{:?}",
        h.outcome.error
    );
    let retry_prompt = format!("{:?}", h.llm.requests()[3].messages);
    assert!(
        retry_prompt.contains(
            "the task asks to move r2.txt, and it is still where it was: move it (e.g. \
             shell_exec with mv r2.txt archive/)"
        ),
        "{retry_prompt}"
    );
    assert_eq!(ws.read("archive/r2.txt").as_deref(), Some("two\n"));
    assert_eq!(ws.read("notes.txt").as_deref(), Some("n\n"));
}

/// The eval's `backup_edit` wrote "dave" over the names it was to add dave to, and
/// `append_item` completed with the list untouched: a task that adds to an input keeps
/// what it holds, and is not done while it is unchanged.
#[tokio::test]
async fn adding_to_an_input_keeps_what_it_holds_and_must_happen() {
    let ws = MemoryWorkspace::with(&[("names.txt", "alice\nbob\n")]);
    let h = run_in(
        &ws,
        "Add the name dave as a new last line of names.txt",
        vec![
            create_plan(&["Add dave"]),
            write("names.txt", "dave\n"),
            call("file_read", json!({"path": "names.txt"})),
            done("added dave"),
            // The retry reads why.
            call(
                "file_write",
                json!({"path": "names.txt", "content": "dave\n", "append": true}),
            ),
            done("added dave"),
            text("Added."),
        ],
        RunConfig {
            retries: 1,
            ..base_config()
        },
    )
    .await;
    assert_eq!(
        h.outcome.status,
        RunStatus::Completed,
        "{:?}",
        h.outcome.error
    );
    let outputs = h.outputs();
    assert!(
        !outputs[0].0
            && outputs[0].1.starts_with(
                "Refused: the task asks to add to names.txt, not to replace what it holds"
            ),
        "{outputs:?}"
    );
    let retry_prompt = format!("{:?}", h.llm.requests()[4].messages);
    assert!(
        retry_prompt.contains("the task asks to change names.txt, and it is as it was"),
        "{retry_prompt}"
    );
    assert_eq!(ws.read("names.txt").as_deref(), Some("alice\nbob\ndave\n"));
}

#[tokio::test]
async fn a_step_whose_tools_all_failed_does_not_complete() {
    let ws = MemoryWorkspace::new();
    let h = run_in(
        &ws,
        "Write hello to hello.txt",
        vec![
            create_plan(&["Write the file"]),
            call(
                "file_str_replace",
                json!({"path": "hello.txt", "old": "a", "new": "b"}),
            ),
            shell("cat hello.txt"),
            done("wrote hello.txt"),
            // The executor may refuse a claim right after failed calls once.
            done("wrote hello.txt"),
            text("Failed."),
        ],
        base_config(),
    )
    .await;
    assert!(h.outputs().iter().all(|(ok, _)| !ok), "{:?}", h.outputs());
    assert_eq!(h.outcome.status, RunStatus::Failed);
    let error = h.outcome.error.clone().unwrap_or_default();
    // Refused by the executor (every call failed) or by grounding (hello.txt missing).
    assert!(
        error.contains("every tool call failed") || error.contains("hello.txt"),
        "{error}"
    );
}

#[tokio::test]
async fn a_result_naming_a_file_that_is_not_there_is_not_accepted() {
    let ws = MemoryWorkspace::new();
    let h = run_in(
        &ws,
        "Say hello",
        vec![
            create_plan(&["Say hello"]),
            shell("echo hello"),
            done("saved the greeting in notes/hello.md"),
            text("Failed."),
        ],
        base_config(),
    )
    .await;
    assert_eq!(h.outcome.status, RunStatus::Failed);
    let error = h.outcome.error.clone().unwrap_or_default();
    assert!(
        error.contains("the result names notes/hello.md, which is not in the workspace"),
        "{error}"
    );
}

/// The eval's `folder` run wrote notes/todo.md four times and failed: the output check
/// looked for todo.md at the top of the workspace only.
#[tokio::test]
async fn an_output_the_task_puts_in_a_folder_is_found_there() {
    let ws = MemoryWorkspace::new();
    let h = run_in(
        &ws,
        "Create a folder named notes and in it a file todo.md whose first line is '# Todo'",
        vec![
            create_plan(&["Write it"]),
            write("notes/todo.md", "# Todo\n"),
            done("wrote notes/todo.md"),
            text("Done."),
        ],
        base_config(),
    )
    .await;
    assert_eq!(
        h.outcome.status,
        RunStatus::Completed,
        "{:?}",
        h.outcome.error
    );
    // Still missing when nothing of that name was written anywhere.
    let ws = MemoryWorkspace::new();
    let h = run_in(
        &ws,
        "Create a folder named notes and in it a file todo.md whose first line is '# Todo'",
        vec![
            create_plan(&["Write it"]),
            write("notes/other.md", "# Todo\n"),
            done("wrote notes/other.md"),
            text("Failed."),
        ],
        base_config(),
    )
    .await;
    assert_eq!(h.outcome.status, RunStatus::Failed);
}

/// The eval's `recover` run read the missing input.txt three times and gave up: a failed
/// call naming a file the task says is read, which is not there, says it may be created.
#[tokio::test]
async fn a_failed_call_naming_a_missing_source_says_it_may_be_created() {
    let ws = MemoryWorkspace::with(&[("report.sh", "cat input.txt > report.txt\n")]);
    let h = run_in(
        &ws,
        "Run report.sh. If it fails, fix the cause (the script reads the number 21 from \
         input.txt) and run it again so that it writes report.txt.",
        vec![
            create_plan(&["Do it"]),
            shell("cat input.txt"),
            write("input.txt", "21\n"),
            shell("cat input.txt"),
            write("report.txt", "21\n"),
            done("report.txt holds 21"),
            text("Done."),
        ],
        base_config(),
    )
    .await;
    let outputs = h.outputs();
    assert_eq!(outputs.len(), 4, "{:?} {outputs:?}", h.outcome.error);
    assert!(
        !outputs[0].0
            && outputs[0].1.ends_with(
                "Note: input.txt is not in the workspace. If the task says what it should \
                 hold, create it with file_write, then run again."
            ),
        "{outputs:?}"
    );
    assert!(!outputs[0].1.contains("report.txt"), "{outputs:?}");
    assert!(outputs[2].0, "{outputs:?}");
    assert_eq!(h.outcome.status, RunStatus::Completed);
}

/// The eval's `python` run ran squares.py before writing it: a failed call that names an
/// output not written yet says so.
#[tokio::test]
async fn a_failed_call_naming_an_output_not_written_yet_says_to_write_it_first() {
    let ws = MemoryWorkspace::new();
    let h = run_in(
        &ws,
        "Write a Python script squares.py, run it and save its output into squares.txt",
        vec![
            create_plan(&["Do it"]),
            call(
                "file_str_replace",
                json!({"path": "squares.py", "old": "a", "new": "b"}),
            ),
            write("squares.py", "print(1)\n"),
            call(
                "file_str_replace",
                json!({"path": "squares.py", "old": "zzz", "new": "b"}),
            ),
            shell("echo 1 > squares.txt"),
            done("wrote squares.py and squares.txt"),
            text("Done."),
        ],
        base_config(),
    )
    .await;
    let outputs = h.outputs();
    assert!(
        outputs[0].1.ends_with(
            "Note: squares.py does not exist yet; the task asks you to create it, so write it \
             first (file_write), then use it."
        ),
        "{outputs:?}"
    );
    assert!(
        !outputs[2].0 && !outputs[2].1.contains("Note:"),
        "it exists now: {outputs:?}"
    );
    assert_eq!(h.outcome.status, RunStatus::Completed);

    // Another tool's failure (an MCP server's "no such file") gets no note: the file is
    // the server's, and the note once sent the model writing it.
    let ws = MemoryWorkspace::new();
    let h = run_in(
        &ws,
        "The server holds a note code.txt; write the code it contains into answer.txt",
        vec![
            create_plan(&["Copy the code"]),
            call("mcp__library__read", json!({"path": "code.txt"})),
            // Nor a workspace tool's: the task never says to write code.txt.
            call("file_read", json!({"path": "code.txt"})),
            write("answer.txt", "TEAL-5816\n"),
            done("answer.txt holds the code"),
            text("Done."),
        ],
        base_config(),
    )
    .await;
    let outputs = h.outputs();
    assert!(
        !outputs[0].0 && !outputs[0].1.contains("Note:"),
        "{outputs:?}"
    );
    assert!(
        !outputs[1].0 && !outputs[1].1.contains("Note:"),
        "{outputs:?}"
    );
}

/// The eval's `mcp_library` run read code.txt from an MCP server and wrote answer.txt,
/// four times: code.txt, named by the task and not in the workspace, was taken for an
/// output. A file a successful call read is a source.
#[tokio::test]
async fn a_file_read_from_elsewhere_is_not_an_output() {
    let ws = MemoryWorkspace::new();
    let task = "The server named library holds a note called code.txt. Read that note and \
                write the code it contains into answer.txt";
    let read_note = || call("shell_exec", json!({"command": "true", "note": "code.txt"}));
    let h = run_in(
        &ws,
        task,
        vec![
            create_plan(&["Copy the code"]),
            read_note(),
            write("answer.txt", "TEAL-5816\n"),
            done("answer.txt holds the code"),
            text("Done."),
        ],
        base_config(),
    )
    .await;
    assert_eq!(
        h.outcome.status,
        RunStatus::Completed,
        "{:?}",
        h.outcome.error
    );
    // Without the read, code.txt is still an output the run did not write.
    let ws = MemoryWorkspace::new();
    let h = run_in(
        &ws,
        task,
        vec![
            create_plan(&["Copy the code"]),
            write("answer.txt", "TEAL-5816\n"),
            done("answer.txt holds the code"),
            text("Failed."),
        ],
        base_config(),
    )
    .await;
    assert_eq!(h.outcome.status, RunStatus::Failed);
}

/// The eval's `sort_upper` run wrote names.txt's lines, unsorted, into out.txt and
/// completed: an output that repeats an input is not a result, unless the task asks for a
/// copy.
#[tokio::test]
async fn an_output_that_repeats_an_input_is_not_done_unless_a_copy_was_asked() {
    let names = "charlie\nalice\nbob\n";
    let ws = MemoryWorkspace::with(&[("names.txt", names)]);
    let h = run_in(
        &ws,
        "Sort the names in names.txt alphabetically and write them into out.txt",
        vec![
            create_plan(&["Sort"]),
            write("out.txt", "charlie\nalice\nbob"),
            done("out.txt written"),
            // Refused twice in the loop, then the attempt ends (docs/direct.md).
            done("out.txt written"),
            done("out.txt written"),
            text("Failed."),
        ],
        base_config(),
    )
    .await;
    assert_eq!(h.outcome.status, RunStatus::Failed);
    let error = h.outcome.error.clone().unwrap_or_default();
    assert!(
        error.contains("out.txt holds the same text as the input names.txt"),
        "{error}"
    );
    let ws = MemoryWorkspace::with(&[("names.txt", names)]);
    let h = run_in(
        &ws,
        "Copy names.txt to backup.txt",
        vec![
            create_plan(&["Copy"]),
            write("backup.txt", names),
            done("backup.txt written"),
            text("Done."),
        ],
        base_config(),
    )
    .await;
    assert_eq!(
        h.outcome.status,
        RunStatus::Completed,
        "{:?}",
        h.outcome.error
    );
}

#[tokio::test]
async fn an_output_holding_a_tool_status_message_is_not_done() {
    let ws = MemoryWorkspace::new();
    let h = run_in(
        &ws,
        "Write the number of words in 'a b c' to count.txt",
        vec![
            create_plan(&["Count"]),
            write("count.txt", "5 bytes to 'count.txt'"),
            done("count.txt written"),
            // Refused twice in the loop, then the attempt ends (docs/direct.md).
            done("count.txt written"),
            done("count.txt written"),
            text("Failed."),
        ],
        base_config(),
    )
    .await;
    assert_eq!(h.outcome.status, RunStatus::Failed);
    let error = h.outcome.error.clone().unwrap_or_default();
    assert!(error.contains("holds a tool's status message"), "{error}");
}

/// "Compute, don't guess" (docs/direct.md, "Computed numbers"): a lone number nothing in
/// the run showed is not written; one a tool showed is (the rule checks where a number came
/// from, not the arithmetic).
#[tokio::test]
async fn a_guessed_number_is_not_written_and_a_number_a_tool_showed_is() {
    let ws = MemoryWorkspace::with(&[("data.txt", "1\n2\n")]);
    let h = run_in(
        &ws,
        SUM_TASK,
        vec![
            create_plan(&["Compute the total"]),
            write("total.txt", "100\n"),
            call("file_read", json!({"path": "data.txt"})),
            write("total.txt", "2\n"),
            // Nor is a number edited in that nothing showed (the eval's words_double).
            call(
                "file_str_replace",
                json!({"path": "total.txt", "old": "2", "new": "6"}),
            ),
            done("total.txt holds 2"),
            text("Wrote the total."),
        ],
        base_config(),
    )
    .await;
    assert_eq!(h.outcome.status, RunStatus::Completed);
    let outputs = h.outputs();
    assert!(
        !outputs[0].0
            && outputs[0]
                .1
                .starts_with("Not written: 100 was not computed"),
        "{outputs:?}"
    );
    assert!(outputs[2].0, "{outputs:?}");
    assert!(
        !outputs[3].0 && outputs[3].1.starts_with("Not written: 6 was not computed"),
        "{outputs:?}"
    );
    assert_eq!(ws.read("total.txt").as_deref(), Some("2\n"));
}

/// The eval's `words_double`: the file tool showed `[text: 3 lines, 9 words]` and the model
/// wrote 3 as the number of words. Refused, naming the count the task asks for.
#[tokio::test]
async fn a_lines_count_written_as_the_words_count_is_refused() {
    // The memory workspace's file_read returns the text as it is: the facts line is in it.
    let poem = "the quick brown fox\njumps over\nthe lazy dog\n[text: 3 lines, 9 words]";
    let ws = MemoryWorkspace::with(&[("poem.txt", poem)]);
    let h = run_in(
        &ws,
        "Count the words in poem.txt and write just that number into words.txt.",
        vec![
            create_plan(&["Count the words"]),
            call("file_read", json!({"path": "poem.txt"})),
            write("words.txt", "3"),
            write("words.txt", "9"),
            done("words.txt holds 9"),
            text("Done."),
        ],
        base_config(),
    )
    .await;
    assert_eq!(h.outcome.status, RunStatus::Completed);
    let outputs = h.outputs();
    assert!(
        !outputs[1].0
            && outputs[1].1.starts_with(
                "Not written: 3 is the number of lines the file tool showed ([text: …]), and \
                 the task counts words: that file has 9 words."
            ),
        "{outputs:?}"
    );
    assert_eq!(ws.read("words.txt").as_deref(), Some("9"));
}

/// The eval's 0.5B `sum` wrote its guessed 3 to sum.txt again and again: the nudge does
/// not make the refused `file_write` the next call, but a command.
#[tokio::test]
async fn a_refused_write_repeated_is_nudged_towards_a_command() {
    let ws = MemoryWorkspace::with(&[("data.txt", "1\n2\n")]);
    let h = run_in(
        &ws,
        SUM_TASK,
        vec![
            create_plan(&["Compute the total"]),
            call("file_read", json!({"path": "data.txt"})),
            write("total.txt", "100\n"),
            write("total.txt", "100\n"),
            write("total.txt", "100\n"),
            shell("awk '{s+=$1} END {print s}' data.txt > total.txt"),
            done("total.txt written"),
            text("Done."),
        ],
        base_config(),
    )
    .await;
    let requests = h.llm.requests();
    let nudge = format!("{:?}", requests[5].messages.last());
    assert!(
        nudge.contains("`file_write` was called 3 times with the same arguments")
            && nudge.contains("Call `shell_exec` now"),
        "{nudge}"
    );
    assert_eq!(
        requests[5].tool_choice,
        ToolChoice::Function("shell_exec".into())
    );
}

/// The eval's 0.5B `two_steps` appended a guessed 20 to numbers.txt, and `json_field` a
/// refusal's own words to port.txt: appended text is checked like written text.
#[tokio::test]
async fn a_guessed_number_or_an_error_is_not_appended_either() {
    let ws = MemoryWorkspace::with(&[("data.txt", "1\n2\n")]);
    let appended = |content: &str| {
        call(
            "file_write",
            json!({"path": "total.txt", "content": content, "append": true}),
        )
    };
    let h = run_in(
        &ws,
        SUM_TASK,
        vec![
            create_plan(&["Compute the total"]),
            appended("20\n"),
            call("file_read", json!({"path": "nope.txt"})),
            appended("Error: it does not exist"),
            call("file_read", json!({"path": "data.txt"})),
            appended("2\n"),
            done("total.txt holds 2"),
            text("Wrote the total."),
        ],
        base_config(),
    )
    .await;
    let outputs = h.outputs();
    assert!(
        !outputs[0].0 && outputs[0].1.starts_with("Not written: 20 was not computed"),
        "{outputs:?}"
    );
    assert!(
        !outputs[2].0
            && outputs[2]
                .1
                .starts_with("Not written: this text is the error output"),
        "{outputs:?}"
    );
    assert!(outputs[4].0, "a tool showed 2: {outputs:?}");
    assert_eq!(ws.read("total.txt").as_deref(), Some("2\n"));
}

/// The eval's `python` run wrote python3's "can't open file" error into squares.txt and
/// completed: an error output is neither written by `file_write` nor accepted as an output.
#[tokio::test]
async fn error_output_is_not_written_nor_accepted_as_a_result() {
    let ws = MemoryWorkspace::new();
    let h = run_in(
        &ws,
        "Run the script and save its output into out.txt",
        vec![
            create_plan(&["Run it"]),
            call("file_read", json!({"path": "script.py"})),
            write("out.txt", "Error: it does not exist\n"),
            shell("echo Error: it does not exist > out.txt"),
            done("saved the output"),
            // Refused twice in the loop, then the attempt ends (docs/direct.md).
            done("saved the output"),
            done("saved the output"),
            text("Failed."),
        ],
        base_config(),
    )
    .await;
    let outputs = h.outputs();
    assert!(
        !outputs[1].0
            && outputs[1]
                .1
                .starts_with("Not written: this text is the error output"),
        "{outputs:?}"
    );
    assert_eq!(h.outcome.status, RunStatus::Failed);
    let error = h.outcome.error.clone().unwrap_or_default();
    assert!(
        error.contains("out.txt holds the error output of a failed call"),
        "{error}"
    );
}

/// The eval's `edit` run made the edit, then repeated it: "not found" sent the model
/// looking for 10 more calls. A repeat of an edit that worked is told it is done.
#[tokio::test]
async fn repeating_an_edit_that_worked_is_told_it_is_done() {
    let ws = MemoryWorkspace::with(&[("settings.txt", "colour=red\n")]);
    let replace = || {
        call(
            "file_str_replace",
            json!({"path": "settings.txt", "old": "red", "new": "green"}),
        )
    };
    let other = || {
        call(
            "file_str_replace",
            json!({"path": "settings.txt", "old": "blue", "new": "green"}),
        )
    };
    let h = run_in(
        &ws,
        "In settings.txt, replace red with green",
        vec![
            create_plan(&["Edit"]),
            replace(),
            replace(),
            other(),
            done("settings.txt edited"),
            text("Done."),
        ],
        base_config(),
    )
    .await;
    assert_eq!(h.outcome.status, RunStatus::Completed);
    let outputs = h.outputs();
    assert!(outputs[0].0, "{outputs:?}");
    assert!(
        outputs[1].0
            && outputs[1].1
                == "Done already: settings.txt has this change (\"red\" is now \"green\"; an \
                    earlier call of this run made it). Do not make it again. If the step needs \
                    no other change, call `complete_step` with success=true.",
        "{outputs:?}"
    );
    assert!(
        !outputs[2].0 && outputs[2].1.contains("was not found"),
        "another edit still fails: {outputs:?}"
    );
    assert_eq!(ws.read("settings.txt").as_deref(), Some("colour=green\n"));
}

/// The eval's `move_files` run wrote its shell commands into a file named archive, the
/// folder the task asked for.
#[tokio::test]
async fn a_file_is_not_written_where_the_task_wants_a_folder() {
    let ws = MemoryWorkspace::with(&[("report1.txt", "one\n")]);
    let h = run_in(
        &ws,
        "Make a folder named archive and move report1.txt into it",
        vec![
            create_plan(&["Archive"]),
            write("archive", "mkdir archive\nmv report1.txt archive\n"),
            shell("mv report1.txt archive/report1.txt"),
            done("moved"),
            text("Done."),
        ],
        base_config(),
    )
    .await;
    let outputs = h.outputs();
    assert!(
        !outputs[0].0
            && outputs[0]
                .1
                .starts_with("Not written: archive is a folder the task asks for"),
        "{outputs:?}"
    );
    assert_eq!(ws.read("archive"), None);
}

/// The eval's `move_files` wrote its commands into notes.txt and archive/report1.txt;
/// `backup_edit` wrote "dave" into the copy it was to make; `append_item` appended the
/// name extra.txt instead of the item it holds.
#[tokio::test]
async fn commands_copies_and_file_names_get_the_call_to_make() {
    let ws = MemoryWorkspace::with(&[
        ("names.txt", "alice\nbob\n"),
        ("extra.txt", "cheese\n"),
        ("report1.txt", "one\n"),
    ]);
    let h = run_in(
        &ws,
        "Copy names.txt to backup.txt. Then add the item written in extra.txt as a new last \
         line of names.txt, and move report1.txt into the folder old",
        vec![
            create_plan(&["Do it"]),
            write("out.txt", "mkdir old\nmv report1.txt old\n"),
            write("backup.txt", "dave\n"),
            write("backup.txt", "alice\nbob\n"),
            call(
                "file_write",
                json!({"path": "names.txt", "content": "extra.txt", "append": true}),
            ),
            // The copy made, "dave" again (the eval's backup_edit, round 4).
            write("backup.txt", "dave\n"),
            done("done"),
            text("Done."),
        ],
        RunConfig {
            retries: 0,
            ..base_config()
        },
    )
    .await;
    let outputs = h.outputs();
    assert_eq!(
        outputs[0].1,
        "Not written: these are shell commands, not a result. Run them: shell_exec with command \
         \"mkdir old && mv report1.txt old\"."
    );
    assert_eq!(
        outputs[1].1,
        "Not written: the task asks for backup.txt as a copy of names.txt, and this is not its \
         text. Copy it: shell_exec with command \"cp names.txt backup.txt\"."
    );
    assert!(outputs[2].0, "the copy itself is written: {outputs:?}");
    assert!(
        !outputs[3].0
            && outputs[3]
                .1
                .starts_with("Not written: the content is the name extra.txt"),
        "{outputs:?}"
    );
    assert_eq!(
        outputs[4].1,
        "Not written: backup.txt already is the copy of names.txt the task asks for; leave it \
         as it is. The text to add goes into names.txt: file_write with path \"names.txt\", \
         append true and only the new text."
    );
    assert_eq!(ws.read("names.txt").as_deref(), Some("alice\nbob\n"));
}

/// The eval's `rename` run wrote the text "draft.txt" into final.txt.
#[tokio::test]
async fn a_files_name_is_not_written_as_its_content() {
    let ws = MemoryWorkspace::with(&[("draft.txt", "Meeting moved.\n")]);
    let h = run_in(
        &ws,
        "Rename draft.txt to final.txt",
        vec![
            create_plan(&["Rename"]),
            write("final.txt", "draft.txt"),
            shell("mv draft.txt final.txt"),
            done("renamed"),
            text("Done."),
        ],
        base_config(),
    )
    .await;
    let outputs = h.outputs();
    assert!(
        !outputs[0].0
            && outputs[0]
                .1
                .starts_with("Not written: the content is the name draft.txt"),
        "{outputs:?}"
    );
    assert_eq!(
        h.outcome.status,
        RunStatus::Completed,
        "{:?}",
        h.outcome.error
    );
    assert_eq!(ws.read("final.txt").as_deref(), Some("Meeting moved.\n"));
}

#[tokio::test]
async fn an_output_holding_an_unworked_sum_is_not_done() {
    let ws = MemoryWorkspace::with(&[("data.txt", "1\n2\n")]);
    let h = run_in(
        &ws,
        SUM_TASK,
        vec![
            create_plan(&["Compute the total"]),
            shell("echo 1 + 2 > total.txt"),
            done("total.txt holds the sum"),
            // Refused twice in the loop, then the attempt ends (docs/direct.md).
            done("total.txt holds the sum"),
            done("total.txt holds the sum"),
            text("Failed."),
        ],
        base_config(),
    )
    .await;
    assert_eq!(h.outcome.status, RunStatus::Failed);
    let error = h.outcome.error.clone().unwrap_or_default();
    assert!(
        error.contains("total.txt holds the expression \"1 + 2\", not its value"),
        "{error}"
    );
}

#[tokio::test]
async fn a_task_asking_to_edit_a_missing_file_fails_before_planning() {
    let ws = MemoryWorkspace::with(&[("other.md", "x\n")]);
    let h = run_in(&ws, "Fix the typo in notes.md", vec![], base_config()).await;
    assert_eq!(h.outcome.status, RunStatus::Failed);
    let error = h.outcome.error.clone().unwrap_or_default();
    assert_eq!(
        error,
        "the task asks to change notes.md, which is not in the workspace (the workspace \
         holds: other.md)"
    );
    assert!(h.llm.requests().is_empty(), "no LLM call");
    assert!(
        h.outcome.summary.contains("Nothing was done"),
        "{}",
        h.outcome.summary
    );
    let names: Vec<&str> = h.events().iter().map(EventKind::name).collect();
    assert_eq!(names, ["run_started", "run_failed"]);
}

/// Answers every question with the same words.
struct Says(&'static str);

#[async_trait]
impl UserChannel for Says {
    async fn notify(&self, _run_id: &str, _text: &str) {}
    async fn ask(&self, _run_id: &str, _question: &str) -> Result<String, AskUserError> {
        Ok(self.0.into())
    }
}

/// The eval's `ask_days` run never asked and wrote 30 days: a task that says to ask the
/// user is not done before a question was asked.
#[tokio::test]
async fn a_task_that_says_ask_me_is_not_done_without_asking() {
    let ws = MemoryWorkspace::new();
    let task = "Ask me how many days my trip lasts. Then write one line per day into days.txt";
    let h = run_as(
        &ws,
        task,
        vec![
            create_plan(&["Write the days"]),
            write("days.txt", "Day 1\nDay 2\n"),
            done("wrote days.txt"),
            // Refused in the loop: the question is the next call, in the same attempt.
            call("message_ask_user", json!({"question": "How many days?"})),
            write("days.txt", "Day 1\nDay 2\nDay 3\nDay 4\n"),
            done("wrote days.txt"),
            text("Done."),
        ],
        base_config(),
        Arc::new(Says("4")),
    )
    .await;
    assert_eq!(
        h.outcome.status,
        RunStatus::Completed,
        "{:?}",
        h.outcome.error
    );
    let refused = h
        .events()
        .into_iter()
        .find_map(|e| match e {
            EventKind::Nudge { reason, .. } => Some(reason),
            _ => None,
        })
        .unwrap_or_default();
    assert!(
        refused.starts_with("completion refused: the task says to ask the user"),
        "{refused}"
    );
    assert_eq!(
        h.llm.requests()[3].tool_choice,
        ToolChoice::Function("message_ask_user".into())
    );
    assert_eq!(
        ws.read("days.txt").as_deref(),
        Some("Day 1\nDay 2\nDay 3\nDay 4\n")
    );
}

/// The eval's 0.5B `ask_user` was told "Lisbon" and wrote a city of its own: an output of a
/// task that says to write the user's answer must hold it.
#[tokio::test]
async fn an_output_meant_to_hold_the_answer_must_hold_it() {
    let ws = MemoryWorkspace::new();
    let h = run_as(
        &ws,
        "Ask me which city I live in, then write my answer into city.txt.",
        vec![
            create_plan(&["Ask and write"]),
            call("message_ask_user", json!({"question": "Which city?"})),
            write("city.txt", "I live in New York City."),
            done("wrote city.txt"),
            write("city.txt", "Lisbon"),
            done("wrote city.txt"),
            text("Done."),
        ],
        base_config(),
        Arc::new(Says("Lisbon")),
    )
    .await;
    assert_eq!(
        h.outcome.status,
        RunStatus::Completed,
        "{:?}",
        h.outcome.error
    );
    let refusal = format!("{:?}", h.llm.requests()[4].messages.last());
    assert!(
        refusal.contains("city.txt does not hold the user's answer (\\\"Lisbon\\\")"),
        "{refusal}"
    );
    assert_eq!(ws.read("city.txt").as_deref(), Some("Lisbon"));
}

/// The eval's 1.5B `ask_days` (round 4) wrote days.txt, was made to ask (4 days), and
/// claimed success with what it had written before the answer.
#[tokio::test]
async fn an_output_written_before_the_answer_is_written_again() {
    let ws = MemoryWorkspace::new();
    let task = "Ask me how many days my trip lasts. Then write one line per day into days.txt";
    let h = run_as(
        &ws,
        task,
        vec![
            create_plan(&["Write the days"]),
            write("days.txt", "Day 1\nDay 2\n"),
            done("wrote days.txt"),
            call("message_ask_user", json!({"question": "How many days?"})),
            done("wrote days.txt"),
            write("days.txt", "Day 1\nDay 2\nDay 3\nDay 4\n"),
            done("wrote days.txt"),
            text("Done."),
        ],
        base_config(),
        Arc::new(Says("4")),
    )
    .await;
    assert_eq!(
        h.outcome.status,
        RunStatus::Completed,
        "{:?}",
        h.outcome.error
    );
    let requests = h.llm.requests();
    let refusal = format!("{:?}", requests[5].messages.last());
    assert!(
        refusal.contains("days.txt was written before the user answered (\\\"4\\\")"),
        "{refusal}"
    );
    assert_eq!(
        requests[5].tool_choice,
        ToolChoice::Function("file_write".into())
    );
    assert_eq!(
        ws.read("days.txt").as_deref(),
        Some("Day 1\nDay 2\nDay 3\nDay 4\n")
    );
}

/// Approves every call it is asked about.
struct ApprovesAll;

#[async_trait]
impl UserChannel for ApprovesAll {
    async fn notify(&self, _run_id: &str, _text: &str) {}
    async fn ask(&self, _run_id: &str, _question: &str) -> Result<String, AskUserError> {
        Err(AskUserError::Unavailable("no questions here".into()))
    }
    async fn approve(
        &self,
        _run_id: &str,
        _request: &ApprovalRequest,
    ) -> Result<ApprovalDecision, AskUserError> {
        Ok(ApprovalDecision::Approve)
    }
}

#[tokio::test]
async fn under_ask_a_change_a_person_approved_stands_and_nobody_to_ask_refuses() {
    let ask = RunConfig {
        approvals: ApprovalPolicy {
            mode: ApprovalMode::Ask,
            ..ApprovalPolicy::default()
        },
        ..base_config()
    };
    let script = || {
        vec![
            create_plan(&["Compute the total"]),
            write("data.txt", "total: 3\n"),
            shell("echo 3 > total.txt"),
            done("total.txt holds 3"),
            text("Wrote the total."),
        ]
    };
    let ws = MemoryWorkspace::with(&[("data.txt", "1\n2\n")]);
    let h = run_as(&ws, SUM_TASK, script(), ask.clone(), Arc::new(ApprovesAll)).await;
    assert_eq!(
        h.outcome.status,
        RunStatus::Completed,
        "{:?}",
        h.outcome.error
    );
    assert_eq!(
        ws.read("data.txt").as_deref(),
        Some("total: 3\n"),
        "the person said yes"
    );
    assert_eq!(h.outcome.files.changed, ["data.txt"]);
    assert!(h.protected().is_empty());

    // Nobody can answer: the write is refused by the approval gate, the input kept.
    let ws = MemoryWorkspace::with(&[("data.txt", "1\n2\n")]);
    let h = run_as(&ws, SUM_TASK, script(), ask, Arc::new(crate::ports::NoUser)).await;
    assert_eq!(ws.read("data.txt").as_deref(), Some("1\n2\n"));
    assert!(!h.outputs()[0].0, "{:?}", h.outputs());
}

#[tokio::test]
async fn a_resumed_run_reloads_its_inputs_and_undoes_what_an_interrupted_call_changed() {
    use crate::model::event::Event;
    use crate::model::inputs::{Permit, RecordedInput};
    use crate::ports::{RunStore, WorkspaceFiles};
    use crate::testing::runs::run_record;
    use std::path::Path;

    let ws = MemoryWorkspace::with(&[("data.txt", "1\n2\n")]);
    let at = Path::new("/tmp/ws");
    let digest = ws.keep_copy(RUN_ID, at, "data.txt").await.expect("copy");
    let facts = ws.stat(at, "data.txt").await.expect("stat").expect("facts");
    // The call that was running when the process died had overwritten it.
    ws.write("data.txt", "oops\n");
    let store = Arc::new(MemoryStore::new());
    store.create_run(&run_record(RUN_ID)).await.expect("create");
    let logged = |seq: u64, kind: EventKind| Event {
        run_id: RUN_ID.into(),
        seq,
        at: chrono::Utc::now(),
        kind,
    };
    for event in [
        logged(
            1,
            EventKind::RunStarted {
                task: "make a file".into(),
                mode: "flow".into(),
                workspace: "/tmp/ws".into(),
            },
        ),
        logged(
            2,
            EventKind::InputsRecorded {
                inputs: vec![RecordedInput {
                    path: "data.txt".into(),
                    size: facts.size,
                    modified_ns: facts.modified_ns,
                    mode: facts.mode,
                    digest: Some(digest),
                    copied: true,
                    permit: Permit::Read,
                }],
                outputs: vec![],
                truncated: false,
            },
        ),
    ] {
        store.append_event(&event).await.expect("append");
    }
    let llm = Arc::new(ScriptedLlm::new(vec![
        create_plan(&["Make it"]),
        shell("echo made"),
        done("made it"),
        text("Done."),
    ]));
    let mut rt = runtime(llm, Arc::new(ws.toolbox()), store.clone(), base_config());
    rt.workspace_files = Some(Arc::new(ws.clone()));
    let outcome = rt
        .resume(RUN_ID, CancellationToken::new())
        .await
        .expect("resumes");
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    assert_eq!(ws.read("data.txt").as_deref(), Some("1\n2\n"));
    assert_eq!(outcome.files.restored, ["data.txt"]);
    let protected: Vec<InputAction> = store
        .events_of(RUN_ID)
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::InputProtected { action, .. } => Some(action),
            _ => None,
        })
        .collect();
    assert_eq!(protected, [InputAction::Restored]);
}
