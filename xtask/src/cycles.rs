//! `cargo xtask cycles`: import circles between the files of each crate of the workspace
//! (every `crates/*/src` and `xtask/src`).
//!
//! A file is a module (`scheduler.rs` and `scheduler/mod.rs` are `scheduler`, a file of a
//! folder is `folder::file`, `lib.rs` and `main.rs` the crate root). File A imports file B
//! when A's code (test code included)
//! names `crate::B` or `crate::B::…` (in `use` lines or paths; `super::` and `self::` are resolved, so
//! a `mod.rs` re-exporting `self::child::*` imports its child), or names one of its own child
//! modules bare (`dispatch::dispatch(..)` in `queue/mod.rs` imports `queue::dispatch`). A circle is a
//! set of files that import each other, directly or through others (a strongly connected
//! component of that graph, Tarjan's algorithm). A circle inside one folder (a module and
//! its own descendants: `queue/mod.rs` calling `dispatch::dispatch`, `dispatch.rs` using
//! `super::State`) is the folder's own structure and is counted, not failed on; a circle
//! that leaves the folder (`metrics` → `queue` → `queue::dispatch` → `metrics`) is printed
//! and fails the task (docs/architecture.md, "Crates").

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::report;

/// Circles known and accepted for a while, each to be broken by the change named beside it:
/// reported, not failed on. A circle not in this list fails; one of the list no longer found
/// is reported, to be taken out of it. Empty since the split of crates/app into runner,
/// server and binary (issue 30) broke the last one.
const KNOWN: &[(&str, &[&str])] = &[];

pub(crate) fn cycles() -> Result<(), String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = Vec::new();
    for src in crate_sources(&root)? {
        let graph = graph(&src)?;
        let name = src
            .strip_prefix(&root)
            .unwrap_or(&src)
            .display()
            .to_string();
        let (inside, circles): (Vec<_>, Vec<_>) =
            circles(&graph).into_iter().partition(inside_one_folder);
        if circles.is_empty() {
            report(&format!(
                "{name}: {} files, no import circle ({} inside one folder)",
                graph.len(),
                inside.len()
            ));
        }
        found.extend(circles.into_iter().map(|c| (name.clone(), c)));
    }
    let (known, new) = sort_out(found, KNOWN);
    for (name, circle) in &known {
        report(&format!(
            "{name}: known import circle (to break): {}",
            joined(circle)
        ));
    }
    for (name, modules) in KNOWN {
        let gone = !known
            .iter()
            .any(|(n, c)| n == name && c.iter().map(String::as_str).eq(modules.iter().copied()));
        if gone {
            report(&format!(
                "{name}: the known circle {} is gone: take it out of KNOWN (xtask/src/cycles.rs)",
                modules.join(", ")
            ));
        }
    }
    for (name, circle) in &new {
        report(&format!(
            "{name}: import circle of {} files: {}",
            circle.len(),
            joined(circle)
        ));
    }
    if new.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} import circle(s): a file must not import a file that imports it back",
            new.len()
        ))
    }
}

/// Whether `circle` is a module and its own descendants only (a folder's `mod.rs` and the
/// files under it, or a crate root and its modules).
fn inside_one_folder(circle: &BTreeSet<String>) -> bool {
    circle.iter().any(|top| {
        circle
            .iter()
            .all(|m| m == top || top.is_empty() || m.starts_with(&format!("{top}::")))
    })
}

/// A crate's `src` folder and one circle of its modules.
type Found = (String, BTreeSet<String>);

/// The circles of `known` (in practice [`KNOWN`]), and the others.
fn sort_out(found: Vec<Found>, known: &[(&str, &[&str])]) -> (Vec<Found>, Vec<Found>) {
    found.into_iter().partition(|(name, circle)| {
        known.iter().any(|(n, modules)| {
            n == name
                && circle
                    .iter()
                    .map(String::as_str)
                    .eq(modules.iter().copied())
        })
    })
}

fn joined(circle: &BTreeSet<String>) -> String {
    circle.iter().cloned().collect::<Vec<_>>().join(", ")
}

/// The `src` folder of every crate: `crates/*/src` and `xtask/src`, sorted.
fn crate_sources(root: &Path) -> Result<Vec<PathBuf>, String> {
    let crates = root.join("crates");
    let entries =
        std::fs::read_dir(&crates).map_err(|e| format!("cannot list {}: {e}", crates.display()))?;
    let mut sources: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path().join("src"))
        .chain([root.join("xtask").join("src")])
        .filter(|src| src.is_dir())
        .collect();
    sources.sort();
    Ok(sources)
}

/// Module path (`a::b`) → the modules it imports.
type Graph = BTreeMap<String, BTreeSet<String>>;

fn graph(src: &Path) -> Result<Graph, String> {
    let mut files = Vec::new();
    collect(src, &mut files)?;
    let modules: BTreeMap<String, PathBuf> = files
        .into_iter()
        .filter_map(|f| module_of(src, &f).map(|m| (m, f)))
        .collect();
    let mut graph = Graph::new();
    for (module, file) in &modules {
        let text = std::fs::read_to_string(file)
            .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let children: Vec<&str> = modules
            .keys()
            .filter_map(|m| child_name(module, m))
            .collect();
        let imports = imports(&text, module)
            .into_iter()
            .chain(child_paths(&text, module, &children))
            .filter_map(|path| longest_module(&path, &modules))
            .filter(|target| target != module)
            .collect();
        graph.insert(module.clone(), imports);
    }
    Ok(graph)
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, files)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    Ok(())
}

/// `lib.rs` and `main.rs` → "" (the crate root), `a/mod.rs` → `a`, `a/b.rs` → `a::b`.
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?.with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let root = parts.len() == 1 && parts[0] == "main";
    if root || parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    Some(parts.join("::"))
}

/// `m`'s last segment when `m` is a child module of `module` (one segment deeper).
fn child_name<'m>(module: &str, m: &'m str) -> Option<&'m str> {
    let rest = if module.is_empty() {
        m
    } else {
        m.strip_prefix(module)?.strip_prefix("::")?
    };
    (!rest.is_empty() && !rest.contains("::")).then_some(rest)
}

/// The child modules of `module` its code names bare (`child::item`, not after `::` or
/// inside another word), outside inline modules, as full module paths.
fn child_paths(text: &str, module: &str, children: &[&str]) -> Vec<String> {
    let code = without_comments(text);
    let outer = match inline_module(&code) {
        Some(at) => &code[..at],
        None => code.as_str(),
    };
    let mut found = Vec::new();
    for child in children {
        let token = format!("{child}::");
        let mut from = 0;
        while let Some(at) = outer[from..].find(&token) {
            let start = from + at;
            from = start + token.len();
            let before = outer[..start].chars().last();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            found.push(if module.is_empty() {
                (*child).to_string()
            } else {
                format!("{module}::{child}")
            });
            break;
        }
    }
    found
}

/// `text` with line comments cut off.
pub(crate) fn without_comments(text: &str) -> String {
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `crate::…` path the text names (with `super::` resolved against `module`), as
/// segments joined by `::`; `use crate::{a, b::c}` gives `a` and `b::c`.
fn imports(text: &str, module: &str) -> Vec<String> {
    let code = without_comments(text);
    let own: Vec<&str> = module.split("::").filter(|p| !p.is_empty()).collect();
    let parent: Vec<&str> = own[..own.len().saturating_sub(1)].to_vec();
    // Code after an inline `mod name {` (in practice `mod tests`) sits one level deeper:
    // there `super::` is the file's own module.
    let (outer, inner) = match inline_module(&code) {
        Some(at) => code.split_at(at),
        None => (code.as_str(), ""),
    };
    let mut found = scan(
        outer,
        &[("crate::", &[]), ("super::", &parent), ("self::", &own)],
    );
    found.extend(scan(inner, &[("crate::", &[]), ("super::", &own)]));
    found
}

/// Where the first inline module (`mod name {`) of `code` starts.
fn inline_module(code: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = code[from..].find("mod ") {
        let start = from + at;
        let before = code[..start].chars().last();
        let rest = &code[start + 4..];
        let name_len = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .count();
        let boundary = before.is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        if boundary && name_len > 0 && rest[name_len..].trim_start().starts_with('{') {
            return Some(start);
        }
        from = start + 4;
    }
    None
}

/// The paths `code` names after each prefix, resolved against that prefix's base module.
fn scan(code: &str, prefixes: &[(&str, &[&str])]) -> Vec<String> {
    let mut found = Vec::new();
    for (prefix, base) in prefixes {
        let mut rest = code;
        while let Some(at) = rest.find(prefix) {
            let before = rest[..at].chars().last();
            rest = &rest[at + prefix.len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            for path in expand(rest) {
                let mut full: Vec<&str> = base.to_vec();
                full.extend(path.split("::").filter(|p| !p.is_empty()));
                found.push(full.join("::"));
            }
        }
    }
    found
}

/// The paths at the start of `rest`: `a::b::C` → \[`a::b::C`\]; `{a, b::{c, d}}` → \[`a`,
/// `b::c`, `b::d`] (only the module part matters, so a prefix is enough).
fn expand(rest: &str) -> Vec<String> {
    let head: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
        .collect();
    let head = head.trim_end_matches(':').to_string();
    let after = &rest[head.len()..].trim_start_matches(':');
    if !after.starts_with('{') {
        return vec![head];
    }
    // A group: split its top level on commas.
    let mut depth = 0;
    let mut end = after.len();
    for (i, c) in after.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    end = i;
                    break;
                }
            }
            _ => {}
        }
    }
    let inner = &after[1..end.max(1)];
    let mut items = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&inner[start..]);
    items
        .into_iter()
        .map(str::trim)
        .filter(|i| !i.is_empty())
        .flat_map(expand)
        .map(|tail| {
            if head.is_empty() {
                tail
            } else {
                format!("{head}::{tail}")
            }
        })
        .collect()
}

/// The longest prefix of `path` that is a module of the crate.
fn longest_module(path: &str, modules: &BTreeMap<String, PathBuf>) -> Option<String> {
    let parts: Vec<&str> = path.split("::").collect();
    (1..=parts.len())
        .rev()
        .map(|n| parts[..n].join("::"))
        .find(|candidate| modules.contains_key(candidate))
}

/// The strongly connected components of more than one module (Tarjan).
fn circles(graph: &Graph) -> Vec<BTreeSet<String>> {
    struct State<'g> {
        graph: &'g Graph,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        next: usize,
        found: Vec<BTreeSet<String>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g str) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on_stack.insert(v);
        let targets: Vec<&'g str> = s
            .graph
            .get(v)
            .map(|t| t.iter().map(String::as_str).collect())
            .unwrap_or_default();
        for w in targets {
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = BTreeSet::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.insert(w.to_string());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                s.found.push(component);
            }
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !state.index.contains_key(v.as_str()) {
            visit(&mut state, v);
        }
    }
    state.found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_and_super_are_resolved() {
        let text = "use crate::{plan::{Plan, Step}, ports::RunStore};\nuse super::x::Y;\nlet a = crate::flow::default_plan();\n// crate::ignored::Z\n";
        let mut found = imports(text, "engine::scheduler");
        found.sort();
        assert_eq!(
            found,
            vec![
                "engine::x::Y",
                "flow::default_plan",
                "plan::Plan",
                "plan::Step",
                "ports::RunStore"
            ]
        );
    }

    #[test]
    fn super_in_an_inline_test_module_is_the_file_itself() {
        let text = "use super::agent::A;\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n";
        let found = imports(text, "engine::executor::router");
        assert_eq!(
            found,
            vec!["engine::executor::agent::A", "engine::executor::router"]
        );
    }

    #[test]
    fn a_mod_rs_re_exporting_its_child_imports_it() {
        let found = imports("pub use self::store::*;\n", "ports");
        assert_eq!(found, vec!["ports::store"]);
    }

    #[test]
    fn a_bare_child_module_path_is_an_import() {
        let text = "use std::fmt;\nlet x = dispatch::dispatch(a);\nlet y = crate::other::dispatch::q();\nlet z = redispatch::f();\n// follow::f()\n";
        assert_eq!(
            child_paths(text, "queue", &["dispatch", "follow", "runs"]),
            vec!["queue::dispatch"]
        );
        assert_eq!(child_paths("use cli::Args;", "", &["cli"]), vec!["cli"]);
        assert_eq!(child_name("queue", "queue::dispatch"), Some("dispatch"));
        assert_eq!(child_name("queue", "queue::dispatch::x"), None);
        assert_eq!(child_name("", "queue"), Some("queue"));
        assert_eq!(child_name("queue", "queued"), None);
    }

    #[test]
    fn the_circle_of_a_bare_child_path_is_found() {
        let dir = std::env::temp_dir().join(format!("xtask-cycles-{}", std::process::id()));
        let src = dir.as_path();
        std::fs::create_dir_all(src.join("queue")).expect("mkdir");
        std::fs::create_dir_all(src.join("metrics")).expect("mkdir");
        std::fs::write(src.join("lib.rs"), "mod metrics;\nmod queue;\n").expect("write");
        std::fs::write(
            src.join("metrics/mod.rs"),
            "use crate::queue::QueueRunner;\n",
        )
        .expect("write");
        std::fs::write(
            src.join("queue/mod.rs"),
            "mod dispatch;\npub struct QueueRunner;\nfn go() { dispatch::dispatch(); }\n",
        )
        .expect("write");
        std::fs::write(
            src.join("queue/dispatch.rs"),
            "use crate::metrics::claimed;\npub fn dispatch() {}\n",
        )
        .expect("write");
        let graph = graph(src).expect("graph");
        let _ = std::fs::remove_dir_all(&dir);
        let found = circles(&graph);
        assert_eq!(
            found,
            vec![["metrics", "queue", "queue::dispatch"]
                .iter()
                .map(|s| s.to_string())
                .collect::<BTreeSet<_>>()]
        );
        assert!(!inside_one_folder(&found[0]), "it leaves the queue folder");
        let folder = |m: &[&str]| m.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
        assert!(inside_one_folder(&folder(&["queue", "queue::dispatch"])));
        assert!(inside_one_folder(&folder(&["", "ci", "cycles"])));
        assert!(!inside_one_folder(&folder(&["queue::a", "queue::b"])));
    }

    #[test]
    fn only_circles_outside_the_known_list_fail() {
        let circle = |m: &[&str]| m.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
        let modules: &[&str] = &["cli", "config", "database"];
        let name = "crates/app/src";
        let (known, new) = sort_out(
            vec![
                (name.into(), circle(modules)),
                (name.into(), circle(&modules[..2])),
                ("crates/domain/src".into(), circle(modules)),
            ],
            &[(name, modules)],
        );
        assert_eq!(known.len(), 1);
        assert_eq!(new.len(), 2);
    }

    #[test]
    fn every_crate_and_the_xtask_are_checked() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let sources = crate_sources(&root).unwrap_or_default();
        assert!(sources.iter().any(|s| s.ends_with("crates/domain/src")));
        assert!(sources.iter().any(|s| s.ends_with("crates/app/src")));
        assert!(sources.iter().any(|s| s.ends_with("crates/runner/src")));
        assert!(sources.iter().any(|s| s.ends_with("xtask/src")));
        // main.rs is the root of a binary crate, as lib.rs is of a library.
        let main = root.join("crates/app/src/main.rs");
        assert_eq!(
            module_of(&root.join("crates/app/src"), &main).as_deref(),
            Some("")
        );
    }

    #[test]
    fn a_circle_through_three_files_is_found_and_a_chain_is_not() {
        let edges = |pairs: &[(&str, &str)]| {
            let mut g = Graph::new();
            for (a, b) in pairs {
                g.entry(a.to_string()).or_default().insert(b.to_string());
                g.entry(b.to_string()).or_default();
            }
            g
        };
        let circle = edges(&[("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")]);
        assert_eq!(
            circles(&circle),
            vec![["a", "b", "c"].iter().map(|s| s.to_string()).collect()]
        );
        assert!(circles(&edges(&[("a", "b"), ("b", "c"), ("a", "c")])).is_empty());
    }
}
