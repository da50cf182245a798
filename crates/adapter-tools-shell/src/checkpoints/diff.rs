//! What changed between two checkpoints: each path added, deleted or modified, with a
//! unified diff for text (the `similar` crate, 3 lines of context), sizes for binary
//! content, the targets of symbolic links, and what could not be shown (docs/checkpoints.md).

use domain::ports::{
    shown_path, CheckpointError, CheckpointId, DiffContent, FileChange, FileDiff, WorkspaceDiff,
};
use similar::TextDiff;

use super::store::{Entry, Manifest, RunStore};

/// Whether two entries hold the same thing (for a content not kept: the same size and time;
/// for files, the same permissions when both sides recorded them).
pub(crate) fn same(a: Option<&Entry>, b: Option<&Entry>) -> bool {
    match (a, b) {
        (
            Some(Entry::File {
                digest: d1,
                size: s1,
                executable: x1,
                mode: m1,
            }),
            Some(Entry::File {
                digest: d2,
                size: s2,
                executable: x2,
                mode: m2,
            }),
        ) => d1 == d2 && s1 == s2 && x1 == x2 && (m1.is_none() || m2.is_none() || m1 == m2),
        _ => a == b,
    }
}

/// The text of `bytes`, when it is text: UTF-8 without a NUL byte.
fn text_of(bytes: &[u8]) -> Option<&str> {
    if bytes.contains(&0) {
        return None;
    }
    std::str::from_utf8(bytes).ok()
}

fn content_of(
    store: &RunStore,
    path: &str,
    old: Option<&Entry>,
    new: Option<&Entry>,
    max_text_bytes: u64,
) -> Result<DiffContent, CheckpointError> {
    let (old_size, new_size) = (old.and_then(Entry::size), new.and_then(Entry::size));
    let link = |e: Option<&Entry>| match e {
        Some(Entry::Link { target }) => Some(target.clone()),
        _ => None,
    };
    if matches!(old, Some(Entry::Link { .. })) || matches!(new, Some(Entry::Link { .. })) {
        return Ok(DiffContent::Link {
            old_target: link(old),
            new_target: link(new),
        });
    }
    if matches!(old, Some(Entry::NotKept { .. })) || matches!(new, Some(Entry::NotKept { .. })) {
        return Ok(DiffContent::NotKept { old_size, new_size });
    }
    let digest = |e: Option<&Entry>| match e {
        Some(Entry::File {
            digest,
            executable,
            mode,
            ..
        }) => Some((digest.clone(), *executable, *mode)),
        _ => None,
    };
    let (old_file, new_file) = (digest(old), digest(new));
    if let (Some((a, _, old_mode)), Some((b, executable, new_mode))) = (&old_file, &new_file) {
        if a == b {
            let both = old_mode.is_some() && new_mode.is_some();
            return Ok(DiffContent::Mode {
                executable: *executable,
                old_mode: old_mode.filter(|_| both),
                new_mode: new_mode.filter(|_| both),
            });
        }
    }
    let read =
        |file: &Option<(String, bool, Option<u32>)>| -> Result<Option<Vec<u8>>, CheckpointError> {
            match file {
                Some((digest, _, _)) => store.read_object(digest, max_text_bytes),
                None => Ok(Some(Vec::new())),
            }
        };
    let (Some(old_bytes), Some(new_bytes)) = (read(&old_file)?, read(&new_file)?) else {
        return Ok(DiffContent::TooLongToShow { old_size, new_size });
    };
    let (Some(old_text), Some(new_text)) = (text_of(&old_bytes), text_of(&new_bytes)) else {
        return Ok(DiffContent::Binary { old_size, new_size });
    };
    // The names as shown (control characters escaped): one header line each.
    let path = shown_path(path);
    let old_name = if old.is_some() {
        format!("a/{path}")
    } else {
        "/dev/null".to_string()
    };
    let new_name = if new.is_some() {
        format!("b/{path}")
    } else {
        "/dev/null".to_string()
    };
    let unified = TextDiff::from_lines(old_text, new_text)
        .unified_diff()
        .context_radius(3)
        .header(&old_name, &new_name)
        .to_string();
    Ok(DiffContent::Text { unified })
}

/// The difference from manifest `old` to `new`.
pub(crate) fn between(
    store: &RunStore,
    (from, old): (&CheckpointId, &Manifest),
    (to, new): (&CheckpointId, &Manifest),
    max_text_bytes: u64,
) -> Result<WorkspaceDiff, CheckpointError> {
    let mut paths: Vec<&String> = old.entries.keys().chain(new.entries.keys()).collect();
    paths.sort();
    paths.dedup();
    let mut files = Vec::new();
    for path in paths {
        let (a, b) = (old.entries.get(path), new.entries.get(path));
        if same(a, b) {
            continue;
        }
        let change = match (a, b) {
            (None, _) => FileChange::Added,
            (_, None) => FileChange::Deleted,
            _ => FileChange::Modified,
        };
        files.push(FileDiff {
            path: path.clone(),
            change,
            content: content_of(store, path, a, b, max_text_bytes)?,
        });
    }
    Ok(WorkspaceDiff {
        from: from.clone(),
        to: to.clone(),
        files,
    })
}
