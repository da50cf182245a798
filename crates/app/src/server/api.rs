//! The JSON API under `/v1`.

use std::path::{Component, Path, PathBuf};

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Path as UrlPath, State as Ext};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use clap::ValueEnum;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Value};

use domain::model::approval::ApprovalDecision;
use domain::ports::{RunMessage, RunRecord, RunStatus};

use super::{auth, dispatch, sse, web, Phase, ReplyError, State};
use crate::cli::ModeArg;

/// Largest request body accepted.
pub const BODY_LIMIT: usize = 64 * 1024;
/// Most files listed for one run.
const MAX_FILES: usize = 1000;

/// An API failure: a status and `{"error": "..."}`.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{0}")]
    BadRequest(String),
    #[error("{0}")]
    Unauthorized(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    TooLarge(String),
    #[error("{0}")]
    Internal(String),
}

impl ApiError {
    fn status(&self) -> StatusCode {
        match self {
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let mut response = (status, Json(json!({"error": self.to_string()}))).into_response();
        if status == StatusCode::UNAUTHORIZED {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

fn store_error(e: domain::StoreError) -> ApiError {
    tracing::error!(error = %e, "store failure");
    ApiError::Internal(format!("the run store failed: {e}"))
}

/// Parses a JSON body with a clear message for each kind of mistake.
fn parse_body<T: DeserializeOwned>(body: Result<Bytes, BytesRejection>) -> Result<T, ApiError> {
    let bytes = body.map_err(|e| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::TooLarge(format!(
                "the request body is larger than {} KiB",
                BODY_LIMIT / 1024
            ))
        } else {
            ApiError::BadRequest(format!("cannot read the request body: {e}"))
        }
    })?;
    if bytes.is_empty() {
        return Err(ApiError::BadRequest(
            "the request body is empty; send a JSON object".into(),
        ));
    }
    serde_json::from_slice(&bytes)
        .map_err(|e| ApiError::BadRequest(format!("invalid JSON body: {e}")))
}

pub fn router(state: State) -> Router {
    let api = Router::new()
        .route("/runs", post(create_run).get(list_runs))
        .route("/runs/{id}", get(show_run))
        .route("/runs/{id}/events", get(sse::events))
        .route("/runs/{id}/cancel", post(cancel_run))
        .route("/runs/{id}/reply", post(reply))
        .route("/runs/{id}/approvals/{call_id}", post(decide))
        .route("/runs/{id}/files/{*path}", get(file))
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::require_token,
        ))
        .route("/health", get(health))
        .route("/openapi.json", get(web::openapi));
    Router::new()
        .nest("/v1", api)
        .merge(web::routes())
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .with_state(state)
}

async fn not_found() -> ApiError {
    ApiError::NotFound("no such route".into())
}

async fn health() -> Json<Value> {
    Json(json!({"status": "ok"}))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateRun {
    task: String,
    #[serde(default)]
    mode: Option<String>,
    #[serde(default)]
    model: Option<String>,
}

async fn create_run(
    Ext(state): Ext<State>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let req: CreateRun = parse_body(body)?;
    let task = req.task.trim().to_string();
    if task.is_empty() {
        return Err(ApiError::BadRequest("`task` is empty".into()));
    }
    let mut opts = state.opts.clone();
    if let Some(mode) = req.mode.as_deref().filter(|m| !m.trim().is_empty()) {
        opts.mode = ModeArg::from_str(mode.trim(), false).map_err(|_| {
            ApiError::BadRequest(format!(
                "unknown mode '{mode}' (available: flow, plan-act, todo, dag, auto)"
            ))
        })?;
    }
    let model = req
        .model
        .as_deref()
        .map(str::trim)
        .filter(|m| !m.is_empty());
    let llm = match model {
        Some(model) if model != state.opts.model => {
            if state.opts.replay.is_some() || state.opts.record.is_some() {
                return Err(ApiError::BadRequest(
                    "this server replays or records its LLM; `model` cannot be overridden".into(),
                ));
            }
            opts.model = model.to_string();
            crate::wiring::llm(&opts)
                .map_err(|e| ApiError::BadRequest(format!("cannot use model '{model}': {e}")))?
                .client
        }
        _ => state.llm.clone(),
    };
    // Built to refuse a bad model now; the worker that claims the run builds its own.
    drop(llm);
    let run_id = domain::ports::IdGen::new_id(&crate::ids::TimeRandomIds, "run");
    let workspace = crate::create_workspace(&crate::run_workspace(&state.workspace_root, &run_id))
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    let record = RunRecord {
        run_id: run_id.clone(),
        task,
        mode: dispatch::mode_name(opts.mode),
        status: RunStatus::Queued,
        workspace: workspace.display().to_string(),
        created_at: chrono::Utc::now(),
        finished_at: None,
        summary: None,
        error: None,
        usage: Default::default(),
        lease: None,
        queue_request: Some(dispatch::queue_request(&opts)),
    };
    // In the store before the client hears of it: a restart cannot lose it.
    state.queue.enqueue(&record).await.map_err(store_error)?;
    dispatch::channel_for(&state, &record);
    dispatch::dispatch(&state).await;
    let position = state.queue.position(&run_id).await.map_err(store_error)?;
    Ok(match position {
        None => (
            StatusCode::CREATED,
            Json(json!({"run_id": run_id, "queued": false})),
        )
            .into_response(),
        Some(n) => (
            StatusCode::ACCEPTED,
            Json(json!({"run_id": run_id, "queued": true, "position": n})),
        )
            .into_response(),
    })
}

async fn list_runs(Ext(state): Ext<State>) -> Result<Json<Value>, ApiError> {
    let stored = state.store.list_runs().await.map_err(store_error)?;
    let mut runs: Vec<Value> = Vec::new();
    if let Value::Array(list) = crate::report::runs_list_json(&stored) {
        for (mut v, r) in list.into_iter().zip(&stored) {
            v["mode"] = json!(r.mode);
            v["queued"] = json!(r.status == RunStatus::Queued);
            if cancelled_while_queued(r) {
                v["status"] = json!("cancelled");
            }
            if let Some(error) = errored(&state, &r.run_id) {
                v["status"] = json!("failed");
                v["error"] = json!(error);
            }
            runs.push(v);
        }
    }
    Ok(Json(json!({"runs": runs})))
}

async fn show_run(
    Ext(state): Ext<State>,
    UrlPath(run_id): UrlPath<String>,
) -> Result<Json<Value>, ApiError> {
    let Some(run) = state.store.get_run(&run_id).await.map_err(store_error)? else {
        return Err(unknown_run(&run_id));
    };
    let plan = state
        .store
        .latest_plan(&run_id)
        .await
        .map_err(store_error)?;
    let events = state.store.events(&run_id, 0).await.map_err(store_error)?;
    let mut v = crate::report::run_show_json(&run, plan.as_ref(), &events);
    v["queued"] = json!(run.status == RunStatus::Queued);
    if cancelled_while_queued(&run) {
        v["status"] = json!("cancelled");
    }
    if run.status == RunStatus::Queued {
        v["position"] = json!(state.queue.position(&run_id).await.map_err(store_error)?);
    }
    // A run that stopped without a final event (cancelled while planning, store failure).
    if let Some(error) = errored(&state, &run_id) {
        v["status"] = json!("failed");
        v["error"] = json!(error);
    }
    v["pending_question"] = json!(state.user.question(&run_id));
    v["pending_approval"] = json!(state.user.approval(&run_id));
    let ws = PathBuf::from(&run.workspace);
    v["files"] = json!(tokio::task::spawn_blocking(move || list_files(&ws))
        .await
        .unwrap_or_default());
    Ok(Json(v))
}

/// Why the run ended without an outcome, when it did.
fn errored(state: &State, run_id: &str) -> Option<String> {
    state
        .with_registry(|reg| match reg.runs.get(run_id).map(|e| &e.phase) {
            Some(Phase::Errored(m)) => Some(m.clone()),
            _ => None,
        })
        .flatten()
}

fn unknown_run(run_id: &str) -> ApiError {
    ApiError::NotFound(format!("no run with id '{run_id}'"))
}

/// Whether the run exists anywhere (store or registry).
async fn known(state: &State, run_id: &str) -> Result<bool, ApiError> {
    if state
        .with_registry(|r| r.runs.contains_key(run_id))
        .unwrap_or(false)
    {
        return Ok(true);
    }
    Ok(state
        .store
        .get_run(run_id)
        .await
        .map_err(store_error)?
        .is_some())
}

async fn cancel_run(
    Ext(state): Ext<State>,
    UrlPath(run_id): UrlPath<String>,
) -> Result<Response, ApiError> {
    let Some(run) = state.store.get_run(&run_id).await.map_err(store_error)? else {
        return Err(unknown_run(&run_id));
    };
    if run.status == RunStatus::Queued {
        let now = chrono::Utc::now();
        if state
            .queue
            .cancel_queued(&run_id, QUEUED_CANCEL, now)
            .await
            .map_err(store_error)?
        {
            state.with_registry(|reg| {
                if let Some(e) = reg.runs.get_mut(&run_id) {
                    e.phase = Phase::Cancelled;
                    e.events = None;
                }
            });
            return Ok((
                StatusCode::OK,
                Json(json!({"run_id": run_id, "status": "cancelled", "queued": true})),
            )
                .into_response());
        }
        // Claimed meanwhile: it is starting here or elsewhere; cancel it as a running run.
    }
    let local = state
        .with_registry(|reg| {
            reg.runs
                .get(&run_id)
                // A run queued here but claimed since (cancel_queued failed) may be running
                // in another process: the mailbox reaches it wherever it runs.
                .filter(|e| e.phase == Phase::Active)
                .map(|e| e.cancel.clone())
        })
        .flatten();
    match local {
        Some(cancel) => {
            cancel.cancel();
            Ok((
                StatusCode::ACCEPTED,
                Json(json!({"run_id": run_id, "status": "cancelling"})),
            )
                .into_response())
        }
        // Executed by another process (a worker, another server): its owner reads the
        // run's mailbox.
        None if matches!(
            run.status,
            RunStatus::Queued | RunStatus::Running | RunStatus::Waiting
        ) =>
        {
            state
                .mailbox
                .post(&run_id, &RunMessage::Cancel)
                .await
                .map_err(store_error)?;
            Ok((
                StatusCode::ACCEPTED,
                Json(json!({"run_id": run_id, "status": "cancelling"})),
            )
                .into_response())
        }
        None => Err(ApiError::Conflict(format!(
            "run '{run_id}' is not running ({})",
            crate::report::shown_status(&run)
        ))),
    }
}

fn cancelled_while_queued(run: &RunRecord) -> bool {
    run.status == RunStatus::Failed && run.error.as_deref() == Some(QUEUED_CANCEL)
}

/// The error recorded for a run cancelled before it started.
pub const QUEUED_CANCEL: &str = "the run was cancelled before it started";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Reply {
    answer: String,
}

async fn reply(
    Ext(state): Ext<State>,
    UrlPath(run_id): UrlPath<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Value>, ApiError> {
    let req: Reply = parse_body(body)?;
    if !known(&state, &run_id).await? {
        return Err(unknown_run(&run_id));
    }
    let answer = req.answer;
    let Err(not_here) = state.user.reply(&run_id, answer.clone()) else {
        return Ok(Json(json!({"run_id": run_id, "delivered": true})));
    };
    post_to_executor(
        &state,
        &run_id,
        &RunMessage::Answer { text: answer },
        &not_here,
    )
    .await?;
    Ok(Json(json!({"run_id": run_id, "delivered": true})))
}

/// For a run not waiting in this process: posts `message` to the process that executes it
/// (the run mailbox), when the store says the run waits; 409 with `not_here` otherwise.
async fn post_to_executor(
    state: &State,
    run_id: &str,
    message: &RunMessage,
    not_here: &ReplyError,
) -> Result<(), ApiError> {
    let waiting = state
        .store
        .get_run(run_id)
        .await
        .map_err(store_error)?
        .is_some_and(|r| r.status == RunStatus::Waiting);
    if !waiting {
        return Err(ApiError::Conflict(not_here.to_string()));
    }
    state
        .mailbox
        .post(run_id, message)
        .await
        .map_err(store_error)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Decide {
    /// `approve`, `deny` or `always` (for the rest of the run).
    decision: String,
}

/// `POST /v1/runs/{id}/approvals/{call_id}`: a person's decision on a tool call waiting for
/// approval (`approval_requested`), here or in the process executing the run.
async fn decide(
    Ext(state): Ext<State>,
    UrlPath((run_id, call_id)): UrlPath<(String, String)>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Value>, ApiError> {
    let req: Decide = parse_body(body)?;
    let decision: ApprovalDecision = req.decision.parse().map_err(ApiError::BadRequest)?;
    if !known(&state, &run_id).await? {
        return Err(unknown_run(&run_id));
    }
    let Err(not_here) = state.user.decide(&run_id, &call_id, decision) else {
        return Ok(Json(
            json!({"run_id": run_id, "call_id": call_id, "delivered": true}),
        ));
    };
    if state.user.approval(&run_id).is_some() {
        // Waiting here, on another call.
        return Err(ApiError::Conflict(not_here.to_string()));
    }
    let message = RunMessage::Approval {
        call_id: call_id.clone(),
        decision,
    };
    post_to_executor(&state, &run_id, &message, &not_here).await?;
    Ok(Json(
        json!({"run_id": run_id, "call_id": call_id, "delivered": true}),
    ))
}

async fn workspace_of(state: &State, run_id: &str) -> Result<PathBuf, ApiError> {
    if let Some(r) = state.store.get_run(run_id).await.map_err(store_error)? {
        return Ok(PathBuf::from(r.workspace));
    }
    state
        .with_registry(|reg| reg.runs.get(run_id).map(|e| e.workspace.clone()))
        .flatten()
        .ok_or_else(|| unknown_run(run_id))
}

async fn file(
    Ext(state): Ext<State>,
    UrlPath((run_id, path)): UrlPath<(String, String)>,
) -> Result<Response, ApiError> {
    let workspace = workspace_of(&state, &run_id).await?;
    let confined = tokio::task::spawn_blocking(move || open_confined(&workspace, &path))
        .await
        .map_err(|e| ApiError::Internal(format!("reading the file failed: {e}")))??;
    let content_type = if confined.text {
        "text/plain; charset=utf-8"
    } else {
        "application/octet-stream"
    };
    let disposition = format!(
        "attachment; filename=\"{}\"",
        confined.name.replace(['"', '\\', '\r', '\n'], "_")
    );
    // Streamed from disk: a large file never sits in memory.
    let stream = tokio_util::io::ReaderStream::new(tokio::fs::File::from_std(confined.file));
    let mut response = axum::body::Body::from_stream(stream).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(confined.len));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    if let Ok(v) = HeaderValue::from_str(&disposition) {
        headers.insert(header::CONTENT_DISPOSITION, v);
    }
    Ok(response)
}

/// Largest file `/files` serves.
pub const MAX_DOWNLOAD_BYTES: u64 = 256 << 20;

/// A workspace file opened for download.
#[derive(Debug)]
pub struct ConfinedFile {
    pub name: String,
    pub file: std::fs::File,
    pub len: u64,
    /// Its first bytes are UTF-8 text.
    pub text: bool,
}

/// Opens `rel` inside `workspace` for download: relative paths only, no `..`, the resolved
/// file (symlinks followed) must still be inside the workspace, and it must be a regular
/// file with one link (a hard link made to a file outside the workspace is refused) of at
/// most [`MAX_DOWNLOAD_BYTES`]. The checks are made on the opened file itself.
pub fn open_confined(workspace: &Path, rel: &str) -> Result<ConfinedFile, ApiError> {
    use std::io::{Read, Seek};
    use std::os::unix::fs::MetadataExt;
    let rel_path = Path::new(rel);
    if rel.is_empty() {
        return Err(ApiError::BadRequest("no file path given".into()));
    }
    if rel_path.is_absolute()
        || rel_path
            .components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(ApiError::Forbidden(format!(
            "'{rel}' is outside the run's workspace"
        )));
    }
    let root = std::fs::canonicalize(workspace)
        .map_err(|_| ApiError::NotFound("the run's workspace does not exist".into()))?;
    let target = std::fs::canonicalize(root.join(rel_path))
        .map_err(|_| ApiError::NotFound(format!("no file '{rel}' in the workspace")))?;
    if !target.starts_with(&root) {
        return Err(ApiError::Forbidden(format!(
            "'{rel}' is outside the run's workspace"
        )));
    }
    let not_regular = || ApiError::NotFound(format!("'{rel}' is not a regular file"));
    if !std::fs::metadata(&target).is_ok_and(|m| m.file_type().is_file()) {
        return Err(not_regular());
    }
    // Non-blocking, so a file swapped for a FIFO meanwhile cannot hang the request.
    let mut file = {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
            .open(&target)
            .map_err(|_| ApiError::NotFound(format!("no file '{rel}' in the workspace")))?
    };
    let meta = file
        .metadata()
        .map_err(|e| ApiError::Internal(format!("cannot read '{rel}': {e}")))?;
    if !meta.file_type().is_file() {
        return Err(not_regular());
    }
    if meta.nlink() > 1 {
        return Err(ApiError::Forbidden(format!(
            "'{rel}' has {} hard links; files linked from elsewhere are not served",
            meta.nlink()
        )));
    }
    if meta.len() > MAX_DOWNLOAD_BYTES {
        return Err(ApiError::TooLarge(format!(
            "'{rel}' has {} bytes; downloads are limited to {} MiB",
            meta.len(),
            MAX_DOWNLOAD_BYTES >> 20
        )));
    }
    let mut head = Vec::with_capacity(8192);
    (&mut file)
        .take(8192)
        .read_to_end(&mut head)
        .and_then(|_| file.rewind())
        .map_err(|e| ApiError::Internal(format!("cannot read '{rel}': {e}")))?;
    // A multi-byte character cut at the end of the sample still counts as text.
    let text = match std::str::from_utf8(&head) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none(),
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "file".to_string());
    Ok(ConfinedFile {
        name,
        file,
        len: meta.len(),
        text,
    })
}

/// The workspace's files as `{path, bytes}`, sorted, symlinks left out.
fn list_files(workspace: &Path) -> Vec<Value> {
    let mut out: Vec<(String, u64)> = Vec::new();
    let mut stack = vec![workspace.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() {
                if let Ok(rel) = path.strip_prefix(workspace) {
                    let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
                    out.push((rel.to_string_lossy().to_string(), size));
                }
            }
            if out.len() >= MAX_FILES {
                break;
            }
        }
    }
    out.sort();
    out.into_iter()
        .map(|(path, bytes)| json!({"path": path, "bytes": bytes}))
        .collect()
}

#[cfg(test)]
mod fuzz {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Any request body (JSON or not, any fields) gets a value or a clear 4xx error,
        /// never a panic.
        #[test]
        fn fuzz_any_body_parses_or_is_a_clear_error(body in prop_oneof![
            prop::collection::vec(any::<u8>(), 0..300),
            "\\{\"task\": \"[ -~]{0,20}\"(, \"(mode|model|x)\": (\"[a-z-]{0,10}\"|1|null|\\[\\]))?\\}".prop_map(String::into_bytes),
        ]) {
            match parse_body::<CreateRun>(Ok(Bytes::from(body))) {
                Ok(_) => {}
                Err(ApiError::BadRequest(m)) => prop_assert!(!m.is_empty()),
                Err(other) => prop_assert!(false, "unexpected error kind: {other:?}"),
            }
            let _ = parse_body::<Reply>(Ok(Bytes::from_static(b"{\"answer\": 1}")));
        }
    }
}
