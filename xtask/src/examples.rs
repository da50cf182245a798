//! `cargo xtask examples`: runs every cargo example of the workspace (`crates/*/examples/*.rs`,
//! found through `cargo metadata`), each against its scripted model; one that exits non-zero
//! fails the task. `cargo xtask ci` runs it, so the examples of docs/architecture.md
//! ("Embedding Planwright") keep working, not only compiling. An example that talks to an
//! OpenAI-compatible endpoint gets a local one (`OPENAI_BASE_URL`: [`crate::mock_openai`]).

use std::process::Command;

use crate::{cargo_with_env, report};

/// One example target: its package, its name, the features it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Example {
    package: String,
    name: String,
    features: Vec<String>,
}

/// `cargo metadata --no-deps` of the workspace, as JSON.
pub(crate) fn metadata() -> Result<serde_json::Value, String> {
    let out = Command::new(crate::cargo_program())
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .output()
        .map_err(|e| format!("cannot start cargo: {e}"))?;
    if !out.status.success() {
        return Err("`cargo metadata` failed".to_string());
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("cargo metadata: not JSON: {e}"))
}

pub(crate) fn examples() -> Result<(), String> {
    let metadata = metadata()?;
    let examples = examples_of(&metadata);
    if examples.is_empty() {
        return Err("no example found".to_string());
    }
    let base_url = crate::mock_openai::start()?;
    let env = [
        ("OPENAI_BASE_URL", base_url.as_str()),
        ("OPENAI_API_KEY", "sk-mock"),
    ];
    for example in &examples {
        let mut args = vec![
            "run",
            "-q",
            "-p",
            &example.package,
            "--example",
            &example.name,
        ];
        let features = example.features.join(",");
        if !features.is_empty() {
            args.extend(["--features", &features]);
        }
        cargo_with_env(&args, &env)?;
    }
    report(&format!("{} examples ran", examples.len()));
    Ok(())
}

/// Every target of kind `example` in `cargo metadata`'s JSON, by package then name.
fn examples_of(metadata: &serde_json::Value) -> Vec<Example> {
    let mut found = Vec::new();
    for package in metadata["packages"].as_array().into_iter().flatten() {
        let Some(package_name) = package["name"].as_str() else {
            continue;
        };
        for target in package["targets"].as_array().into_iter().flatten() {
            let is_example = target["kind"]
                .as_array()
                .is_some_and(|k| k.iter().any(|k| k == "example"));
            if let (true, Some(name)) = (is_example, target["name"].as_str()) {
                found.push(Example {
                    package: package_name.to_string(),
                    name: name.to_string(),
                    features: target["required-features"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|f| f.as_str().map(str::to_string))
                        .collect(),
                });
            }
        }
    }
    found.sort_by(|a, b| (&a.package, &a.name).cmp(&(&b.package, &b.name)));
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples_and_their_features_are_read_from_cargo_metadata() {
        let metadata = serde_json::json!({"packages": [
            {"name": "b", "targets": [
                {"name": "b", "kind": ["lib"]},
                {"name": "walk", "kind": ["example"], "required-features": ["x"]}
            ]},
            {"name": "a", "targets": [{"name": "run", "kind": ["example"]}, {"name": "t", "kind": ["test"]}]}
        ]});
        let example = |p: &str, n: &str, f: &[&str]| Example {
            package: p.into(),
            name: n.into(),
            features: f.iter().map(|s| s.to_string()).collect(),
        };
        assert_eq!(
            examples_of(&metadata),
            vec![example("a", "run", &[]), example("b", "walk", &["x"])]
        );
    }

    /// The examples docs/architecture.md names are the ones cargo finds.
    #[test]
    fn the_workspace_has_the_six_embedding_examples() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        for file in [
            "crates/domain/examples/custom_tool.rs",
            "crates/domain/examples/custom_llm.rs",
            "crates/domain/examples/memory_store.rs",
            "crates/domain/examples/custom_style.rs",
            "crates/adapter-store-sqlite/examples/sqlite_events.rs",
            "crates/runner/examples/openai_shell.rs",
        ] {
            assert!(root.join(file).is_file(), "{file} is missing");
        }
    }
}
