//! What the front ends (the HTTP API, the MCP service) add to the [`RunService`]'s answers:
//! a shown run's workspace files (a bounded listing, `files.rs`). The operations
//! themselves, and who may call them, are the runner's (`runner::queue::runs`).

use serde_json::{json, Value};

use runner::service::{Caller, RunService};

use super::error::ApiError;
use super::files;

/// One run as `GET /v1/runs/{id}` shows it: the service's detail and its workspace's files
/// (a bounded listing: `files_truncated` when it was cut short).
pub async fn show(
    service: &dyn RunService,
    caller: &Caller,
    run_id: &str,
) -> Result<Value, ApiError> {
    let shown = service.show(caller, run_id).await?;
    let mut v = shown.detail;
    let listing = files::list_in(shown.workspace, files::LIST_LIMITS).await;
    v["files"] = json!(listing.to_json());
    v["files_truncated"] = json!(listing.truncated);
    Ok(v)
}
