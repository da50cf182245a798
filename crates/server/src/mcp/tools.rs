//! The tools Planwright offers as an MCP server: their names, descriptions (read by another
//! agent's model: they say when to use each) and JSON schemas, and the arguments each takes.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde::Deserialize;
use serde_json::{json, Value};

use domain::model::names::Named;
use domain::Mode;

pub const RUN_TASK: &str = "run_task";
pub const GET_RUN: &str = "get_run";
pub const LIST_RUNS: &str = "list_runs";
pub const CANCEL_RUN: &str = "cancel_run";
pub const ANSWER: &str = "answer";
pub const APPROVE_CALL: &str = "approve_call";
pub const RUN_DIFF: &str = "run_diff";
pub const UNDO_RUN: &str = "undo_run";

/// `run_task`'s arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunTaskArgs {
    pub task: String,
    #[serde(default)]
    pub mode: Option<String>,
    #[serde(default)]
    pub wait: bool,
}

/// `get_run`'s arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GetRunArgs {
    pub run_id: String,
    #[serde(default)]
    pub wait: bool,
}

/// `cancel_run`'s arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunIdArgs {
    pub run_id: String,
}

/// `answer`'s arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnswerArgs {
    pub run_id: String,
    pub text: String,
}

/// `approve_call`'s arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApproveCallArgs {
    pub run_id: String,
    pub call_id: String,
    pub decision: String,
}

/// `run_diff`'s arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunDiffArgs {
    pub run_id: String,
    /// The step's number as get_run's plan lists it (from 1).
    #[serde(default)]
    pub step: Option<u32>,
}

/// `undo_run`'s arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UndoRunArgs {
    pub run_id: String,
    /// Back to before this step, numbered as get_run's plan lists it (from 1).
    #[serde(default)]
    pub to_step: Option<u32>,
    /// Back to this checkpoint: an earlier undo's `undo_checkpoint`, to undo it.
    #[serde(default)]
    pub checkpoint: Option<String>,
    #[serde(default)]
    pub force: bool,
}

/// `list_runs` takes nothing.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

const RUN_TASK_DOC: &str = "Hand a multi-step task to Planwright, an autonomous agent that \
plans the task into steps and carries them out with shell and file tools in a fresh workspace \
of its own (one per run), checking and re-planning as it goes. Use it for long or \
self-contained work (write and test a script, produce a report file, research and summarise) \
that you would rather delegate than do call by call. Describe the whole goal and the files \
you expect in `task`: Planwright does not see your conversation or your files. Returns the \
run id at once; with `wait: true` the call returns only when the run ends (progress \
notifications report the steps done, when you send a progressToken), with its status, \
summary and the files it produced (readable as resources \
planwright://runs/{run_id}/files/{path}). If the run stops to ask a question, the call \
returns with status `waiting` and the question: reply with `answer`, then follow it with \
`get_run` and `wait: true`.";

const GET_RUN_DOC: &str = "The state of one Planwright run: status (queued, running, \
waiting, completed, failed, cancelled, interrupted), its plan with a marker per step \
([ ] not started, [→] in progress, [✓] completed, [✗] failed, [!] blocked, [-] skipped), the \
summary once it ended, the files of its workspace, and the question or tool-call approval \
it is waiting on. With `wait: true` the call returns only when the run ended or waits for \
an answer (with progress notifications like run_task).";

const LIST_RUNS_DOC: &str = "Every Planwright run this server knows, newest first: run id, \
status, task, mode, creation time. Use it to find a run id again.";

const CANCEL_RUN_DOC: &str = "Cancel a queued or running Planwright run: a queued run never \
starts; a running one stops at its next safe point (the call under way finishes) and ends \
`failed` with the error \"the run was cancelled\". Fails on a run that already ended.";

const ANSWER_DOC: &str = "Answer the question a Planwright run asked (its status is \
`waiting` and `pending_question` holds the question, as run_task and get_run show). The \
run goes on with `text` as the user's answer. Fails when the run is not waiting for an \
answer.";

const APPROVE_CALL_DOC: &str = "Decide on a tool call a Planwright run waits to have \
approved (when it runs with `--approval ask`: shell commands and file writes wait for a \
person). run_task and get_run show it as status `waiting` with `pending_approval` (the call \
id) and `pending_approval_request` (the tool and its arguments). `approve` lets this call \
run, `deny` refuses it (the run goes on, told why), `always` approves it and every later \
call to the same tool in this run. Ask your user when in doubt.";

const RUN_DIFF_DOC: &str = "What a Planwright run changed in its workspace, read from the \
checkpoints taken before each step and when the run ended (not from what the run said): \
each created, modified or deleted file with a unified diff for text (`content.unified`), \
sizes for binary, too large or unkept ones. With `step`, only what that step changed \
(numbered as get_run's plan lists it, from 1).";

const UNDO_RUN_DOC: &str = "Put a Planwright run's workspace back as it was before the run \
(or before step `to_step`, numbered as get_run's plan lists it, from 1). Only the files the \
run changed are put back. Fails on a queued, running or waiting run (cancel it first) and, \
naming them, when files the run changed were changed again after it ended; `force: true` \
overwrites them. The answer's `undo_checkpoint` undoes this undo when passed back as \
`checkpoint`. Ask your user before undoing: it rewrites and deletes files.";

fn schema(v: Value) -> Arc<JsonObject> {
    match v {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

fn run_id_property() -> Value {
    json!({"type": "string", "description": "The run's id, as run_task or list_runs gave it (run_...)."})
}

fn wait_property(what: &str) -> Value {
    json!({"type": "boolean", "default": false, "description": what})
}

/// The tools, as `tools/list` lists them.
pub fn all() -> Vec<Tool> {
    let annotated = |name: &'static str,
                     title: &str,
                     doc: &'static str,
                     input: Value,
                     read_only: bool,
                     destructive: bool| {
        let mut annotations = ToolAnnotations::default();
        annotations.title = Some(title.to_string());
        annotations.read_only_hint = Some(read_only);
        annotations.destructive_hint = Some(destructive);
        annotations.open_world_hint = Some(name == RUN_TASK);
        let mut tool = Tool::default();
        tool.name = name.into();
        tool.title = Some(title.to_string());
        tool.description = Some(doc.into());
        tool.input_schema = schema(input);
        tool.annotations = Some(annotations);
        tool
    };
    vec![
        annotated(
            RUN_TASK,
            "Run a task with Planwright",
            RUN_TASK_DOC,
            json!({
                "type": "object",
                "properties": {
                    "task": {"type": "string", "minLength": 1, "description": "The whole task in plain words: the goal, the constraints, the files to produce."},
                    "mode": {"type": "string", "enum": Mode::names(), "description": "Planning style; the server's default (usually auto: direct for small tasks, else a plan) when left out."},
                    "wait": wait_property("Return only when the run ends (or waits for an answer), with its summary and files; otherwise return the run id at once."),
                },
                "required": ["task"],
                "additionalProperties": false,
            }),
            false,
            false,
        ),
        annotated(
            GET_RUN,
            "Show a Planwright run",
            GET_RUN_DOC,
            json!({
                "type": "object",
                "properties": {
                    "run_id": run_id_property(),
                    "wait": wait_property("Return only when the run ended or waits for an answer."),
                },
                "required": ["run_id"],
                "additionalProperties": false,
            }),
            true,
            false,
        ),
        annotated(
            LIST_RUNS,
            "List Planwright runs",
            LIST_RUNS_DOC,
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
            true,
            false,
        ),
        annotated(
            CANCEL_RUN,
            "Cancel a Planwright run",
            CANCEL_RUN_DOC,
            json!({
                "type": "object",
                "properties": {"run_id": run_id_property()},
                "required": ["run_id"],
                "additionalProperties": false,
            }),
            false,
            true,
        ),
        annotated(
            ANSWER,
            "Answer a Planwright run's question",
            ANSWER_DOC,
            json!({
                "type": "object",
                "properties": {
                    "run_id": run_id_property(),
                    "text": {"type": "string", "description": "The answer, as the user would give it."},
                },
                "required": ["run_id", "text"],
                "additionalProperties": false,
            }),
            false,
            false,
        ),
        annotated(
            APPROVE_CALL,
            "Approve or deny a Planwright run's tool call",
            APPROVE_CALL_DOC,
            json!({
                "type": "object",
                "properties": {
                    "run_id": run_id_property(),
                    "call_id": {"type": "string", "description": "The waiting call, as pending_approval names it."},
                    "decision": {"type": "string", "enum": ["approve", "deny", "always"]},
                },
                "required": ["run_id", "call_id", "decision"],
                "additionalProperties": false,
            }),
            false,
            false,
        ),
        annotated(
            RUN_DIFF,
            "Show what a Planwright run changed",
            RUN_DIFF_DOC,
            json!({
                "type": "object",
                "properties": {
                    "run_id": run_id_property(),
                    "step": {"type": "integer", "minimum": 1, "description": "Only this step's changes, numbered as get_run's plan lists it (from 1)."},
                },
                "required": ["run_id"],
                "additionalProperties": false,
            }),
            true,
            false,
        ),
        annotated(
            UNDO_RUN,
            "Undo what a Planwright run changed",
            UNDO_RUN_DOC,
            json!({
                "type": "object",
                "properties": {
                    "run_id": run_id_property(),
                    "to_step": {"type": "integer", "minimum": 1, "description": "Back to before this step, numbered as get_run's plan lists it (from 1); before the run when left out."},
                    "checkpoint": {"type": "string", "description": "An earlier undo's undo_checkpoint: restores it, undoing that undo."},
                    "force": {"type": "boolean", "default": false, "description": "Overwrite files changed after the run ended instead of failing."},
                },
                "required": ["run_id"],
                "additionalProperties": false,
            }),
            false,
            true,
        ),
    ]
}
