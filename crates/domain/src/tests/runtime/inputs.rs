//! Protected inputs (docs/security.md, "Input files"), over the in-memory workspace: a call
//! may change the existing files it names in `changes` (a file tool, the `path` it writes),
//! a program (`code_run`) those it changes; a change nobody named is undone and the model
//! told; `--protect` refuses outright; the
//! outcome lists the files from the workspace. No rule reads the task's words: the same
//! run passes whatever language the task is written in.

use std::sync::Arc;

use async_trait::async_trait;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::engine::config::RunConfig;
use crate::engine::runtime::RunOutcome;
use crate::model::approval::{ApprovalDecision, ApprovalMode, ApprovalPolicy};
use crate::model::event::EventKind;
use crate::model::inputs::{InputAction, MovedFile};
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

/// Runs `task` with answers checked off (this file is about the inputs; verification.rs
/// checks the answers).
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
    let config = RunConfig {
        verification: false,
        ..config
    };
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

/// A `shell_exec` that names the existing files it changes.
fn shell_changing(command: &str, changes: &[&str]) -> Reply {
    call(
        "shell_exec",
        json!({ "command": command, "changes": changes }),
    )
}

/// A program that names the existing files it changes.
fn program(code: &str, changes: &[&str]) -> Reply {
    call(
        "code_run",
        json!({ "language": "bash", "code": code, "changes": changes }),
    )
}

fn write(path: &str, content: &str) -> Reply {
    call("file_write", json!({ "path": path, "content": content }))
}

const SUM_TASK: &str = "Sum the numbers in data.txt and write the total to total.txt";

#[tokio::test]
async fn a_change_nobody_named_is_undone_and_the_model_told() {
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
            .starts_with("Undone: this call changed data.txt, which existed before the run")
            && outputs[0].1.contains("with it in `changes`"),
        "{outputs:?}"
    );
    // The model read it in its next turn.
    let seen = format!("{:?}", h.llm.requests()[2].messages);
    assert!(seen.contains("without naming it in `changes`"), "{seen}");
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
async fn deleting_or_moving_an_input_away_unnamed_is_undone_too() {
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
    assert_eq!(h.outcome.status, RunStatus::Completed);
    assert_eq!(ws.read("data.txt").as_deref(), Some("1\n2\n"));
    let outputs = h.outputs();
    assert!(!outputs[0].0 && !outputs[1].0, "{outputs:?}");
    assert_eq!(h.protected().len(), 2);
    assert!(h.outcome.files.deleted.is_empty(), "{:?}", h.outcome.files);
}

/// A program names nothing before it runs: its changes to existing files stand (the check
/// of the answer arbitrates), are listed in the outcome and can be undone; a file
/// `--protect` names is still put back.
#[tokio::test]
async fn a_programs_changes_to_existing_files_stand_and_are_listed() {
    let ws = MemoryWorkspace::with(&[("data.txt", "1\n2\n"), ("app.lock", "v1\n")]);
    let h = run_in(
        &ws,
        "Sort data.txt in place",
        vec![
            create_plan(&["Sort it"]),
            call(
                "code_run",
                json!({"language": "bash", "code": "echo sorted > data.txt\necho v2 > app.lock"}),
            ),
            done("data.txt is sorted"),
            text("Sorted."),
        ],
        RunConfig {
            protect: vec!["app.lock".into()],
            ..base_config()
        },
    )
    .await;
    assert_eq!(h.outcome.status, RunStatus::Completed);
    assert_eq!(ws.read("data.txt").as_deref(), Some("sorted\n"));
    assert_eq!(ws.read("app.lock").as_deref(), Some("v1\n"));
    assert_eq!(h.outcome.files.changed, ["data.txt"]);
    assert_eq!(
        h.protected(),
        [("app.lock".to_string(), InputAction::Restored)]
    );
}

/// Whatever the task's language, a change the call names stands: the task's words are
/// never read.
#[tokio::test]
async fn a_named_change_stands_in_any_language() {
    for task in [
        "Fix the typo in notes.md",
        "Corrige la faute de frappe dans notes.md",
        "修正 notes.md 里的拼写错误",
    ] {
        let ws = MemoryWorkspace::with(&[("notes.md", "helo world\n"), ("data.txt", "1\n")]);
        let h = run_in(
            &ws,
            task,
            vec![
                create_plan(&["Fix the typo"]),
                shell_changing("echo hello world > notes.md", &["notes.md"]),
                shell("echo x > data.txt"),
                done("fixed notes.md"),
                text("Fixed."),
            ],
            base_config(),
        )
        .await;
        assert_eq!(h.outcome.status, RunStatus::Completed, "{task}");
        assert_eq!(
            ws.read("notes.md").as_deref(),
            Some("hello world\n"),
            "{task}"
        );
        assert_eq!(
            ws.read("data.txt").as_deref(),
            Some("1\n"),
            "not named: undone"
        );
        assert_eq!(h.outcome.files.changed, ["notes.md"]);
        assert_eq!(h.outcome.files.restored, ["data.txt"]);
        assert_eq!(
            h.protected(),
            [
                ("notes.md".to_string(), InputAction::Declared),
                ("data.txt".to_string(), InputAction::Restored)
            ]
        );
    }
}

/// A file tool names the file it writes: that is its declaration.
#[tokio::test]
async fn a_file_tool_may_change_the_file_it_names() {
    let ws = MemoryWorkspace::with(&[("notes.md", "helo world\n")]);
    let h = run_in(
        &ws,
        "Fix the typo in notes.md",
        vec![
            create_plan(&["Fix the typo"]),
            call(
                "file_str_replace",
                json!({"path": "./notes.md", "old": "helo", "new": "hello"}),
            ),
            done("fixed notes.md"),
            text("Fixed."),
        ],
        base_config(),
    )
    .await;
    assert_eq!(h.outcome.status, RunStatus::Completed);
    assert_eq!(ws.read("notes.md").as_deref(), Some("hello world\n"));
    assert_eq!(h.outcome.files.changed, ["notes.md"]);
}

/// A rename the program names is reported as a move: the content is found again.
#[tokio::test]
async fn a_named_rename_is_reported_as_a_move() {
    let ws = MemoryWorkspace::with(&[("a.txt", "keep me\n")]);
    let h = run_in(
        &ws,
        "Rename a.txt to b.txt without changing it",
        vec![
            create_plan(&["Rename the file"]),
            program("mv a.txt b.txt", &["a.txt"]),
            done("renamed a.txt to b.txt"),
            text("Renamed."),
        ],
        base_config(),
    )
    .await;
    assert_eq!(h.outcome.status, RunStatus::Completed);
    assert_eq!(ws.read("a.txt"), None);
    assert_eq!(ws.read("b.txt").as_deref(), Some("keep me\n"));
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
async fn protect_refuses_a_named_change_and_undoes_an_unnamed_one() {
    let ws = MemoryWorkspace::with(&[("app.lock", "v1\n"), ("notes.md", "a\n")]);
    let h = run_in(
        &ws,
        "Update the notes",
        vec![
            create_plan(&["Update the notes"]),
            write("app.lock", "v2\n"),
            shell("echo v3 > app.lock"),
            write("notes.md", "b\n"),
            done("updated"),
            text("Done."),
        ],
        RunConfig {
            protect: vec!["*.lock".into()],
            allow_input_edits: true,
            ..base_config()
        },
    )
    .await;
    assert_eq!(h.outcome.status, RunStatus::Completed);
    assert_eq!(ws.read("app.lock").as_deref(), Some("v1\n"));
    assert_eq!(ws.read("notes.md").as_deref(), Some("b\n"), "allowed edits");
    let outputs = h.outputs();
    assert!(
        !outputs[0].0
            && outputs[0]
                .1
                .starts_with("Refused: app.lock is protected (--protect)"),
        "{outputs:?}"
    );
    assert!(
        !outputs[1].0 && outputs[1].1.contains("app.lock is protected"),
        "{outputs:?}"
    );
    let started = h
        .events()
        .iter()
        .filter(|e| matches!(e, EventKind::ToolCalling { .. }))
        .count();
    assert_eq!(started, 2, "the refused write never started");
    assert_eq!(
        h.protected(),
        [
            ("app.lock".to_string(), InputAction::Refused),
            ("app.lock".to_string(), InputAction::Restored)
        ]
    );
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

/// A user who approves everything, and whom nobody can ask questions.
struct Approves;

#[async_trait]
impl UserChannel for Approves {
    async fn notify(&self, _run_id: &str, _text: &str) {}
    async fn ask(&self, _run_id: &str, _question: &str) -> Result<String, AskUserError> {
        Err(AskUserError::Unavailable("no terminal".into()))
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
async fn under_ask_a_change_a_person_approved_stands() {
    let ws = MemoryWorkspace::with(&[("data.txt", "1\n2\n")]);
    let h = run_as(
        &ws,
        SUM_TASK,
        vec![
            create_plan(&["Compute the total"]),
            shell("echo 3 > data.txt"),
            done("changed"),
            text("Done."),
        ],
        RunConfig {
            approvals: ApprovalPolicy {
                mode: ApprovalMode::Ask,
                ..ApprovalPolicy::default()
            },
            ..base_config()
        },
        Arc::new(Approves),
    )
    .await;
    assert_eq!(h.outcome.status, RunStatus::Completed);
    assert_eq!(
        ws.read("data.txt").as_deref(),
        Some("3\n"),
        "approved: stands"
    );
    assert_eq!(h.outcome.files.changed, ["data.txt"]);
}

/// A resumed run reloads its inputs and what its calls named before it stopped: an
/// interrupted call's unnamed change is undone, a named one stands.
#[tokio::test]
async fn a_resumed_run_reloads_its_inputs_and_what_was_named() {
    use crate::model::event::Event;
    use crate::model::inputs::{Permit, RecordedInput};
    use crate::ports::{RunStore, WorkspaceFiles};
    use crate::testing::runs::run_record;
    use std::path::Path;

    let ws = MemoryWorkspace::with(&[("data.txt", "1\n2\n"), ("notes.md", "a\n")]);
    let at = Path::new("/tmp/ws");
    let mut recorded = Vec::new();
    for path in ["data.txt", "notes.md"] {
        let digest = ws.keep_copy(RUN_ID, at, path).await.expect("copy");
        let facts = ws.stat(at, path).await.expect("stat").expect("facts");
        recorded.push(RecordedInput {
            path: path.into(),
            size: facts.size,
            modified_ns: facts.modified_ns,
            mode: facts.mode,
            digest: Some(digest),
            copied: true,
            permit: Permit::Read,
        });
    }
    // The call that was running when the process died had named notes.md, and overwritten
    // both files.
    ws.write("data.txt", "oops\n");
    ws.write("notes.md", "b\n");
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
                inputs: recorded,
                outputs: vec![],
                truncated: false,
            },
        ),
        logged(
            3,
            EventKind::InputProtected {
                step_id: Some("s1".into()),
                tool: "shell_exec".into(),
                path: "notes.md".into(),
                action: InputAction::Declared,
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
    let config = RunConfig {
        verification: false,
        ..base_config()
    };
    let mut rt = runtime(llm, Arc::new(ws.toolbox()), store.clone(), config);
    rt.workspace_files = Some(Arc::new(ws.clone()));
    let outcome = rt
        .resume(RUN_ID, CancellationToken::new())
        .await
        .expect("resumes");
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    assert_eq!(ws.read("data.txt").as_deref(), Some("1\n2\n"));
    assert_eq!(
        ws.read("notes.md").as_deref(),
        Some("b\n"),
        "named before: stands"
    );
    assert_eq!(outcome.files.restored, ["data.txt"]);
    assert_eq!(outcome.files.changed, ["notes.md"]);
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
        !outputs[0].0
            && outputs[0]
                .1
                .starts_with("Undone: this call changed data.txt"),
        "{outputs:?}"
    );
    assert_eq!(
        h.protected(),
        [("data.txt".to_string(), InputAction::Restored)]
    );
}
