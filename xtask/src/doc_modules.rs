//! The module paths docs/architecture.md names exist: every backticked `crate::module::Item`
//! whose first segment is a crate of the workspace (its library name, or its folder's name
//! with `_` for `-`: `domain`, `runner`, `app`, `adapter_openai`, `store_sql`) resolves in that
//! crate's `src/`: each segment a module file (`a/b.rs` or `a/b/mod.rs`) until one that is
//! an item, which must be declared or re-exported in the module reached. Checked by this
//! module's test, which CI runs with every test, so a module that moves takes the document
//! with it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The document whose tables map the code.
const DOCUMENT: &str = "docs/architecture.md";

/// Every module path of [`DOCUMENT`] that names nothing, with the reason.
pub(crate) fn dead_modules(root: &Path) -> Result<Vec<String>, String> {
    let crates = crate_sources(root)?;
    let text = std::fs::read_to_string(root.join(DOCUMENT))
        .map_err(|e| format!("cannot read {DOCUMENT}: {e}"))?;
    let mut dead = Vec::new();
    for path in module_paths(&text) {
        let mut segments = path.split("::");
        let Some(src) = segments.next().and_then(|c| crates.get(c)) else {
            continue;
        };
        if let Err(why) = resolve(src, segments) {
            dead.push(format!("{DOCUMENT}: `{path}`: {why}"));
        }
    }
    dead.sort();
    dead.dedup();
    Ok(dead)
}

/// Crate name (library name and folder name, `-` as `_`) → its `src/` folder.
fn crate_sources(root: &Path) -> Result<BTreeMap<String, PathBuf>, String> {
    let dir = root.join("crates");
    let entries =
        std::fs::read_dir(&dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    let mut found = BTreeMap::new();
    for entry in entries.flatten() {
        let folder = entry.path();
        let src = folder.join("src");
        if !src.is_dir() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().replace('-', "_");
        if let Ok(manifest) = std::fs::read_to_string(folder.join("Cargo.toml")) {
            if let Some(lib) = library_name(&manifest) {
                found.insert(lib, src.clone());
            }
        }
        found.insert(name, src);
    }
    Ok(found)
}

/// The `name` of a manifest's `[lib]` table.
fn library_name(manifest: &str) -> Option<String> {
    let lib = manifest.split("[lib]").nth(1)?;
    let table = lib.split("\n[").next()?;
    table.lines().find_map(|line| {
        let value = line.trim().strip_prefix("name")?.trim().strip_prefix('=')?;
        Some(value.trim().trim_matches('"').to_string())
    })
}

/// The backticked spans of `text` that are paths: `a::b` and longer, of identifiers only.
fn module_paths(text: &str) -> Vec<String> {
    let is_ident = |s: &str| {
        !s.is_empty()
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !s.starts_with(|c: char| c.is_ascii_digit())
    };
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|span| span.contains("::") && span.split("::").all(is_ident))
        .map(str::to_string)
        .collect()
}

/// Walks `segments` from the crate root `src`: module files, then one item declared in the
/// module reached (what follows an item, a method or variant, is not checked).
fn resolve<'a>(src: &Path, segments: impl Iterator<Item = &'a str>) -> Result<(), String> {
    let mut folder = src.to_path_buf();
    let mut file = ["lib.rs", "main.rs"]
        .iter()
        .map(|f| src.join(f))
        .find(|f| f.is_file())
        .ok_or("the crate has no lib.rs or main.rs")?;
    for segment in segments {
        let as_file = folder.join(format!("{segment}.rs"));
        let as_folder = folder.join(segment).join("mod.rs");
        if as_file.is_file() || as_folder.is_file() {
            file = if as_file.is_file() {
                as_file
            } else {
                as_folder
            };
            folder = folder.join(segment);
            continue;
        }
        let text = std::fs::read_to_string(&file)
            .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        return if names(&text, segment) {
            Ok(())
        } else {
            Err(format!(
                "no module or item `{segment}` in {}",
                file.display()
            ))
        };
    }
    Ok(())
}

/// Whether `text` declares the identifier `word` (`fn`, `struct`, `enum`, `trait`, `type`,
/// `const`, `static`, `mod`, `macro_rules!`) or brings it in with a `use` (a re-export).
fn names(text: &str, word: &str) -> bool {
    const DECLARATIONS: [&str; 9] = [
        "fn",
        "struct",
        "enum",
        "trait",
        "type",
        "const",
        "static",
        "mod",
        "macro_rules!",
    ];
    let code = crate::cycles::without_comments(text);
    let boundary = |c: Option<char>| c.is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_'));
    code.match_indices(word).any(|(at, _)| {
        let before = &code[..at];
        if !boundary(before.chars().last()) || !boundary(code[at + word.len()..].chars().next()) {
            return false;
        }
        let declared = before
            .trim_end()
            .rsplit(|c: char| c.is_whitespace())
            .next()
            .is_some_and(|keyword| DECLARATIONS.contains(&keyword));
        let in_use = before
            .rfind("use ")
            .is_some_and(|u| boundary(before[..u].chars().last()) && !before[u..].contains(';'));
        declared || in_use
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_module_path_of_the_architecture_exists() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let dead = dead_modules(&root).unwrap_or_else(|e| vec![e]);
        assert!(
            dead.is_empty(),
            "module paths of docs/architecture.md that name nothing:\n  {}",
            dead.join("\n  ")
        );
    }

    #[test]
    fn a_moved_module_is_caught() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let crates = crate_sources(&root).expect("crates");
        let runner = &crates["runner"];
        assert!(resolve(runner, "queue::dispatch".split("::")).is_ok());
        assert!(resolve(runner, "queue::QueueRunner".split("::")).is_ok());
        assert!(resolve(runner, "server::dispatch".split("::")).is_err());
        assert!(resolve(&crates["app"], "mailbox::MailboxReader".split("::")).is_err());
        assert!(crates.contains_key("store_sql") && crates.contains_key("adapter_openai"));
        assert_eq!(
            module_paths("a `x::y` and `not a::path` and `f()` and `runner::queue::dispatch`"),
            vec!["x::y", "runner::queue::dispatch"]
        );
    }
}
