//! Symbolic links in the paths the approval rules compare (docs/approvals.md, "Paths"):
//! the domain does no I/O, so the resolution is a trait the file tools' adapter implements
//! (`adapter_tools_shell::workspace::WorkspacePaths`) and the app hands to the policy.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

/// Resolves the symbolic links of a workspace path.
pub trait ResolvePaths: Send + Sync {
    /// `path` (canonical, workspace-relative, as the rules have it) with its symbolic links
    /// resolved, still workspace-relative; `None` when it cannot be (it is then compared
    /// as it is).
    fn resolve(&self, workspace: &Path, path: &str) -> Option<String>;
}

/// The policy's resolver, if any (none in tests and without the file tools).
#[derive(Clone, Default)]
pub struct PathResolver(Option<Arc<dyn ResolvePaths>>);

impl PathResolver {
    pub fn new(resolver: Arc<dyn ResolvePaths>) -> PathResolver {
        PathResolver(Some(resolver))
    }

    /// `path` with its links resolved when it lies in `workspace` and can be resolved.
    pub(crate) fn real(&self, workspace: Option<&str>, path: String) -> String {
        match (&self.0, workspace) {
            (Some(resolver), Some(ws)) if !path.starts_with('/') && !path.starts_with('~') => {
                resolver.resolve(Path::new(ws), &path).unwrap_or(path)
            }
            _ => path,
        }
    }
}

impl fmt::Debug for PathResolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "PathResolver(set)"
        } else {
            "PathResolver(none)"
        })
    }
}

/// Policies compare by their rules; the resolver is the same machinery for all.
impl PartialEq for PathResolver {
    fn eq(&self, _other: &PathResolver) -> bool {
        true
    }
}

impl Eq for PathResolver {}
