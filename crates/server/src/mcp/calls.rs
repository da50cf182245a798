//! One `tools/call`: the arguments read, the `RunService` operation called, its answer (or
//! its error, as an `isError` result with a clear text) returned as JSON.

use domain::model::approval::ApprovalDecision;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use runner::telemetry::context::CallerTrace;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use super::super::error::ApiError;
use super::super::runs;
use super::super::State;
use super::resources;
use super::tools::{
    self, AnswerArgs, ApproveCallArgs, GetRunArgs, NoArgs, RunDiffArgs, RunIdArgs, RunTaskArgs,
    UndoRunArgs,
};
use super::wait::{self, ProgressTarget};
use runner::service::Caller;
use runner::service::{Cancelled, NewRun, RunServiceError, UndoRequest};

/// Why a call could not be made; shown to the calling model as the tool's error text.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error("invalid arguments for {tool}: {reason}")]
    Arguments { tool: String, reason: String },
    #[error("{0}")]
    Run(#[from] ApiError),
    /// A run operation's failure, as the tool's error text (the MCP service's mapping of
    /// `runner::service::RunServiceError`).
    #[error("{0}")]
    Service(#[from] RunServiceError),
}

/// Calls the tool `name` (one of [`tools::all`]; the caller checked) with `arguments`.
pub async fn call(
    state: &State,
    client: &Caller,
    name: &str,
    arguments: Option<JsonObject>,
    context: &RequestContext<RoleServer>,
) -> CallToolResult {
    match dispatch(state, client, name, arguments, context).await {
        Ok(value) => {
            let text = serde_json::to_string_pretty(&value).unwrap_or_default();
            let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
            result.structured_content = Some(value);
            result
        }
        Err(e) => CallToolResult::error(vec![ContentBlock::text(e.to_string())]),
    }
}

async fn dispatch(
    state: &State,
    client: &Caller,
    name: &str,
    arguments: Option<JsonObject>,
    context: &RequestContext<RoleServer>,
) -> Result<Value, CallError> {
    match name {
        tools::RUN_TASK => {
            let args: RunTaskArgs = parse(name, arguments)?;
            let queued = state
                .service
                .queue(
                    client,
                    NewRun {
                        task: args.task,
                        mode: args.mode,
                        model: None,
                        trace: caller_trace(context),
                    },
                )
                .await?;
            if !args.wait {
                return Ok(json!({
                    "run_id": queued.run_id,
                    "status": if queued.position.is_some() { "queued" } else { "running" },
                    "position": queued.position,
                    "next": "call get_run with this run_id (wait: true to wait for its end)",
                }));
            }
            Ok(settled(state, client, &queued.run_id, context).await?)
        }
        tools::GET_RUN => {
            let args: GetRunArgs = parse(name, arguments)?;
            if args.wait {
                return Ok(settled(state, client, &args.run_id, context).await?);
            }
            Ok(view(
                runs::show(&*state.service, client, &args.run_id).await?,
            ))
        }
        tools::LIST_RUNS => {
            let _: NoArgs = parse(name, arguments)?;
            Ok(json!({"runs": state.service.list(client).await?}))
        }
        tools::CANCEL_RUN => {
            let args: RunIdArgs = parse(name, arguments)?;
            let status = match state.service.cancel(client, &args.run_id).await? {
                Cancelled::WhileQueued => "cancelled",
                Cancelled::Cancelling => "cancelling",
            };
            Ok(json!({"run_id": args.run_id, "status": status}))
        }
        tools::ANSWER => {
            let args: AnswerArgs = parse(name, arguments)?;
            state
                .service
                .answer(client, &args.run_id, args.text)
                .await?;
            Ok(json!({
                "run_id": args.run_id,
                "delivered": true,
                "next": "call get_run with wait: true to follow the run to its end",
            }))
        }
        tools::APPROVE_CALL => {
            let args: ApproveCallArgs = parse(name, arguments)?;
            let decision: ApprovalDecision =
                args.decision
                    .parse()
                    .map_err(|reason| CallError::Arguments {
                        tool: name.to_string(),
                        reason,
                    })?;
            state
                .service
                .decide(client, &args.run_id, &args.call_id, decision)
                .await?;
            Ok(json!({
                "run_id": args.run_id,
                "call_id": args.call_id,
                "decision": decision,
                "next": "call get_run with wait: true to follow the run to its end",
            }))
        }
        tools::RUN_DIFF => {
            let args: RunDiffArgs = parse(name, arguments)?;
            let step = step_index(name, "step", args.step)?;
            let diff = state.service.diff(client, &args.run_id, step).await?;
            // `step` as the caller numbered it (from 1, as get_run lists the steps).
            Ok(runner::json::diff_json(&args.run_id, args.step, &diff))
        }
        tools::UNDO_RUN => {
            let args: UndoRunArgs = parse(name, arguments)?;
            if args.to_step.is_some() && args.checkpoint.is_some() {
                return Err(CallError::Arguments {
                    tool: name.to_string(),
                    reason: "give to_step or checkpoint, not both".into(),
                });
            }
            let request = UndoRequest {
                to_step: step_index(name, "to_step", args.to_step)?,
                checkpoint: args.checkpoint,
                force: args.force,
            };
            let restored = state.service.undo(client, &args.run_id, request).await?;
            Ok(runner::json::undo_json(&args.run_id, &restored))
        }
        other => Err(CallError::Arguments {
            tool: other.to_string(),
            reason: "no such tool".into(),
        }),
    }
}

/// A step numbered from 1 (as `get_run`'s plan lists it) as the plan's index (from 0).
fn step_index(tool: &str, field: &str, step: Option<u32>) -> Result<Option<u32>, CallError> {
    match step {
        None => Ok(None),
        Some(0) => Err(CallError::Arguments {
            tool: tool.to_string(),
            reason: format!("{field} counts from 1, as get_run's plan lists the steps"),
        }),
        Some(n) => Ok(Some(n - 1)),
    }
}

/// Reads `arguments` as `T`, absent arguments as `{}`.
fn parse<T: DeserializeOwned>(tool: &str, arguments: Option<JsonObject>) -> Result<T, CallError> {
    serde_json::from_value(Value::Object(arguments.unwrap_or_default())).map_err(|e| {
        CallError::Arguments {
            tool: tool.to_string(),
            reason: e.to_string(),
        }
    })
}

/// Waits for the run to settle, with progress notifications when the client asked for them.
async fn settled(
    state: &State,
    client: &Caller,
    run_id: &str,
    context: &RequestContext<RoleServer>,
) -> Result<Value, ApiError> {
    let progress = context
        .meta
        .get_progress_token()
        .map(|token| ProgressTarget {
            peer: context.peer.clone(),
            token,
        });
    let shown = wait::until_settled(state, client, run_id, &context.ct, progress).await?;
    Ok(view(shown))
}

/// A run as an agent wants it: status, plan with a marker per step, summary, files (with
/// their resource URIs), what it waits on; not its tool calls or token counts.
fn view(shown: Value) -> Value {
    let run_id = shown["run_id"].as_str().unwrap_or_default().to_string();
    let files: Vec<Value> = shown["files"]
        .as_array()
        .map(|files| {
            files
                .iter()
                .map(|f| {
                    let path = f["path"].as_str().unwrap_or_default();
                    // Exact for a name that is not UTF-8 (`path` is shown lossily).
                    let uri = match f["path_encoded"].as_str() {
                        Some(encoded) => resources::encoded_uri(&run_id, encoded),
                        None => resources::uri(&run_id, path),
                    };
                    json!({"path": path, "bytes": f["bytes"], "uri": uri})
                })
                .collect()
        })
        .unwrap_or_default();
    let mut out = json!({
        "run_id": run_id,
        "status": shown["status"],
        "task": shown["task"],
        "mode": shown["mode"],
        "plan": plan_text(&shown["plan"]),
        "summary": shown["summary"],
        "error": shown["error"],
        "files": files,
        "files_truncated": shown["files_truncated"],
        "pending_question": shown["pending_question"],
        "pending_approval": shown["pending_approval"],
        "pending_approval_request": shown["pending_approval_request"],
    });
    if let Some(position) = shown.get("position") {
        out["position"] = position.clone();
    }
    out
}

/// The plan as lines `[✓] 1. Write the file`, under its title.
fn plan_text(plan: &Value) -> Value {
    let Some(steps) = plan["steps"].as_array() else {
        return Value::Null;
    };
    let mut lines = vec![plan["title"].as_str().unwrap_or("Plan").to_string()];
    for (i, step) in steps.iter().enumerate() {
        let marker =
            serde_json::from_value::<domain::model::status::StepStatus>(step["status"].clone())
                .map(|s| s.marker())
                .unwrap_or("[?]");
        let mut line = format!(
            "{marker} {}. {}",
            i + 1,
            step["description"].as_str().unwrap_or_default()
        );
        if let Some(result) = step["result"].as_str().or(step["error"].as_str()) {
            line.push_str(&format!(
                " → {}",
                domain::prompts::truncate_chars(result, 200)
            ));
        }
        lines.push(line);
    }
    Value::String(lines.join("\n"))
}

/// The caller's trace context: the call's own `params._meta` `traceparent` and `tracestate`
/// (MCP's convention, SEP-414; on stdio and HTTP alike), else the headers of the HTTP
/// request carrying the call (`/mcp`, streamable HTTP). A malformed one is one warning and
/// the run starts a new trace (docs/observability.md, "Across processes").
fn caller_trace(context: &RequestContext<RoleServer>) -> Option<CallerTrace> {
    let meta = &context.meta;
    let found = match meta.get_traceparent() {
        Some(traceparent) => CallerTrace::from_headers(Some(traceparent), meta.get_tracestate()),
        None => {
            let parts = context.extensions.get::<axum::http::request::Parts>()?;
            let header = |name: &str| parts.headers.get(name).and_then(|v| v.to_str().ok());
            CallerTrace::from_headers(header("traceparent"), header("tracestate"))
        }
    };
    found.unwrap_or_else(|e| {
        tracing::warn!("{e}");
        None
    })
}
