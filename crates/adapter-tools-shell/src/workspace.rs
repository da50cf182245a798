//! Confinement of path arguments to a run's workspace folder.
//!
//! [`resolve`] turns a user-supplied path into an absolute path that is guaranteed (at the
//! time of the check) to lie inside the canonical workspace:
//!
//! 1. relative paths are joined to the workspace; absolute paths are taken as they are;
//! 2. the longest existing prefix is canonicalized (resolving `..` and symbolic links);
//!    it must lie inside the canonicalized workspace;
//! 3. the non-existing remainder is appended; it must contain no `..` and must not start
//!    with a dangling symbolic link (which a write would follow to wherever it points).
//!
//! A symbolic link swapped in between the check and the use (a TOCTOU race) is not
//! defended against; the agent's own shell could do worse anyway.

use std::path::{Component, Path, PathBuf};

use domain::model::approval::ResolvePaths;
use domain::ToolError;

/// The approval rules' view of symbolic links (docs/approvals.md, "Paths"): a workspace
/// path resolved as the file tools resolve it, so `--deny 'file_*(secret/**)'` also sees
/// `link/x` when `link` points at `secret`.
#[derive(Debug, Clone, Copy, Default)]
pub struct WorkspacePaths;

impl ResolvePaths for WorkspacePaths {
    fn resolve(&self, workspace: &Path, path: &str) -> Option<String> {
        let root = canonical_workspace(workspace).ok()?;
        let resolved = resolve_in(&root, path).ok()?;
        Some(relative(&root, &resolved))
    }
}

/// The canonical (absolute, symlink-free) form of the workspace folder.
pub fn canonical_workspace(workspace: &Path) -> Result<PathBuf, ToolError> {
    std::fs::canonicalize(workspace).map_err(|e| {
        ToolError::Failed(format!(
            "the workspace folder '{}' is not accessible: {e}",
            workspace.display()
        ))
    })
}

/// Resolves `user_path` against `workspace`; anything outside it is `ToolError::Refused`.
pub fn resolve(workspace: &Path, user_path: &str) -> Result<PathBuf, ToolError> {
    let root = canonical_workspace(workspace)?;
    resolve_in(&root, user_path)
}

/// [`resolve`] against an already canonical workspace `root`.
pub fn resolve_in(root: &Path, user_path: &str) -> Result<PathBuf, ToolError> {
    if user_path.contains('\0') {
        return Err(ToolError::InvalidArguments(
            "path must not contain a NUL character".to_string(),
        ));
    }
    let given = Path::new(user_path);
    let candidate = if given.is_absolute() {
        given.to_path_buf()
    } else {
        root.join(given)
    };
    let components: Vec<Component<'_>> = candidate.components().collect();

    // The longest prefix that exists (canonicalize fails on anything that does not).
    let mut split = components.len();
    let base = loop {
        let prefix: PathBuf = components[..split].iter().collect();
        match std::fs::canonicalize(&prefix) {
            Ok(canonical) => break canonical,
            Err(_) if split > 1 => split -= 1,
            Err(e) => {
                return Err(ToolError::Failed(format!(
                    "cannot resolve path '{user_path}': {e}"
                )))
            }
        }
    };
    if !base.starts_with(root) {
        return Err(outside(user_path));
    }

    let remainder = &components[split..];
    let mut resolved = base;
    for (i, component) in remainder.iter().enumerate() {
        match component {
            Component::Normal(name) => {
                resolved.push(name);
                // Only the first missing component can exist at all: a dangling (or
                // looping) symbolic link, which canonicalize could not follow.
                if i == 0 && std::fs::symlink_metadata(&resolved).is_ok() {
                    return Err(ToolError::Refused(format!(
                        "path '{user_path}' goes through '{}', a symbolic link whose \
                         target does not exist or cannot be resolved",
                        relative(root, &resolved)
                    )));
                }
            }
            Component::CurDir => {}
            Component::ParentDir => {
                return Err(ToolError::Refused(format!(
                    "path '{user_path}' uses '..' after a folder that does not exist; \
                     give the path without '..'"
                )))
            }
            Component::RootDir | Component::Prefix(_) => return Err(outside(user_path)),
        }
    }
    Ok(resolved)
}

/// `path` relative to the canonical workspace `root`, for messages and attachments
/// (`.` for the root itself; the path unchanged if it is not inside `root`).
pub fn relative(root: &Path, path: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Ok(rel) => rel.display().to_string(),
        Err(_) => path.display().to_string(),
    }
}

fn outside(user_path: &str) -> ToolError {
    ToolError::Refused(format!(
        "path '{user_path}' resolves outside the workspace; only paths inside the \
         workspace folder can be used"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        (dir, root)
    }

    #[test]
    fn relative_paths_join_the_workspace() {
        let (_d, root) = ws();
        std::fs::create_dir(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.rs"), "x").unwrap();
        assert_eq!(
            resolve_in(&root, "src/a.rs").unwrap(),
            root.join("src/a.rs")
        );
        assert_eq!(
            resolve_in(&root, "./src/./a.rs").unwrap(),
            root.join("src/a.rs")
        );
        assert_eq!(
            resolve_in(&root, "src/../src/a.rs").unwrap(),
            root.join("src/a.rs")
        );
        assert_eq!(resolve_in(&root, "").unwrap(), root);
        assert_eq!(resolve_in(&root, ".").unwrap(), root);
    }

    #[test]
    fn missing_parts_are_appended() {
        let (_d, root) = ws();
        assert_eq!(
            resolve_in(&root, "new/dir/file.txt").unwrap(),
            root.join("new/dir/file.txt")
        );
    }

    #[test]
    fn climbing_out_is_refused() {
        let (_d, root) = ws();
        for p in ["..", "../x", "../../etc/passwd", "/etc/passwd", "/", "/tmp"] {
            let err = resolve_in(&root, p).unwrap_err();
            assert!(
                matches!(&err, ToolError::Refused(m) if m.contains("outside the workspace")),
                "{p}: {err:?}"
            );
        }
    }

    #[test]
    fn dot_dot_through_a_missing_folder_is_refused() {
        let (_d, root) = ws();
        for p in ["nope/../x", "a/../../x"] {
            let err = resolve_in(&root, p).unwrap_err();
            assert!(
                matches!(&err, ToolError::Refused(m) if m.contains("'..'")),
                "{err:?}"
            );
        }
    }

    #[test]
    fn absolute_paths_inside_are_allowed() {
        let (_d, root) = ws();
        let inside = root.join("f.txt");
        assert_eq!(resolve_in(&root, inside.to_str().unwrap()).unwrap(), inside);
    }

    #[test]
    fn dangling_symlinks_are_refused() {
        let (_d, root) = ws();
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("not-yet");
        std::os::unix::fs::symlink(&target, root.join("link")).unwrap();
        let err = resolve_in(&root, "link").unwrap_err();
        assert!(matches!(err, ToolError::Refused(m) if m.contains("symbolic link")));
        assert!(!target.exists());
    }

    #[test]
    fn nul_is_invalid() {
        let (_d, root) = ws();
        assert!(matches!(
            resolve_in(&root, "a\0b"),
            Err(ToolError::InvalidArguments(_))
        ));
    }

    #[test]
    fn the_rules_see_paths_with_their_links_resolved() {
        let (dir, root) = ws();
        std::fs::create_dir(root.join("secret")).unwrap();
        std::os::unix::fs::symlink(root.join("secret"), root.join("link")).unwrap();
        let paths = WorkspacePaths;
        assert_eq!(
            paths.resolve(dir.path(), "link/new.txt").as_deref(),
            Some("secret/new.txt")
        );
        assert_eq!(paths.resolve(dir.path(), "src/a").as_deref(), Some("src/a"));
        assert_eq!(paths.resolve(dir.path(), "../outside"), None);
    }

    #[test]
    fn relative_display() {
        let root = Path::new("/w");
        assert_eq!(relative(root, Path::new("/w")), ".");
        assert_eq!(relative(root, Path::new("/w/a/b")), "a/b");
        assert_eq!(relative(root, Path::new("/x")), "/x");
    }
}
