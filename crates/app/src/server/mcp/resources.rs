//! Each run's workspace files as MCP resources, `planwright://runs/{run_id}/files/{path}`
//! (the path percent-encoded), listed from the store's runs and read confined to the
//! workspace like the HTTP API's downloads (`files::open_confined`).

use std::io::Read;

use base64::Engine;
use rmcp::model::{Resource, ResourceContents, ResourceTemplate};
use serde_json::Value;

use super::super::clients::{Client, Scope};
use super::super::error::ApiError;
use super::super::{files, State};

const SCHEME: &str = "planwright://runs/";

/// Most resources `resources/list` lists (the newest runs' files first); the template
/// reaches any other.
const MAX_LISTED: usize = 1000;

/// Largest file read as a resource.
const MAX_READ_BYTES: u64 = 16 << 20;

/// The resource URI of `path` in the workspace of `run_id`.
pub fn uri(run_id: &str, path: &str) -> String {
    format!("{SCHEME}{}/files/{}", encode(run_id), encode(path))
}

/// The template clients fill in for a file they know the path of.
pub fn template() -> ResourceTemplate {
    ResourceTemplate::new(format!("{SCHEME}{{run_id}}/files/{{path}}"), "run-file")
        .with_title("A file of a Planwright run's workspace")
        .with_description(
            "A file the run wrote in its workspace; `path` is relative to the workspace, \
             percent-encoded (slashes kept).",
        )
}

/// The files of the newest runs the client may see, at most [`MAX_LISTED`].
pub async fn list(state: &State, client: &Client) -> Result<Vec<Resource>, ApiError> {
    client.require(Scope::Read)?;
    let mut runs = state
        .store
        .list_runs()
        .await
        .map_err(super::super::error::store_error)?;
    runs.retain(|r| client.sees(r));
    let mut out = Vec::new();
    for run in runs {
        let listed = files::list_in(run.workspace.clone().into()).await;
        for file in listed {
            let (Some(path), Some(bytes)) = (
                file.get("path").and_then(Value::as_str),
                file.get("bytes").and_then(Value::as_u64),
            ) else {
                continue;
            };
            let mut resource = Resource::new(uri(&run.run_id, path), path.to_string())
                .with_description(format!("written by run {} ({})", run.run_id, run.task));
            resource.size = Some(bytes);
            out.push(resource);
            if out.len() >= MAX_LISTED {
                return Ok(out);
            }
        }
    }
    Ok(out)
}

/// Reads the resource at `uri`: text as text, anything else as base64.
pub async fn read(
    state: &State,
    client: &Client,
    uri_text: &str,
) -> Result<ResourceContents, ApiError> {
    let (run_id, path) = parse(uri_text)?;
    let workspace = files::workspace_of(state, client, &run_id).await?;
    let uri_owned = uri_text.to_string();
    tokio::task::spawn_blocking(move || -> Result<ResourceContents, ApiError> {
        let confined = files::open_confined(&workspace, &path)?;
        if confined.len > MAX_READ_BYTES {
            return Err(ApiError::TooLarge(format!(
                "'{path}' has {} bytes; resources are limited to {} MiB (the HTTP API's \
                 /v1/runs/{{id}}/files/{{path}} serves larger files)",
                confined.len,
                MAX_READ_BYTES >> 20
            )));
        }
        let mut bytes = Vec::new();
        let mut file = confined.file;
        (&mut file)
            .take(MAX_READ_BYTES)
            .read_to_end(&mut bytes)
            .map_err(|e| ApiError::Internal(format!("cannot read '{path}': {e}")))?;
        Ok(match String::from_utf8(bytes) {
            Ok(text) => ResourceContents::text(text, uri_owned),
            Err(e) => ResourceContents::blob(
                base64::engine::general_purpose::STANDARD.encode(e.into_bytes()),
                uri_owned,
            )
            .with_mime_type("application/octet-stream"),
        })
    })
    .await
    .map_err(|e| ApiError::Internal(format!("reading the file failed: {e}")))?
}

/// The run id and the workspace path of a resource URI.
fn parse(uri: &str) -> Result<(String, String), ApiError> {
    let bad = || {
        ApiError::NotFound(format!(
            "'{uri}' is not a Planwright resource (planwright://runs/{{run_id}}/files/{{path}})"
        ))
    };
    let rest = uri.strip_prefix(SCHEME).ok_or_else(bad)?;
    let (run_id, path) = rest.split_once("/files/").ok_or_else(bad)?;
    let run_id = decode(run_id).ok_or_else(bad)?;
    let path = decode(path).ok_or_else(bad)?;
    if run_id.is_empty() || path.is_empty() {
        return Err(bad());
    }
    Ok((run_id, path))
}

/// Percent-encodes everything but unreserved characters and `/`.
fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The text of a percent-encoded string, if it is UTF-8 once decoded.
fn decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uri_round_trips_to_its_run_and_path() {
        let u = uri("run-1", "out/a file ü%.txt");
        assert_eq!(
            u,
            "planwright://runs/run-1/files/out/a%20file%20%C3%BC%25.txt"
        );
        assert_eq!(
            parse(&u).expect("parses"),
            ("run-1".to_string(), "out/a file ü%.txt".to_string())
        );
    }

    #[test]
    fn a_foreign_or_broken_uri_is_refused() {
        for bad in [
            "file:///etc/passwd",
            "planwright://runs/run-1/plan",
            "planwright://runs/run-1/files/%zz",
            "planwright://runs//files/a",
        ] {
            assert!(matches!(parse(bad), Err(ApiError::NotFound(_))), "{bad}");
        }
    }
}
