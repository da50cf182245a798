//! `cargo xtask eval`: a real-model task suite with programmatic checkers (docs/eval.md).
//!
//! Builds the release `planwright` (or takes `--binary`), then, for each model and mode asked
//! for, runs every task in a fresh folder — `ws/` seeded with the task's files, its own
//! `--db` — with a time limit, reads the JSON outcome and the run's events, checks that the
//! seeded inputs are unchanged and the workspace holds the answer, names the cause of each
//! failure, prints a Markdown table and writes it into docs/eval.md under the run's label;
//! with several modes or models, a mode × model table too. With `--server llama-cpp` it
//! starts llama.cpp's `llama-server` on each model (crate::llama_server) and runs the suite
//! through it as through `--base-url`. It shells out to `planwright`; it must not depend on
//! project crates.

mod cause;
mod checks;
mod inputs;
mod judge;
mod matrix;
mod mcp;
mod models;
mod options;
mod outcome;
mod page;
mod report;
mod runner;
mod tasks;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use self::matrix::{MatrixRow, MatrixSetup};
use self::models::ModelChoice;
use self::options::Options;
use self::outcome::Observed;
use self::report::{Row, Setup, Totals};
use self::tasks::Task;

pub(crate) fn eval(args: &[String]) -> Result<(), String> {
    let opts = options::parse(args)?;
    let selected = tasks::select(&opts.tasks)?;
    if opts.list {
        let width = selected.iter().map(|t| t.name.len()).max().unwrap_or(0);
        let mut out = String::new();
        for t in &selected {
            out.push_str(&format!("{:<width$}  {}\n", t.name, t.prompt));
        }
        print(&out);
        return Ok(());
    }
    let models = models::resolve(&opts)?;
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
    let url = page::serve(tasks::page_html())?;
    let mut matrix = Vec::new();
    for model in &models {
        // `--server`: this model's own endpoint, reached as `--base-url` would be; stopped
        // when the loop moves on to the next model (or on an error).
        let mut served = serve(&opts, model)?;
        let opts = served
            .as_ref()
            .map_or_else(|| opts.clone(), |(_, o)| o.clone());
        for mode in &opts.modes {
            let setup = describe(&opts, model, mode);
            let rows = run_suite(&binary, &opts, &setup, model, &selected, &url)?;
            if let Some((server, _)) = served.as_mut() {
                server.check_running()?;
            }
            let section = report::section(&setup, &rows);
            print(&section);
            write_section(&opts, &setup.label, &section)?;
            matrix.push(MatrixRow {
                mode: mode.clone(),
                model: model.name.clone(),
                details: setup.label.clone(),
                totals: Totals::of(&rows),
            });
            // Rewritten after every (mode, model), so a long run leaves its table so far.
            if opts.is_matrix() {
                let table = matrix::section(&matrix_setup(&opts, &setup, &selected), &matrix);
                write_section(&opts, &matrix_label(&opts), &table)?;
                if matrix.len() == opts.modes.len() * models.len() {
                    print(&table);
                }
            }
        }
    }
    Ok(())
}

/// `--server`: starts it on `model` (named after it) and returns it with the options that
/// reach it; `None` without `--server`.
fn serve(
    opts: &Options,
    model: &ModelChoice,
) -> Result<Option<(crate::llama_server::Server, Options)>, String> {
    let Some(kind) = opts.server else {
        return Ok(None);
    };
    let file = model
        .path
        .clone()
        .unwrap_or_else(crate::model::default_model_path);
    let log = std::env::temp_dir().join("planwright-eval").join(format!(
        "{}-{}.log",
        kind.name(),
        slug(&model.name)
    ));
    let server = match kind {
        options::Server::LlamaCpp => crate::llama_server::start(&file, &model.name, &log)?,
    };
    let mut reach = opts.clone();
    reach.base_url = Some(server.openai_url());
    reach.model = Some(model.name.clone());
    Ok(Some((server, reach)))
}

/// Every selected task, `--runs` times, on one (mode, model).
fn run_suite(
    binary: &Path,
    opts: &Options,
    setup: &Setup,
    model: &ModelChoice,
    selected: &[&Task],
    url: &str,
) -> Result<Vec<Row>, String> {
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
    for task in selected {
        for n in 1..=opts.runs {
            let name = if opts.runs > 1 {
                format!("{}#{n}", task.name)
            } else {
                task.name.to_string()
            };
            let run = Run {
                binary,
                opts,
                mode: &setup.mode,
                model,
                url,
            };
            let row = run_task(&run, task, &name, &root.join(&name))?;
            crate::report(&format!(
                "  {name}: {} {} in {:.1} s, {} LLM call(s){}",
                row.status,
                if row.verdict.is_ok() { "pass" } else { "FAIL" },
                row.wall_secs,
                row.usage.llm_calls,
                row.cause
                    .as_ref()
                    .map_or_else(String::new, |(c, e)| format!(" — {c}: {e}"))
            ));
            rows.push(row);
        }
    }
    Ok(rows)
}

/// Writes `section` under `label` into docs/eval.md (unless `--no-doc`).
fn write_section(opts: &Options, label: &str, section: &str) -> Result<(), String> {
    if !opts.write_doc {
        return Ok(());
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("docs")
        .join("eval.md");
    let doc = std::fs::read_to_string(&path).unwrap_or_else(|_| INTRO.to_string());
    std::fs::write(&path, report::merge(&doc, label, section))
        .map_err(|e| format!("writing {}: {e}", path.display()))?;
    crate::report(&format!("wrote section '{label}' of {}", path.display()));
    Ok(())
}

/// The mode × model table's label: `mode × model`, after `--label`'s text if given.
fn matrix_label(opts: &Options) -> String {
    match &opts.label {
        Some(label) => format!("{label}: mode × model"),
        None => "mode × model".to_string(),
    }
}

/// What every row of the mode × model table shares (taken from one section's setup).
fn matrix_setup(opts: &Options, setup: &Setup, selected: &[&Task]) -> MatrixSetup {
    MatrixSetup {
        label: matrix_label(opts),
        endpoint: match (opts.server, &opts.base_url) {
            (Some(server), Some(url)) => format!("{} started by the eval on {url}", server.name()),
            (_, Some(url)) => url.clone(),
            (_, None) => "embedded (in-process llama.cpp, `--provider local`)".to_string(),
        },
        timeout_secs: setup.timeout_secs,
        extra_args: setup.extra_args.clone(),
        task_runs: selected.len() * opts.runs as usize,
        date: setup.date.clone(),
        commit: setup.commit.clone(),
    }
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
fn describe(opts: &Options, model: &ModelChoice, mode: &str) -> Setup {
    let endpoint = match (opts.server, &opts.base_url) {
        (Some(server), Some(url)) => format!(
            "{} started by the eval on {url} (model {}; {})",
            server.name(),
            model.name,
            crate::llama_server::cached_binary()
                .ok()
                .flatten()
                .map_or_else(String::new, |b| crate::llama_server::describe(&b))
        ),
        (_, Some(url)) => format!("{url} (model {})", model.name),
        (_, None) => "embedded (in-process llama.cpp, `--provider local`)".to_string(),
    };
    let output = |program: &str, args: &[&str]| {
        Command::new(program)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_else(|| "unknown".to_string())
    };
    Setup {
        label: label(opts, model, mode),
        endpoint,
        model_file: model.file_name.clone(),
        model_sha256: model.sha256.clone(),
        mode: mode.to_string(),
        timeout_secs: opts.timeout.as_secs(),
        extra_args: opts.extra.join(" "),
        date: output("date", &["-u", "+%Y-%m-%d %H:%M UTC"]),
        commit: output("git", &["rev-parse", "--short", "HEAD"]),
        machine: crate::bench::machine(),
    }
}

/// The section's label: `--label` (followed by the model and mode when there are several),
/// else the model, the endpoint and the mode.
fn label(opts: &Options, model: &ModelChoice, mode: &str) -> String {
    match (&opts.label, &opts.base_url) {
        (Some(label), _) if opts.is_matrix() => format!("{label}: {}, {mode}", model.name),
        (Some(label), _) => label.clone(),
        // Not the URL: its port changes from run to run.
        (None, _) if opts.server.is_some() => format!(
            "{} via {} ({mode})",
            model.name,
            opts.server.map_or("", options::Server::name)
        ),
        (None, Some(url)) => format!("{} via {url} ({mode})", model.name),
        (None, None) => format!("{} embedded ({mode})", model.name),
    }
}

/// What one task run needs besides the task: the binary, the options, the (mode, model)
/// and the browser task's page.
struct Run<'a> {
    binary: &'a Path,
    opts: &'a Options,
    mode: &'a str,
    model: &'a ModelChoice,
    url: &'a str,
}

/// One run of one task: fresh folder, planwright with a time limit, checker, cause.
fn run_task(run: &Run<'_>, task: &Task, name: &str, dir: &Path) -> Result<Row, String> {
    let Run {
        binary,
        opts,
        mode,
        model,
        url,
    } = *run;
    let _ = std::fs::remove_dir_all(dir);
    let ws = dir.join("ws");
    std::fs::create_dir_all(&ws).map_err(|e| format!("creating {}: {e}", ws.display()))?;
    inputs::seed(&ws, task.seed)?;
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
        .args(["--mode", mode])
        // The browser task's page is served on 127.0.0.1, which the browser otherwise
        // refuses (docs/security.md, "The browser").
        .arg("--browser-allow-local");
    match &opts.base_url {
        Some(url) => {
            cmd.args(["--base-url", url]);
            if let Some(model) = &opts.model {
                cmd.args(["--model", model]);
            }
        }
        None => {
            cmd.args(["--provider", "local"]);
            if let Some(p) = &model.path {
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
    let judgement = judge::judge(task, &ws);
    let cause =
        cause::of(&observed, &judgement).map(|(c, evidence)| (c.name().to_string(), evidence));
    let status = observed.status();
    Ok(Row {
        completed_without_output: status == "completed" && !judgement.missing_outputs.is_empty(),
        task: name.to_string(),
        status,
        verdict: judgement.verdict,
        cause,
        wall_secs: finished.wall.as_secs_f64(),
        llm_secs: observed.llm_secs(),
        usage: observed.usage(),
        changed_inputs: judgement.changed_inputs,
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

    fn choice(name: &str) -> ModelChoice {
        ModelChoice {
            name: name.to_string(),
            path: None,
            file_name: format!("{name}.gguf"),
            sha256: "abc".to_string(),
        }
    }

    /// One (mode, model) keeps today's labels; several get the model and mode after
    /// `--label`'s text, so each has its own section.
    #[test]
    fn labels_name_the_model_and_mode() {
        let parsed = |a: &[&str]| {
            options::parse(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>()).expect("valid")
        };
        let q = choice("qwen2.5-coder-1.5b");
        assert_eq!(
            label(&parsed(&["--mode", "flow"]), &q, "flow"),
            "qwen2.5-coder-1.5b embedded (flow)"
        );
        assert_eq!(label(&parsed(&["--label", "x"]), &q, "auto"), "x");
        let many = parsed(&["--label", "after 28", "--modes", "direct,flow"]);
        assert_eq!(
            label(&many, &q, "direct"),
            "after 28: qwen2.5-coder-1.5b, direct"
        );
        assert_eq!(matrix_label(&many), "after 28: mode × model");
        assert_eq!(matrix_label(&Options::default()), "mode × model");
        let server = parsed(&["--base-url", "http://h/v1", "--model", "m"]);
        assert_eq!(
            label(&server, &choice("m"), "auto"),
            "m via http://h/v1 (auto)"
        );
        // A started server's port changes from run to run; the label does not.
        let mut started = parsed(&["--server", "llama-cpp"]);
        started.base_url = Some("http://127.0.0.1:40123/v1".to_string());
        assert_eq!(
            label(&started, &q, "auto"),
            "qwen2.5-coder-1.5b via llama-server (auto)"
        );
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
