//! The canonical form of a path for the approval rules (docs/approvals.md): relative to the
//! run's workspace, with `.`, `..` and repeated `/` worked out by the text alone. A path
//! inside the workspace given absolutely becomes relative; one outside stays absolute.
//! Symbolic links are resolved where the file tools run, not here (the domain does no I/O):
//! see [`super::ResolvePaths`].

/// `path` (as a call gives it, relative to `cwd`, itself relative to the workspace) in
/// canonical form; `workspace` is the run's workspace folder as an absolute path, if known.
pub(crate) fn canonical(path: &str, cwd: &str, workspace: Option<&str>) -> String {
    let workspace = workspace.map(normalize_absolute);
    let absolute = if path.starts_with('/') {
        normalize_absolute(path)
    } else if path.starts_with('~') {
        return path.to_string();
    } else {
        let joined = if cwd.is_empty() || cwd == "." {
            path.to_string()
        } else {
            format!("{cwd}/{path}")
        };
        if joined.starts_with('/') {
            normalize_absolute(&joined)
        } else {
            match &workspace {
                Some(ws) => normalize_absolute(&format!("{ws}/{joined}")),
                None => match normalize_relative(&joined) {
                    Some(rel) => return rel,
                    None => return normalize_absolute(&format!("/{joined}")),
                },
            }
        }
    };
    match &workspace {
        Some(ws) if absolute == *ws => ".".to_string(),
        Some(ws) => match absolute.strip_prefix(ws.as_str()) {
            Some(rest) if ws == "/" => rest.to_string(),
            Some(rest) if rest.starts_with('/') => rest[1..].to_string(),
            _ => absolute,
        },
        None => absolute,
    }
}

/// `/a/./b//../c` → `/a/c` (`..` above the root stays at the root, as the kernel does).
fn normalize_absolute(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    format!("/{}", parts.join("/"))
}

/// `a/./b//../c` → `a/c`; `None` when `..` climbs above the start.
fn normalize_relative(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        return Some(".".to_string());
    }
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::canonical;

    #[test]
    fn paths_become_canonical_and_workspace_relative() {
        let ws = Some("/runs/r1/");
        for (given, cwd, want) in [
            ("secret/b.txt", "", "secret/b.txt"),
            ("./secret/b.txt", "", "secret/b.txt"),
            ("src/../secret/e.txt", "", "secret/e.txt"),
            ("secret//x", "", "secret/x"),
            ("/runs/r1/secret/x", "", "secret/x"),
            ("b.txt", "secret", "secret/b.txt"),
            ("../secret/x", "src", "secret/x"),
            ("../x", "", "/runs/x"),
            ("/etc/passwd", "", "/etc/passwd"),
            (".", "", "."),
        ] {
            assert_eq!(canonical(given, cwd, ws), want, "{given} in {cwd}");
        }
        assert_eq!(canonical("./a/../b", "", None), "b");
        assert_eq!(canonical("../b", "", None), "/b");
    }
}
