//! The API's bearer token: where it comes from, and the check on every request, which
//! tells the handlers who calls (a [`Caller`](runner::service::Caller): the server's own
//! token is admin, named tokens come from `tokens.rs`).
//!
//! The server's own token is `--token` / `PLANWRIGHT_TOKEN`; without one, a random token is generated at
//! first start, kept in `server-token` (mode 0600) beside the database, printed once on
//! stderr, and reused by later starts. Listening on a non-loopback address needs an explicit
//! token.

use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;

use axum::extract::{Request, State};
use axum::http::header::AUTHORIZATION;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::error::ApiError;
use crate::ServeError;

/// Name of the file holding the generated token, beside a SQLite database (in
/// `./.planwright` with PostgreSQL).
pub const TOKEN_FILE: &str = "server-token";

/// The token the API requires.
pub fn resolve_token(
    folder: &Path,
    given: Option<&str>,
    addr: &SocketAddr,
) -> Result<String, ServeError> {
    if let Some(t) = given.map(str::trim).filter(|t| !t.is_empty()) {
        if t.len() < 8 {
            return Err(ServeError::Config(
                "the API token must have at least 8 characters".into(),
            ));
        }
        return Ok(t.to_string());
    }
    if !addr.ip().is_loopback() {
        return Err(ServeError::Config(format!(
            "refusing to listen on {addr} (not a loopback address) without an explicit token: \
             set PLANWRIGHT_TOKEN or --token"
        )));
    }
    let file = folder.join(TOKEN_FILE);
    // A committed `server-token` (or another user's) is never adopted.
    runner::state_folder::guard(&file)?;
    if let Ok(existing) = std::fs::read_to_string(&file) {
        let existing = existing.trim();
        if !existing.is_empty() {
            return Ok(existing.to_string());
        }
    }
    std::fs::create_dir_all(folder)
        .map_err(|e| ServeError::Config(format!("cannot create {}: {e}", folder.display())))?;
    let token = format!(
        "pw_{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    );
    write_private(&file, &token)
        .map_err(|e| ServeError::Config(format!("cannot write {}: {e}", file.display())))?;
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "generated an API token (kept in {}; shown only this once):\n  {token}",
        file.display()
    );
    let _ = err.flush();
    Ok(token)
}

#[cfg(unix)]
fn write_private(file: &Path, token: &str) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(file)?;
    f.write_all(token.as_bytes())?;
    f.write_all(b"\n")
}

#[cfg(not(unix))]
fn write_private(file: &Path, token: &str) -> std::io::Result<()> {
    std::fs::write(file, format!("{token}\n"))
}

/// Compares in time independent of where the inputs differ.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `?token=` on the event stream of a run only, `GET /v1/runs/{id}/events` (EventSource
/// cannot send headers): not on any other path ending in `/events` (a workspace file named
/// `events`, `/mcp/events`).
fn query_token(request: &Request) -> Option<String> {
    if !is_event_stream(request.method(), request.uri().path()) {
        return None;
    }
    request.uri().query()?.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == "token").then(|| v.to_string())
    })
}

/// Whether `path` (with or without the `/v1` the router nests it under) is a run's event
/// stream.
fn is_event_stream(method: &axum::http::Method, path: &str) -> bool {
    if method != axum::http::Method::GET {
        return false;
    }
    let path = path.strip_prefix("/v1").unwrap_or(path);
    let parts: Vec<&str> = path.split('/').collect();
    matches!(parts.as_slice(), ["", "runs", id, "events"] if !id.is_empty())
}

/// Middleware: `Authorization: Bearer <token>` on every API route it wraps; the request
/// goes on with the token's [`Caller`](runner::service::Caller) in its extensions.
pub async fn require_token(
    State(state): State<super::State>,
    request: Request,
    next: Next,
) -> Response {
    let header = request
        .headers()
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(str::trim);
    let presented = match header {
        Some(h) => match h.split_once(' ') {
            Some((scheme, t)) if scheme.eq_ignore_ascii_case("bearer") => {
                Some(t.trim().to_string())
            }
            _ => {
                return ApiError::Unauthorized(
                    "the Authorization header must be `Bearer <token>`".into(),
                )
                .into_response()
            }
        },
        None => query_token(&request),
    };
    let Some(presented) = presented else {
        return ApiError::Unauthorized(
            "missing API token: send `Authorization: Bearer <token>`".into(),
        )
        .into_response();
    };
    match state.tokens.client_for(&presented) {
        // The handlers (and `/mcp`'s tools, through the request's parts) read who calls.
        Some(client) => {
            let mut request = request;
            request.extensions_mut().insert(client);
            next.run(request).await
        }
        None => ApiError::Unauthorized("wrong API token".into()).into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 29: `?token=` was taken on any path ending in `/events`.
    #[test]
    fn only_a_runs_event_stream_takes_the_token_in_the_query() {
        use axum::http::Method;
        for path in ["/v1/runs/run_1/events", "/runs/run_1/events"] {
            assert!(is_event_stream(&Method::GET, path), "{path}");
        }
        assert!(!is_event_stream(&Method::POST, "/v1/runs/run_1/events"));
        for path in [
            "/v1/runs/run_1/files/events",
            "/v1/runs/run_1/files/a/events",
            "/mcp/events",
            "/v1/runs//events",
            "/v1/events",
            "/v1/runs/run_1/events/x",
        ] {
            assert!(!is_event_stream(&Method::GET, path), "{path}");
        }
    }

    #[test]
    fn constant_time_eq_compares_whole_values() {
        assert!(constant_time_eq(b"secret-token", b"secret-token"));
        assert!(!constant_time_eq(b"secret-token", b"secret-tokex"));
        assert!(!constant_time_eq(b"secret", b"secret-token"));
    }

    #[test]
    fn a_generated_token_is_kept_and_reused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let folder = dir.path().join("sub");
        let addr: SocketAddr = "127.0.0.1:0".parse().expect("addr");
        let first = resolve_token(&folder, None, &addr).expect("token");
        let second = resolve_token(&folder, None, &addr).expect("token");
        assert_eq!(first, second);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let meta = std::fs::metadata(dir.path().join("sub").join(TOKEN_FILE)).expect("file");
            assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        }
        let public: SocketAddr = "0.0.0.0:8080".parse().expect("addr");
        assert!(resolve_token(&folder, None, &public).is_err());
        assert_eq!(
            resolve_token(&folder, Some("explicit-token"), &public).expect("token"),
            "explicit-token"
        );
    }
}
