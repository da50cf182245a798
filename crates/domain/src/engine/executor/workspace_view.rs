//! Reads what a step is shown of the workspace before it acts (docs/code-actions.md, "The
//! work up front") through the `WorkspaceFiles` port: the files, sorted, and the first bytes
//! of each listed one; `model::workspace_view` cuts it to the budget.

use std::path::Path;
use std::sync::Arc;

use crate::model::workspace_view::{ViewBudget, WorkspaceView};
use crate::ports::WorkspaceFiles;

/// Files listed to count what is not shown.
const COUNTED: usize = 10_000;

/// The view of folder `dir`; `None` when it cannot be listed.
pub(crate) async fn look(
    port: &Arc<dyn WorkspaceFiles>,
    dir: &Path,
    budget: ViewBudget,
) -> Option<WorkspaceView> {
    let listing = match port.list(dir, COUNTED).await {
        Ok(l) => l,
        Err(e) => {
            tracing::warn!(error = %e, "cannot list the workspace to show it");
            return None;
        }
    };
    let mut files = Vec::with_capacity(listing.files.len().min(budget.max_files));
    for (i, f) in listing.files.into_iter().enumerate() {
        let head = if i < budget.max_files {
            port.head(dir, &f.path, budget.read_bytes)
                .await
                .ok()
                .flatten()
        } else {
            None
        };
        files.push((f.path, f.size, head));
    }
    Some(WorkspaceView::build(files, budget))
}
