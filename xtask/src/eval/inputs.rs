//! A task's seeded inputs: written into its workspace before the run and compared byte for
//! byte after it. Every seeded file the task does not declare it may change is an input the
//! run must leave as it was (docs/eval.md, "Protected inputs").

use std::path::Path;

/// Writes the seed files into `ws`, making their folders.
pub(crate) fn seed<F: AsRef<str>, T: AsRef<str>>(
    ws: &Path,
    files: &[(F, T)],
) -> Result<(), String> {
    for (file, text) in files {
        let (file, text) = (file.as_ref(), text.as_ref());
        let path = ws.join(file);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("creating {}: {e}", parent.display()))?;
        }
        std::fs::write(&path, text).map_err(|e| format!("seeding {}: {e}", path.display()))?;
    }
    Ok(())
}

/// Each seeded file outside `may_change` that is no longer exactly what was seeded, with
/// what became of it (`names.txt (deleted)`), in seed order.
pub(crate) fn changed<F: AsRef<str>, T: AsRef<str>, M: AsRef<str>>(
    ws: &Path,
    files: &[(F, T)],
    may_change: &[M],
) -> Vec<String> {
    files
        .iter()
        .map(|(file, seeded)| (file.as_ref(), seeded.as_ref()))
        .filter(|(file, _)| !may_change.iter().any(|m| m.as_ref() == *file))
        .filter_map(|(file, seeded)| {
            let path = ws.join(file);
            let what = match std::fs::symlink_metadata(&path) {
                Err(_) => "deleted".to_string(),
                Ok(m) if !m.is_file() => "no longer a plain file".to_string(),
                Ok(_) => match std::fs::read(&path) {
                    Ok(now) if now == seeded.as_bytes() => return None,
                    Ok(now) => format!(
                        "rewritten: {} bytes seeded, {} bytes now",
                        seeded.len(),
                        now.len()
                    ),
                    Err(e) => format!("unreadable: {e}"),
                },
            };
            Some(format!("{file} ({what})"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("xtask-inputs-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch");
        dir
    }

    const SEED: &[(&str, &str)] = &[
        ("data.csv", "a,b\n1,2\n"),
        ("docs/notes.txt", "keep\n"),
        ("draft.txt", "text\n"),
    ];

    #[test]
    fn untouched_inputs_and_allowed_changes_are_not_reported() {
        let ws = scratch("same");
        seed(&ws, SEED).expect("seeded");
        assert!(changed(&ws, SEED, &[] as &[&str]).is_empty());
        std::fs::remove_file(ws.join("draft.txt")).expect("rm");
        std::fs::write(ws.join("new.txt"), "an output").expect("output");
        assert!(changed(&ws, SEED, &["draft.txt"]).is_empty());
        let _ = std::fs::remove_dir_all(&ws);
    }

    /// A rewrite, even of one byte (CRLF for LF), a deletion and a folder in a file's place
    /// are all changes; each is named with what happened.
    #[test]
    fn rewritten_deleted_and_replaced_inputs_are_named() {
        let ws = scratch("changed");
        seed(&ws, SEED).expect("seeded");
        std::fs::write(ws.join("data.csv"), "a,b\r\n1,2\r\n").expect("rewrite");
        std::fs::remove_file(ws.join("docs/notes.txt")).expect("rm");
        std::fs::remove_file(ws.join("draft.txt")).expect("rm");
        std::fs::create_dir(ws.join("draft.txt")).expect("dir");
        assert_eq!(
            changed(&ws, SEED, &[] as &[&str]),
            [
                "data.csv (rewritten: 8 bytes seeded, 10 bytes now)",
                "docs/notes.txt (deleted)",
                "draft.txt (no longer a plain file)"
            ]
        );
        let _ = std::fs::remove_dir_all(&ws);
    }
}
