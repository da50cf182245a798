//! What each side of a check left, read through the `WorkspaceFiles` port: the run's
//! changes to its workspace (against the inputs recorded when it started) and the
//! reproduction's changes to its scratch folder (against the same inputs), as
//! [`Produced`] for `model::verification::compare`.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use crate::model::inputs::FileChanges;
use crate::model::verification::{Content, Produced};
use crate::ports::WorkspaceFiles;

/// Bytes of a file compared as text; a bigger one is compared by digest.
const TEXT_BYTES: usize = 256 * 1024;
/// Files listed in a scratch folder.
const LISTED: usize = 20_000;

/// The content of `path` under `dir`, as compared.
async fn content(port: &Arc<dyn WorkspaceFiles>, dir: &Path, path: &str) -> Option<Content> {
    let head = port.head(dir, path, TEXT_BYTES + 1).await.ok().flatten()?;
    if head.len() <= TEXT_BYTES {
        if let Ok(text) = String::from_utf8(head) {
            return Some(Content::Text(text));
        }
    }
    port.digest(dir, path)
        .await
        .ok()
        .flatten()
        .map(Content::Digest)
}

/// What the run left in its workspace: `changes` (created, changed, moved, deleted), and
/// `answer`, its final result.
pub(super) async fn by_run(
    port: &Arc<dyn WorkspaceFiles>,
    workspace: &Path,
    changes: &FileChanges,
    answer: &str,
) -> Produced {
    let mut written = BTreeMap::new();
    let paths = changes
        .created
        .iter()
        .chain(&changes.changed)
        .chain(changes.moved.iter().map(|m| &m.to));
    for path in paths {
        if let Some(c) = content(port, workspace, path).await {
            written.insert(path.clone(), c);
        }
    }
    Produced {
        written,
        changed_inputs: changes.changed.iter().cloned().collect(),
        gone: changes
            .deleted
            .iter()
            .chain(changes.moved.iter().map(|m| &m.from))
            .cloned()
            .collect(),
        answer: answer.to_string(),
    }
}

/// An input as the run recorded it: its path and the digest of its content then (`None`:
/// too big to have been copied; it is compared by size and time as the run found it).
pub(super) struct Seeded {
    pub path: String,
    pub digest: Option<String>,
}

/// What the reproduction left in scratch folder `dir`, seeded with `inputs`; `printed`,
/// what its program printed.
pub(super) async fn in_scratch(
    port: &Arc<dyn WorkspaceFiles>,
    dir: &Path,
    inputs: &[Seeded],
    printed: &str,
) -> Option<Produced> {
    let listing = port.list(dir, LISTED).await.ok()?;
    let mut produced = Produced {
        answer: printed.to_string(),
        ..Produced::default()
    };
    for f in &listing.files {
        match inputs.iter().find(|i| i.path == f.path) {
            None => {
                if let Some(c) = content(port, dir, &f.path).await {
                    produced.written.insert(f.path.clone(), c);
                }
            }
            Some(seeded) => {
                let Some(before) = &seeded.digest else {
                    continue;
                };
                let now = port.digest(dir, &f.path).await.ok().flatten();
                if now.as_ref() != Some(before) {
                    if let Some(c) = content(port, dir, &f.path).await {
                        produced.written.insert(f.path.clone(), c);
                        produced.changed_inputs.insert(f.path.clone());
                    }
                }
            }
        }
    }
    for i in inputs {
        if !listing.files.iter().any(|f| f.path == i.path) {
            produced.gone.insert(i.path.clone());
        }
    }
    Some(produced)
}
