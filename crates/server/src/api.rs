//! The JSON API under `/v1`: reads requests, calls the runner's `RunService` (the state's
//! `service`), answers JSON.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Path as UrlPath, State as Ext};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, MethodRouter};
use axum::{Extension, Json, Router};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Value};

use domain::model::approval::ApprovalDecision;

pub use super::error::ApiError;
use super::runs;
use super::{auth, files, percent, sse, web, State};
use runner::service::Caller;
use runner::service::{Cancelled, NewRun, UndoRequest};
use runner::telemetry::context::CallerTrace;

/// Largest request body accepted.
pub const BODY_LIMIT: usize = 64 * 1024;

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

/// The routes under `/v1` that need the token (axum's path syntax). The router is built from
/// this list and [`open_routes`], and a test holds them to assets/openapi.json.
fn token_routes() -> Vec<(&'static str, MethodRouter<State>)> {
    vec![
        ("/runs", post(create_run).get(list_runs)),
        ("/runs/{id}", get(show_run)),
        ("/runs/{id}/events", get(sse::events)),
        ("/runs/{id}/cancel", post(cancel_run)),
        ("/runs/{id}/diff", get(diff_run)),
        ("/runs/{id}/undo", post(undo_run)),
        ("/runs/{id}/reply", post(reply)),
        ("/runs/{id}/approvals/{call_id}", post(decide)),
        ("/runs/{id}/files/{*path}", get(file)),
    ]
}

/// The routes under `/v1` served without a token.
fn open_routes() -> Vec<(&'static str, MethodRouter<State>)> {
    vec![
        ("/health", get(health)),
        ("/openapi.json", get(web::openapi)),
    ]
}

fn add_routes(
    router: Router<State>,
    routes: Vec<(&'static str, MethodRouter<State>)>,
) -> Router<State> {
    routes
        .into_iter()
        .fold(router, |router, (path, route)| router.route(path, route))
}

pub fn router(state: State) -> Router {
    let api = add_routes(Router::new(), token_routes()).route_layer(
        axum::middleware::from_fn_with_state(state.clone(), auth::require_token),
    );
    let api = add_routes(api, open_routes());
    // MCP over streamable HTTP (docs/mcp.md), behind the same token as `/v1`.
    let mcp = Router::new()
        .nest_service("/mcp", super::mcp::http_service(state.clone()))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::require_token,
        ));
    Router::new()
        .nest("/v1", api)
        .merge(mcp)
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
    Extension(client): Extension<Caller>,
    headers: axum::http::HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let req: CreateRun = parse_body(body)?;
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let trace = CallerTrace::from_headers(header("traceparent"), header("tracestate"))
        .unwrap_or_else(|e| {
            tracing::warn!("{e}");
            None
        });
    let queued = state
        .service
        .queue(
            &client,
            NewRun {
                task: req.task,
                mode: req.mode,
                model: req.model,
                trace,
            },
        )
        .await?;
    let run_id = queued.run_id;
    Ok(match queued.position {
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

async fn list_runs(
    Ext(state): Ext<State>,
    Extension(client): Extension<Caller>,
) -> Result<Json<Value>, ApiError> {
    Ok(Json(json!({"runs": state.service.list(&client).await?})))
}

async fn show_run(
    Ext(state): Ext<State>,
    Extension(client): Extension<Caller>,
    UrlPath(run_id): UrlPath<String>,
) -> Result<Json<Value>, ApiError> {
    Ok(Json(runs::show(&*state.service, &client, &run_id).await?))
}

async fn cancel_run(
    Ext(state): Ext<State>,
    Extension(client): Extension<Caller>,
    UrlPath(run_id): UrlPath<String>,
) -> Result<Response, ApiError> {
    Ok(match state.service.cancel(&client, &run_id).await? {
        Cancelled::WhileQueued => (
            StatusCode::OK,
            Json(json!({"run_id": run_id, "status": "cancelled", "queued": true})),
        )
            .into_response(),
        Cancelled::Cancelling => (
            StatusCode::ACCEPTED,
            Json(json!({"run_id": run_id, "status": "cancelling"})),
        )
            .into_response(),
    })
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DiffQuery {
    #[serde(default)]
    step: Option<u32>,
}

/// `GET /v1/runs/{id}/diff[?step=N]`: what the run (or step N, from 0) changed in its
/// workspace, from its checkpoints (docs/checkpoints.md).
async fn diff_run(
    Ext(state): Ext<State>,
    Extension(client): Extension<Caller>,
    UrlPath(run_id): UrlPath<String>,
    query: Result<axum::extract::Query<DiffQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let axum::extract::Query(query) = query.map_err(|e| {
        ApiError::BadRequest(format!("bad query (step=N, a step number from 0): {e}"))
    })?;
    let diff = state.service.diff(&client, &run_id, query.step).await?;
    Ok(Json(runner::json::diff_json(&run_id, query.step, &diff)))
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Undo {
    #[serde(default)]
    to_step: Option<u32>,
    #[serde(default)]
    checkpoint: Option<String>,
    #[serde(default)]
    force: bool,
}

/// `POST /v1/runs/{id}/undo`: puts the run's workspace back as it was before the run (or
/// `to_step`, or `checkpoint`); the body may be empty. 409 for a live run, or for files
/// changed after the run without `force`.
async fn undo_run(
    Ext(state): Ext<State>,
    Extension(client): Extension<Caller>,
    UrlPath(run_id): UrlPath<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Value>, ApiError> {
    let req: Undo = match &body {
        Ok(bytes) if bytes.is_empty() => Undo::default(),
        _ => parse_body(body)?,
    };
    if req.to_step.is_some() && req.checkpoint.is_some() {
        return Err(ApiError::BadRequest(
            "give to_step or checkpoint, not both".into(),
        ));
    }
    let request = UndoRequest {
        to_step: req.to_step,
        checkpoint: req.checkpoint,
        force: req.force,
    };
    let restored = state.service.undo(&client, &run_id, request).await?;
    Ok(Json(runner::json::undo_json(&run_id, &restored)))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Reply {
    answer: String,
}

async fn reply(
    Ext(state): Ext<State>,
    Extension(client): Extension<Caller>,
    UrlPath(run_id): UrlPath<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Value>, ApiError> {
    let req: Reply = parse_body(body)?;
    state.service.answer(&client, &run_id, req.answer).await?;
    Ok(Json(json!({"run_id": run_id, "delivered": true})))
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
    Extension(client): Extension<Caller>,
    UrlPath((run_id, call_id)): UrlPath<(String, String)>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Value>, ApiError> {
    let req: Decide = parse_body(body)?;
    let decision: ApprovalDecision = req.decision.parse().map_err(ApiError::BadRequest)?;
    state
        .service
        .decide(&client, &run_id, &call_id, decision)
        .await?;
    Ok(Json(
        json!({"run_id": run_id, "call_id": call_id, "delivered": true}),
    ))
}

/// The run id and the file path of `/runs/{id}/files/{*path}`, decoded from the request's
/// own URI: the path may be any bytes (axum's `Path` refuses what is not UTF-8 once
/// decoded), so a file whose name is not UTF-8 downloads by its `path_encoded`.
fn run_and_file(uri: &axum::http::Uri) -> Result<(String, std::path::PathBuf), ApiError> {
    let bad = || {
        ApiError::BadRequest(format!(
            "'{}' is not /v1/runs/{{id}}/files/{{path}}",
            uri.path()
        ))
    };
    let (_, rest) = uri.path().split_once("/runs/").ok_or_else(bad)?;
    let (run_id, path) = rest.split_once("/files/").ok_or_else(bad)?;
    let run_id = percent::decode_text(run_id).ok_or_else(bad)?;
    let path = percent::decode_path(path).ok_or_else(bad)?;
    Ok((run_id, path))
}

async fn file(
    Ext(state): Ext<State>,
    Extension(client): Extension<Caller>,
    uri: axum::http::Uri,
) -> Result<Response, ApiError> {
    let (run_id, path) = run_and_file(&uri)?;
    let workspace = state.service.workspace(&client, &run_id).await?;
    let confined = tokio::task::spawn_blocking(move || files::open_confined(&workspace, &path))
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

/// The routes and the OpenAPI document agree (issue 30): every route the router serves is
/// documented with exactly the methods it answers, every documented one is served, and the
/// document's lists of names are the domain's.
#[cfg(test)]
mod openapi {
    use std::collections::BTreeSet;
    use std::sync::Arc;

    use domain::model::names::Named;
    use domain::ports::RunStatus;
    use domain::{Mode, StepStatus};

    use super::*;

    /// The documented paths under `/v1` (OpenAPI's syntax), `/mcp` aside.
    fn documented(doc: &Value) -> BTreeSet<String> {
        doc["paths"]
            .as_object()
            .unwrap()
            .keys()
            .filter_map(|p| p.strip_prefix("/v1").map(str::to_string))
            .collect()
    }

    /// A route's path in OpenAPI's syntax (`{*path}` is `{path}`).
    fn openapi_path(route: &str) -> String {
        route.replace("{*", "{")
    }

    /// A path with its parameters filled in, to send a request to.
    fn concrete(path: &str) -> String {
        path.replace("{id}", "run_1")
            .replace("{call_id}", "c1")
            .replace("{path}", "a.txt")
    }

    #[test]
    fn every_route_is_documented_and_every_documented_route_is_served() {
        let doc: Value = serde_json::from_str(web::openapi_document()).unwrap();
        let served: BTreeSet<String> = token_routes()
            .into_iter()
            .chain(open_routes())
            .map(|(path, _)| openapi_path(path))
            .collect();
        assert_eq!(served, documented(&doc));
        assert!(doc["paths"]["/mcp"].is_object(), "/mcp is documented");
    }

    #[test]
    fn the_documents_names_are_the_domains() {
        let doc: Value = serde_json::from_str(web::openapi_document()).unwrap();
        let schemas = &doc["components"]["schemas"];
        let names = |v: &Value| -> Vec<String> {
            v.as_array()
                .unwrap_or_else(|| panic!("not a list: {v}"))
                .iter()
                .map(|n| n.as_str().unwrap().to_string())
                .collect()
        };
        assert_eq!(
            names(&schemas["CreateRun"]["properties"]["mode"]["enum"]),
            Mode::names()
        );
        let steps: BTreeSet<String> = StepStatus::ALL
            .iter()
            .map(|s| {
                serde_json::to_value(s)
                    .unwrap()
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        let documented: BTreeSet<String> = names(&schemas["Step"]["properties"]["status"]["enum"])
            .into_iter()
            .collect();
        assert_eq!(documented, steps);
        // A run's status as the API shows it: the stored ones, and the API's own.
        let statuses = names(&schemas["RunSummary"]["properties"]["status"]["enum"]);
        for status in RunStatus::ALL {
            let name = serde_json::to_value(status).unwrap();
            assert!(
                statuses.iter().any(|s| name == *s),
                "{name} missing from {statuses:?}"
            );
        }
        for decision in names(
            &doc["paths"]["/v1/runs/{id}/approvals/{call_id}"]["post"]["requestBody"]["content"]
                ["application/json"]["schema"]["properties"]["decision"]["enum"],
        ) {
            assert!(decision.parse::<ApprovalDecision>().is_ok(), "{decision}");
        }
    }

    /// Each documented path answers exactly its documented methods: the others are 405.
    #[tokio::test]
    async fn every_route_answers_exactly_its_documented_methods() {
        let doc: Value = serde_json::from_str(web::openapi_document()).unwrap();
        let store = Arc::new(domain::testing::MemoryStore::new());
        let Ok(mut state) = Arc::try_unwrap(super::super::test_state(store)) else {
            panic!("the state is shared");
        };
        let folder = tempfile::tempdir().unwrap();
        state.tokens = super::super::tokens::TokenBook::new("t0ken".into(), folder.path()).unwrap();
        let app = router(Arc::new(state));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        let client = reqwest::Client::new();
        for path in documented(&doc) {
            let url = format!("http://{addr}/v1{}", concrete(&path));
            for method in ["get", "post", "put", "patch", "delete"] {
                let documented = doc["paths"][format!("/v1{path}")][method].is_object();
                let answer = client
                    .request(method.to_uppercase().parse().unwrap(), &url)
                    .bearer_auth("t0ken")
                    .send()
                    .await
                    .unwrap();
                let status = answer.status();
                let body = answer.text().await.unwrap_or_default();
                if documented {
                    assert!(
                        status != StatusCode::METHOD_NOT_ALLOWED && !body.contains("no such route"),
                        "{method} {path}: {status} {body}"
                    );
                } else {
                    assert_eq!(
                        status,
                        StatusCode::METHOD_NOT_ALLOWED,
                        "{method} {path} is served but not documented"
                    );
                }
            }
        }
    }
}
