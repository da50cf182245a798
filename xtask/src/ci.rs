//! `cargo xtask ci`: format check, no import circle in any crate (`cargo xtask cycles`), the
//! domain untouched by the commit adding adapter-anthropic (`cargo xtask domain-untouched`),
//! clippy with warnings denied, the API documentation with warnings denied (dead intra-doc
//! links included), `cargo deny check`, each adapter feature of the binary built alone, every
//! example run (`cargo xtask examples`), then every test with `--no-fail-fast`, ending with
//! each failing test named with its crate.

use std::collections::HashMap;
use std::process::Command;

use crate::{cargo, report};

/// Test counts summed over every `test result:` line cargo prints.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Tally {
    passed: u64,
    failed: u64,
    ignored: u64,
}

impl Tally {
    /// Adds the counts of a line like `test result: ok. 12 passed; 0 failed; 1 ignored; ...`.
    fn add_line(&mut self, line: &str) {
        let Some(rest) = line.trim().strip_prefix("test result:") else {
            return;
        };
        for part in rest.split(';') {
            let words: Vec<&str> = part.split_whitespace().collect();
            let (n, what) = match words.as_slice() {
                [.., n, what] => (n.parse::<u64>().unwrap_or(0), *what),
                _ => continue,
            };
            match what {
                "passed" => self.passed += n,
                "failed" => self.failed += n,
                "ignored" => self.ignored += n,
                _ => {}
            }
        }
    }
}

/// What the test runs reported: counts, and every failure by crate and name.
#[derive(Debug, Default)]
struct Results {
    tally: Tally,
    /// (crate, test) of each `test NAME ... FAILED` line.
    failed_tests: Vec<(String, String)>,
    /// Targets cargo reported as failed (a crashed binary has no FAILED line).
    failed_targets: Vec<String>,
    /// The crate whose test binary is running now.
    current: String,
}

impl Results {
    /// Reads one line of `cargo test`'s merged output; `crates` names the package of each
    /// test executable (by file name).
    fn add_line(&mut self, line: &str, crates: &HashMap<String, String>) {
        self.tally.add_line(line);
        let trimmed = line.trim();
        if let Some(rest) = trimmed.strip_prefix("Running ") {
            // `Running tests/x.rs (target/debug/deps/x-0123abcd)`
            let binary = rest
                .rsplit_once('(')
                .map_or(rest, |(_, b)| b.trim_end_matches(')'));
            self.current = crates
                .get(file_name(binary))
                .cloned()
                .unwrap_or_else(|| rest.to_string());
        } else if let Some(lib) = trimmed.strip_prefix("Doc-tests ") {
            self.current = format!("{lib} (doc-tests)");
        } else if let Some(name) = trimmed
            .strip_prefix("test ")
            .and_then(|t| t.strip_suffix(" ... FAILED"))
        {
            self.failed_tests
                .push((self.current.clone(), name.to_string()));
        } else if trimmed.starts_with("`-p ") && trimmed.ends_with('`') {
            // The list after `error: N targets failed:` (with --no-fail-fast).
            self.failed_targets
                .push(trimmed.trim_matches('`').to_string());
        } else if let Some(target) = trimmed.strip_prefix("error: test failed, to rerun pass ") {
            self.failed_targets
                .push(target.trim_matches('`').to_string());
        }
    }
}

fn file_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

/// The package of every test executable `cargo test ARGS` builds, by file name (from
/// cargo's JSON messages of a `--no-run` build, which also builds them all once).
fn test_crates(args: &[&str]) -> Result<HashMap<String, String>, String> {
    let cargo = crate::cargo_program();
    let extra = ["--no-run", "--message-format=json-render-diagnostics"];
    report(&format!(
        "$ cargo test {} {}",
        args.join(" "),
        extra.join(" ")
    ));
    let out = Command::new(&cargo)
        .arg("test")
        .args(args)
        .args(extra)
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot start cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!("`cargo test {} --no-run` failed", args.join(" ")));
    }
    let mut crates = HashMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if let (Some(exe), Some(id)) = (msg["executable"].as_str(), msg["package_id"].as_str()) {
            crates.insert(file_name(exe).to_string(), package_name(id));
        }
    }
    Ok(crates)
}

/// The package name in a cargo package id: `path+file:///p/crates/x#name@0.1.0`,
/// `path+file:///p/crates/name#0.1.0`, or the old `name 0.1.0 (path+file:///...)`.
fn package_name(id: &str) -> String {
    if let Some((url, frag)) = id.rsplit_once('#') {
        return match frag.split_once('@') {
            Some((name, _)) => name.to_string(),
            None => file_name(url).to_string(),
        };
    }
    id.split_whitespace().next().unwrap_or(id).to_string()
}

/// Runs `cargo test ARGS --no-fail-fast` (so one failing binary never hides the others),
/// echoing its output, and reads the results.
fn cargo_test(
    args: &[&str],
    crates: &HashMap<String, String>,
    results: &mut Results,
) -> Result<(), String> {
    use std::io::{BufRead, BufReader, Write};
    let cargo = crate::cargo_program();
    report(&format!("$ cargo test {} --no-fail-fast", args.join(" ")));
    // One pipe for both streams: cargo's `Running` lines (stderr) stay in order with the
    // test binaries' results (stdout).
    let (reader, writer) = std::io::pipe().map_err(|e| format!("pipe: {e}"))?;
    let writer_err = writer.try_clone().map_err(|e| format!("pipe: {e}"))?;
    let mut child = Command::new(&cargo)
        .arg("test")
        .args(args)
        .arg("--no-fail-fast")
        .stdout(writer)
        .stderr(writer_err)
        .spawn()
        .map_err(|e| format!("cannot start cargo: {e}"))?;
    {
        let mut stdout = std::io::stdout().lock();
        for line in BufReader::new(reader).lines().map_while(Result::ok) {
            results.add_line(&line, crates);
            let _ = writeln!(stdout, "{line}");
        }
    }
    let status = child.wait().map_err(|e| format!("cargo test: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "`cargo test {}` exited with {status}",
            args.join(" ")
        ))
    }
}

pub(crate) fn ci() -> Result<(), String> {
    cargo(&["fmt", "--all", "--", "--check"])?;
    crate::cycles::cycles()?;
    crate::domain_untouched::domain_untouched()?;
    cargo(&[
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ])?;
    docs()?;
    crate::deny::deny()?;
    features_alone()?;
    crate::examples::examples()?;
    let mut results = Results::default();
    let all = ["--workspace", "--all-targets"];
    let crates = test_crates(&all)?;
    // Both runs always: a failing doc-test does not hide the other tests.
    let doc = cargo_test(&["--workspace", "--doc"], &crates, &mut results);
    let rest = cargo_test(&all, &crates, &mut results);
    summary(&results);
    doc.and(rest)?;
    if results.tally.passed == 0 {
        return Err("no test ran".to_string());
    }
    Ok(())
}

/// `cargo doc` of every crate with rustdoc's warnings denied: a dead intra-doc link, a
/// broken code block or a private item linked from public docs fails CI.
fn docs() -> Result<(), String> {
    crate::cargo_with_env(
        &["doc", "--no-deps", "--workspace"],
        &[("RUSTDOCFLAGS", "-D warnings")],
    )
}

/// The binary's adapter features: its `default` feature's list (crates/app/Cargo.toml), read
/// from `cargo metadata`, so a new adapter's feature is built alone without being named here.
fn adapter_features(metadata: &serde_json::Value) -> Result<Vec<String>, String> {
    metadata["packages"]
        .as_array()
        .and_then(|packages| packages.iter().find(|p| p["name"] == "planwright"))
        .and_then(|p| p["features"]["default"].as_array())
        .map(|list| {
            list.iter()
                .filter_map(|f| f.as_str().map(str::to_string))
                .collect()
        })
        .ok_or_else(|| "cargo metadata: the planwright package has no default features".into())
}

/// Clippy, warnings denied, on the binary with no adapter feature and with each one alone:
/// a feature that only builds beside another, or leaves code unreachable, fails here.
fn features_alone() -> Result<(), String> {
    let features = adapter_features(&crate::examples::metadata()?)?;
    let base = ["clippy", "-p", "planwright", "--no-default-features"];
    let deny = ["--", "-D", "warnings"];
    cargo(&[&base[..], &deny[..]].concat())?;
    for feature in &features {
        cargo(&[&base[..], &["--features", feature.as_str()], &deny[..]].concat())?;
    }
    Ok(())
}

/// Every failure by crate and name, then the closing count line.
fn summary(r: &Results) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if !r.failed_tests.is_empty() || !r.failed_targets.is_empty() {
        let _ = writeln!(out, "\nci: failing tests");
        for (krate, test) in &r.failed_tests {
            let _ = writeln!(out, "  {krate}: {test}");
        }
        for target in &r.failed_targets {
            let _ = writeln!(out, "  target failed: {target}");
        }
    }
    let t = r.tally;
    let _ = writeln!(
        out,
        "\nci: {} passed, {} failed, {} skipped",
        t.passed, t.failed, t.ignored
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The features built alone are the binary's default ones, read from the manifest.
    #[test]
    fn the_features_built_alone_are_the_binarys_defaults() {
        let metadata = serde_json::json!({"packages": [
            {"name": "planwright-runner", "features": {"default": []}},
            {"name": "planwright", "features": {"default": ["openai", "llama"], "openai": []}}
        ]});
        assert_eq!(adapter_features(&metadata).unwrap(), ["openai", "llama"]);
        assert!(adapter_features(&serde_json::json!({"packages": []})).is_err());
    }

    #[test]
    fn tally_sums_cargo_result_lines() {
        let mut t = Tally::default();
        t.add_line("test result: ok. 12 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.02s");
        t.add_line(
            "test result: FAILED. 3 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out",
        );
        t.add_line("running 5 tests");
        assert_eq!(
            t,
            Tally {
                passed: 15,
                failed: 2,
                ignored: 1
            }
        );
    }

    #[test]
    fn failures_are_named_with_their_crate() {
        let crates = HashMap::from([
            (
                "real_model-0a1b".to_string(),
                "planwright-llama".to_string(),
            ),
            ("domain-9f9f".to_string(), "planwright-domain".to_string()),
        ]);
        let mut r = Results::default();
        for line in [
            "     Running unittests src/lib.rs (target/debug/deps/domain-9f9f)",
            "test model::tests::ok ... ok",
            "test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out",
            "     Running tests/real_model.rs (target/debug/deps/real_model-0a1b)",
            "test partial_reuse_answers_like_a_cold_context ... FAILED",
            "failures:",
            "    partial_reuse_answers_like_a_cold_context",
            "test result: FAILED. 5 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out",
            "   Doc-tests domain",
            "test crates/domain/src/lib.rs - (line 3) ... FAILED",
            "error: 2 targets failed:",
            "    `-p planwright-llama --test real_model`",
            "    `-p planwright-domain --doc`",
        ] {
            r.add_line(line, &crates);
        }
        let named = |k: &str, t: &str| (k.to_string(), t.to_string());
        assert_eq!(
            r.failed_tests,
            vec![
                named(
                    "planwright-llama",
                    "partial_reuse_answers_like_a_cold_context"
                ),
                named("domain (doc-tests)", "crates/domain/src/lib.rs - (line 3)"),
            ]
        );
        assert_eq!(
            r.failed_targets,
            vec![
                "-p planwright-llama --test real_model".to_string(),
                "-p planwright-domain --doc".to_string()
            ]
        );
        assert_eq!((r.tally.passed, r.tally.failed), (6, 1));
    }

    #[test]
    fn package_names_come_from_every_id_form() {
        assert_eq!(
            package_name("path+file:///w/crates/adapter-llama#planwright-llama@0.1.0"),
            "planwright-llama"
        );
        assert_eq!(package_name("path+file:///w/xtask#0.1.0"), "xtask");
        assert_eq!(
            package_name("planwright 0.1.0 (path+file:///w/crates/app)"),
            "planwright"
        );
    }
}
