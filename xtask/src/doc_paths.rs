//! The paths the documents cite exist: every file or folder path named in README.md and
//! docs/*.md (`crates/app/src/wiring.rs`, `docs/security.md`, `strategy/flow.rs`, a bare
//! `database.rs`) names a file of the repository. A path from the repository's root must
//! exist there; a shorter one must be the end of some file's path (or be relative to the
//! document). Checked by this module's test, which CI runs with every test.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Extensions of the files a document may cite by path.
const CITED: [&str; 9] = [
    "rs", "md", "toml", "json", "snap", "sh", "yml", "yaml", "jsonl",
];

/// Files of a run's workspace that documents use as examples (a task's `notes/todo.md`),
/// not files of the repository.
const WORKSPACE_EXAMPLES: [&str; 3] = ["notes.md", "todo.md", "notes/todo.md"];

/// Folders never searched for cited files (build output, dependencies).
const SKIPPED: [&str; 4] = ["target", ".git", "node_modules", "proptest-regressions"];

/// Every path cited by a document under `root` that names no file, as `doc: path`.
pub(crate) fn dead_paths(root: &Path) -> Result<Vec<String>, String> {
    let mut files = Vec::new();
    collect(root, root, &mut files)?;
    let files: BTreeSet<String> = files.into_iter().collect();
    let mut docs = vec![root.join("README.md")];
    let docs_dir = root.join("docs");
    let entries = std::fs::read_dir(&docs_dir)
        .map_err(|e| format!("cannot list {}: {e}", docs_dir.display()))?;
    let mut in_docs: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    in_docs.sort();
    docs.extend(in_docs);
    let mut dead = Vec::new();
    for doc in docs {
        let text = std::fs::read_to_string(&doc)
            .map_err(|e| format!("cannot read {}: {e}", doc.display()))?;
        let folder = doc.parent().unwrap_or(root);
        let name = doc.strip_prefix(root).unwrap_or(&doc).display().to_string();
        for path in cited(&text) {
            if !exists(root, folder, &files, &path) {
                dead.push(format!("{name}: {path}"));
            }
        }
    }
    dead.dedup();
    Ok(dead)
}

/// Repository-relative paths of every file and folder under `dir`.
fn collect(root: &Path, dir: &Path, out: &mut Vec<String>) -> Result<(), String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if SKIPPED.contains(&name.as_str()) {
            continue;
        }
        let rel = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .display()
            .to_string();
        if path.is_dir() {
            out.push(format!("{rel}/"));
            collect(root, &path, out)?;
        } else {
            out.push(rel);
        }
    }
    Ok(())
}

/// The paths `text` cites: runs of path characters with a `/` and a file extension of
/// [`CITED`] or a trailing `/` from a top-level folder, or a bare `NAME.rs` / `NAME.md`.
/// Absolute paths, URLs, home-relative paths and paths from a working folder (`./run.sh`,
/// `.planwright/`, `scripts/../x`) are not the repository's and are skipped.
fn cited(text: &str) -> Vec<String> {
    let is_path_char = |c: char| c.is_ascii_alphanumeric() || "_./-".contains(c);
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(is_path_char) {
        let before = rest[..start].chars().last();
        let len = rest[start..]
            .find(|c: char| !is_path_char(c))
            .unwrap_or(rest.len() - start);
        let word = rest[start..start + len].trim_end_matches('.');
        rest = &rest[start + len..];
        let foreign = word.starts_with('/')
            || matches!(before, Some('~' | ':' | '$' | '@' | '{' | '<' | '*'))
            || rest.starts_with(['*', '{', '<']);
        let foreign = foreign || word.starts_with('.') || word.contains("..");
        if foreign || word.is_empty() || WORKSPACE_EXAMPLES.contains(&word) {
            continue;
        }
        let extension = word.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
        let has_slash = word.trim_end_matches('/').contains('/');
        let cited = if has_slash {
            CITED.contains(&extension) || word.ends_with('/')
        } else {
            !word.starts_with('.') && (extension == "rs" || extension == "md") && word.len() > 3
        };
        if cited {
            found.push(word.to_string());
        }
    }
    found
}

fn exists(root: &Path, folder: &Path, files: &BTreeSet<String>, path: &str) -> bool {
    if root.join(path).exists() || folder.join(path).exists() {
        return true;
    }
    let bare = path.trim_start_matches("./");
    let top = bare.split('/').next().unwrap_or("");
    if bare.contains('/') && root.join(top).is_dir() && !top.is_empty() {
        // A path from the root that is not there.
        return false;
    }
    files
        .iter()
        .any(|f| f.ends_with(&format!("/{bare}")) || f == bare)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_path_a_document_cites_exists() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let dead = dead_paths(&root).unwrap_or_else(|e| vec![e]);
        assert!(
            dead.is_empty(),
            "paths cited in README.md or docs/ that name no file:\n  {}",
            dead.join("\n  ")
        );
    }

    #[test]
    fn paths_are_told_from_urls_and_words() {
        let text = "See `crates/app/src/wiring.rs`, [d](docs/design.md), strategy/flow.rs and \
                    `database.rs`; not https://example.com/a.md, ~/.config/x.toml, /tmp/a.rs, \
                    `browser_*`, `{id}/x.md`, ./run.sh, .cursor/mcp.json, a/../b.rs, \
                    a sentence. Or crates/domain/src/testing/.";
        assert_eq!(
            cited(text),
            vec![
                "crates/app/src/wiring.rs",
                "docs/design.md",
                "strategy/flow.rs",
                "database.rs",
                "crates/domain/src/testing/"
            ]
        );
    }

    #[test]
    fn a_root_path_must_exist_where_it_says() {
        let files: BTreeSet<String> = ["crates/app/src/wiring.rs".to_string()].into();
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        assert!(exists(&root, &root, &files, "src/wiring.rs"));
        assert!(!exists(&root, &root, &files, "crates/app/tests/leases.rs"));
        assert!(!exists(&root, &root, &files, "nothing.rs"));
    }
}
