//! README's promise, tested: the main job (the `planwright run ...` command of README's first
//! set-up block) run exactly as written, on the default embedded model, with real tools,
//! must end `completed` and leave the file the task asks for.
//!
//! The command is read from README.md itself, so the test and the README cannot drift. It
//! needs the default model (`cargo xtask model`): without it the test is skipped with a
//! note, unless `CI=true`, where it fails. The run is bounded by a generous limit only to
//! turn a hang into a failure; no timing is asserted (speed lives in docs/eval.md).
#![cfg(feature = "llama")]
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Long enough for a slow machine; a run that takes longer is a failure, not a skip.
const LIMIT: Duration = Duration::from_secs(20 * 60);

fn readme() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The arguments after `-- run` in the first shell block that builds and runs the binary.
fn main_job_args(readme: &str) -> Vec<String> {
    let line = readme
        .lines()
        .find(|l| l.contains("cargo run --release") && l.contains(" -- run "))
        .expect("README has a `cargo run --release ... -- run ...` main job");
    let (_, after) = line.split_once(" -- run ").unwrap();
    shell_words(after)
}

/// Splits a shell command line: whitespace-separated words, with '…' and "…" quoting.
fn shell_words(s: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in s.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// The file the main job's task asks for and the text it must contain, e.g. `Write
/// hello.txt containing 'hello from planwright'` → (`hello.txt`, `hello from planwright`).
fn expected_file(task: &str) -> (String, String) {
    let after_write = task
        .split_once("Write ")
        .map(|(_, rest)| rest)
        .expect("the main job's task writes a file");
    let file = after_write.split_whitespace().next().unwrap().to_string();
    let text = after_write
        .split('\'')
        .nth(1)
        .expect("the task quotes the content")
        .to_string();
    (file, text)
}

/// The default model's path, as `planwright` resolves it (see adapter-llama's catalogue).
fn default_model_present() -> bool {
    adapter_llama::default_model_path().is_file()
}

#[test]
fn readme_parsing() {
    assert_eq!(
        shell_words(r#"--max-steps 4 "Write a 'x' file" 'b c'"#),
        vec!["--max-steps", "4", "Write a 'x' file", "b c"]
    );
    let args = main_job_args(&readme());
    let task = args.last().unwrap();
    let (file, text) = expected_file(task);
    assert!(file.contains('.'), "{file}");
    assert!(!text.is_empty());
}

#[test]
fn readme_main_job_completes_on_the_default_model() {
    if !default_model_present() {
        let msg = format!(
            "the default model {} is missing (run `cargo xtask model`)",
            adapter_llama::default_model_path().display()
        );
        test_support::require_or_skip::<(), _>(Err(msg));
        return;
    }
    let args = main_job_args(&readme());
    let task = args.last().unwrap().clone();
    let (file, text) = expected_file(&task);
    let dir = tempfile::tempdir().unwrap();
    let workspace: PathBuf = dir.path().join("ws");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_planwright"));
    cmd.arg("run")
        .arg("--json")
        .arg("--db")
        .arg(dir.path().join("pw.db"))
        .arg("--workspace")
        .arg(&workspace)
        .args(&args)
        .current_dir(dir.path())
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("PLANWRIGHT_PROVIDER")
        .env_remove("PLANWRIGHT_MODEL")
        .env_remove("PLANWRIGHT_MODEL_PATH")
        .env("XDG_CONFIG_HOME", dir.path().join("config-home"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let mut child = cmd.spawn().unwrap();
    let out = loop {
        if child.try_wait().unwrap().is_some() {
            break child.wait_with_output().unwrap();
        }
        if started.elapsed() > LIMIT {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "the README main job did not finish within {} min\nstderr:\n{}",
                LIMIT.as_secs() / 60,
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    let outcome: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("--json printed no object ({e})\nstderr:\n{stderr}"));
    eprintln!(
        "README main job: {} in {:.0} s, usage {}",
        outcome["status"],
        started.elapsed().as_secs_f64(),
        outcome["usage"]
    );
    assert_eq!(
        outcome["status"], "completed",
        "the README main job must complete on the default model\n{outcome:#}\nstderr:\n{stderr}"
    );
    assert_eq!(out.status.code(), Some(0));
    let written = std::fs::read_to_string(workspace.join(&file))
        .unwrap_or_else(|e| panic!("{file} was not written ({e})\n{outcome:#}"));
    assert!(
        written.contains(&text),
        "{file} holds {written:?}, not {text:?}"
    );
}
