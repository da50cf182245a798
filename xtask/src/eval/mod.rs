//! `cargo xtask eval`: a real-model task suite with programmatic checkers (docs/eval.md).
//!
//! Builds the release `planwright` (or takes `--binary`), then runs every task in a fresh
//! folder — `ws/` seeded with the task's files, its own `--db` — with a time limit, reads the
//! JSON outcome and the run's events, checks the workspace, names the cause of each failure,
//! prints a Markdown table and writes it into docs/eval.md under the run's label. It shells
//! out to `planwright`; it must not depend on project crates.

mod cause;
mod checks;
mod mcp;
mod outcome;
mod page;
mod report;
mod runner;
mod tasks;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use self::outcome::Observed;
use self::report::{Row, Setup};
use self::tasks::Task;

const USAGE: &str = "usage: cargo xtask eval [options] [-- planwright-run-args...]

  --model-path FILE  GGUF for the embedded model (default: planwright's default model);
                     with --base-url, the file the server serves (for the record only)
  --base-url URL     an OpenAI-compatible endpoint instead of the embedded model
  --model NAME       model name sent to that endpoint
  --tasks a,b,c      run only these tasks (default: all)
  --mode MODE        planning style passed to planwright run (default: flow)
  --timeout SECS     time limit per task run (default: 300)
  --runs N           run each task N times (default: 1)
  --label TEXT       heading of the section in docs/eval.md (default: model and endpoint)
  --binary PATH      use this planwright binary instead of building the release one
  --no-doc           print the table without writing docs/eval.md
  --list             list the tasks and exit";

/// The eval's options.
#[derive(Debug, Clone, PartialEq)]
struct Options {
    model_path: Option<PathBuf>,
    base_url: Option<String>,
    model: Option<String>,
    tasks: Vec<String>,
    mode: String,
    timeout: Duration,
    runs: u32,
    label: Option<String>,
    binary: Option<PathBuf>,
    write_doc: bool,
    list: bool,
    extra: Vec<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            model_path: None,
            base_url: None,
            model: None,
            tasks: Vec::new(),
            mode: "flow".to_string(),
            timeout: Duration::from_secs(300),
            runs: 1,
            label: None,
            binary: None,
            write_doc: true,
            list: false,
            extra: Vec::new(),
        }
    }
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options::default();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value\n\n{USAGE}"))
        };
        match arg.as_str() {
            "--model-path" => o.model_path = Some(PathBuf::from(value(arg)?)),
            "--base-url" => o.base_url = Some(value(arg)?),
            "--model" => o.model = Some(value(arg)?),
            "--tasks" => {
                o.tasks = value(arg)?
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect();
            }
            "--mode" => o.mode = value(arg)?,
            "--timeout" => {
                let v = value(arg)?;
                let secs: u64 = v.parse().ok().filter(|&s| s > 0).ok_or_else(|| {
                    format!("--timeout wants a positive number of seconds, not '{v}'")
                })?;
                o.timeout = Duration::from_secs(secs);
            }
            "--runs" => {
                let v = value(arg)?;
                o.runs = v
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| format!("--runs wants a positive count, not '{v}'"))?;
            }
            "--label" => o.label = Some(value(arg)?),
            "--binary" => o.binary = Some(PathBuf::from(value(arg)?)),
            "--no-doc" => o.write_doc = false,
            "--list" => o.list = true,
            "--" => {
                o.extra = it.by_ref().cloned().collect();
            }
            "-h" | "--help" => return Err(USAGE.to_string()),
            other => return Err(format!("unknown option '{other}'\n\n{USAGE}")),
        }
    }
    if o.model.is_some() && o.base_url.is_none() {
        return Err("--model names the endpoint's model: give --base-url too".to_string());
    }
    Ok(o)
}

pub(crate) fn eval(args: &[String]) -> Result<(), String> {
    let opts = parse(args)?;
    let selected = tasks::select(&opts.tasks)?;
    if opts.list {
        let mut out = String::new();
        for t in &selected {
            out.push_str(&format!("{:<11} {}\n", t.name, t.prompt));
        }
        print(&out);
        return Ok(());
    }
    let binary = match &opts.binary {
        Some(b) => b.clone(),
        None => {
            crate::cargo(&["build", "--release", "-p", "planwright"])?;
            target_dir().join("release").join("planwright")
        }
    };
    if !binary.is_file() {
        return Err(format!("no planwright binary at {}", binary.display()));
    }
    let setup = describe(&opts)?;
    let url = page::serve(tasks::page_html())?;
    let root = std::env::temp_dir()
        .join("planwright-eval")
        .join(slug(&setup.label));
    crate::report(&format!(
        "eval '{}': {} task(s) × {} run(s), workspaces under {}",
        setup.label,
        selected.len(),
        opts.runs,
        root.display()
    ));
    let mut rows = Vec::new();
    for task in &selected {
        for n in 1..=opts.runs {
            let name = if opts.runs > 1 {
                format!("{}#{n}", task.name)
            } else {
                task.name.to_string()
            };
            let row = run_task(&binary, &opts, task, &name, &root.join(&name), &url)?;
            crate::report(&format!(
                "  {name}: {} {} in {:.1} s{}",
                row.status,
                if row.verdict.is_ok() { "pass" } else { "FAIL" },
                row.wall_secs,
                row.cause
                    .as_ref()
                    .map_or_else(String::new, |(c, e)| format!(" — {c}: {e}"))
            ));
            rows.push(row);
        }
    }
    let section = report::section(&setup, &rows);
    print(&section);
    if opts.write_doc {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join("docs")
            .join("eval.md");
        let doc = std::fs::read_to_string(&path).unwrap_or_else(|_| INTRO.to_string());
        std::fs::write(&path, report::merge(&doc, &setup.label, &section))
            .map_err(|e| format!("writing {}: {e}", path.display()))?;
        crate::report(&format!(
            "wrote section '{}' of {}",
            setup.label,
            path.display()
        ));
    }
    Ok(())
}

/// The head of a new docs/eval.md; sections are appended below it.
const INTRO: &str = "# Eval: real models on real tasks\n\n\
Written by `cargo xtask eval` (xtask/src/eval/). Each section is one run of the suite, headed \
by its label; re-running a label replaces its section.\n\n";

fn print(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// Cargo's target folder, as cargo itself picks it.
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .filter(|v| !v.is_empty())
        .map_or_else(
            || {
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("..")
                    .join("target")
            },
            PathBuf::from,
        )
}

/// A label made safe as a folder name.
fn slug(label: &str) -> String {
    let s: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() {
        "eval".to_string()
    } else {
        s
    }
}

/// The section's heading facts: endpoint, model file and hash, mode, machine.
fn describe(opts: &Options) -> Result<Setup, String> {
    let model_file = match (&opts.model_path, &opts.base_url) {
        (Some(p), _) => Some(p.clone()),
        (None, None) => Some(crate::model::default_model_path()),
        (None, Some(_)) => None,
    };
    let (file_name, sha256) = match &model_file {
        Some(p) if p.is_file() => (
            p.file_name().map_or_else(
                || p.display().to_string(),
                |n| n.to_string_lossy().to_string(),
            ),
            crate::model::sha256_of(p)?,
        ),
        Some(p) => return Err(format!("no model file at {}", p.display())),
        None => (
            "the server's (not given)".to_string(),
            "unknown".to_string(),
        ),
    };
    let endpoint = match &opts.base_url {
        Some(url) => format!(
            "{url} (model {})",
            opts.model.as_deref().unwrap_or("planwright's default name")
        ),
        None => "embedded (in-process llama.cpp, `--provider local`)".to_string(),
    };
    let label = opts.label.clone().unwrap_or_else(|| match &opts.base_url {
        Some(url) => format!("{file_name} via {url} ({})", opts.mode),
        None => format!("{file_name} embedded ({})", opts.mode),
    });
    let output = |program: &str, args: &[&str]| {
        Command::new(program)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_else(|| "unknown".to_string())
    };
    Ok(Setup {
        label,
        endpoint,
        model_file: file_name,
        model_sha256: sha256,
        mode: opts.mode.clone(),
        timeout_secs: opts.timeout.as_secs(),
        extra_args: opts.extra.join(" "),
        date: output("date", &["-u", "+%Y-%m-%d %H:%M UTC"]),
        commit: output("git", &["rev-parse", "--short", "HEAD"]),
        machine: crate::bench::machine(),
    })
}

/// One run of one task: fresh folder, planwright with a time limit, checker, cause.
fn run_task(
    binary: &Path,
    opts: &Options,
    task: &Task,
    name: &str,
    dir: &Path,
    url: &str,
) -> Result<Row, String> {
    let _ = std::fs::remove_dir_all(dir);
    let ws = dir.join("ws");
    std::fs::create_dir_all(&ws).map_err(|e| format!("creating {}: {e}", ws.display()))?;
    for (file, text) in task.seed {
        let path = ws.join(file);
        std::fs::write(&path, text).map_err(|e| format!("seeding {}: {e}", path.display()))?;
    }
    if !task.library.is_empty() {
        mcp::set_up(&target_dir(), dir, task.library)?;
    }
    let db = dir.join("run.db");
    let mut cmd = Command::new(binary);
    cmd.arg("run")
        .arg("--json")
        .arg("--db")
        .arg(&db)
        .arg("--workspace")
        .arg(&ws)
        .args(["--mode", &opts.mode]);
    match &opts.base_url {
        Some(url) => {
            cmd.args(["--base-url", url]);
            if let Some(model) = &opts.model {
                cmd.args(["--model", model]);
            }
        }
        None => {
            cmd.args(["--provider", "local"]);
            if let Some(p) = &opts.model_path {
                cmd.arg("--model-path").arg(p);
            }
        }
    }
    for answer in task.answers {
        cmd.args(["--answer", answer]);
    }
    // Named with --config: a run folder's own planwright.toml is read only once the folder
    // is trusted (docs/security.md), and the eval records nothing in the user's config.
    if !task.library.is_empty() {
        cmd.arg("--config").arg(dir.join("planwright.toml"));
    }
    cmd.args(&opts.extra)
        .arg("--")
        .arg(task.prompt.replace(tasks::URL_PLACEHOLDER, url))
        .current_dir(dir);
    if std::env::var_os("PLANWRIGHT_LOG").is_none() {
        cmd.env("PLANWRIGHT_LOG", "warn");
    }
    let finished = runner::run_limited(cmd, dir, opts.timeout)?;
    let outcome = last_json_line(&finished.stdout);
    let run_id = outcome
        .as_ref()
        .and_then(|o| o["run_id"].as_str().map(str::to_string))
        .or_else(|| only_run_id(binary, &db));
    let events = run_id
        .as_deref()
        .map(|id| run_events(binary, &db, id))
        .unwrap_or_default();
    let observed = Observed {
        killed: finished.killed,
        exit_code: finished.exit_code,
        outcome,
        events,
        stderr_tail: tail(&finished.stderr, 400),
    };
    let verdict = (task.check)(&ws);
    let cause = verdict.as_ref().err().map(|why| {
        let (c, evidence) = cause::diagnose(&observed, why);
        (c.name().to_string(), evidence)
    });
    Ok(Row {
        task: name.to_string(),
        status: observed.status(),
        verdict,
        cause,
        wall_secs: finished.wall.as_secs_f64(),
        llm_secs: observed.llm_secs(),
        usage: observed.usage(),
    })
}

/// The last line of `stdout` that is a JSON object.
fn last_json_line(stdout: &str) -> Option<Value> {
    stdout
        .lines()
        .rev()
        .filter(|l| l.trim_start().starts_with('{'))
        .find_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(Value::is_object)
}

fn tail(text: &str, max_chars: usize) -> String {
    let n = text.chars().count();
    text.chars().skip(n.saturating_sub(max_chars)).collect()
}

/// The id of the database's run (a killed run printed no outcome).
fn only_run_id(binary: &Path, db: &Path) -> Option<String> {
    let out = Command::new(binary)
        .args(["runs", "list", "--json", "--db"])
        .arg(db)
        .output()
        .ok()?;
    let list: Value = serde_json::from_slice(&out.stdout).ok()?;
    list[0]["run_id"].as_str().map(str::to_string)
}

/// The run's events, oldest first (empty when they cannot be read).
fn run_events(binary: &Path, db: &Path, run_id: &str) -> Vec<Value> {
    Command::new(binary)
        .args(["runs", "events", run_id, "--json", "--db"])
        .arg(db)
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn options_parse_with_extra_args_after_the_separator() {
        let o = parse(&args(&[
            "--base-url",
            "http://127.0.0.1:8000/v1",
            "--model",
            "qwen",
            "--tasks",
            "sum, hello",
            "--timeout",
            "60",
            "--runs",
            "2",
            "--label",
            "server",
            "--",
            "--max-steps",
            "4",
        ]))
        .expect("valid");
        assert_eq!(o.base_url.as_deref(), Some("http://127.0.0.1:8000/v1"));
        assert_eq!(o.model.as_deref(), Some("qwen"));
        assert_eq!(o.tasks, ["sum", "hello"]);
        assert_eq!(o.timeout, Duration::from_secs(60));
        assert_eq!(o.runs, 2);
        assert_eq!(o.label.as_deref(), Some("server"));
        assert_eq!(o.extra, ["--max-steps", "4"]);
        assert_eq!(o.mode, "flow");
        assert_eq!(parse(&[]).expect("defaults"), Options::default());
    }

    #[test]
    fn bad_options_say_what_is_wrong() {
        let err = |a: &[&str]| parse(&args(a)).expect_err("invalid");
        assert!(err(&["--timeout", "0"]).contains("--timeout wants a positive"));
        assert!(err(&["--runs", "x"]).contains("--runs wants a positive count, not 'x'"));
        assert!(err(&["--label"]).contains("--label needs a value"));
        assert!(err(&["--bogus"]).contains("unknown option '--bogus'"));
        assert!(err(&["--model", "m"]).contains("give --base-url too"));
    }

    #[test]
    fn the_outcome_is_the_last_json_object_on_stdout() {
        let out = "noise\n{\"run_id\": \"run_1\", \"status\": \"failed\"}\n";
        assert_eq!(last_json_line(out).expect("found")["run_id"], "run_1");
        assert!(last_json_line("no json here\n[1]\n").is_none());
    }

    #[test]
    fn slugs_are_folder_safe() {
        assert_eq!(slug("qwen 0.5b / server"), "qwen_0.5b___server");
        assert_eq!(slug(""), "eval");
    }
}
