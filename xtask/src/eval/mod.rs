//! `cargo xtask eval`: a real-model eval on generated tasks with programmatic checkers
//! (docs/eval.md).
//!
//! Generates the instances of every task family for the dev split (a fixed seed) and the
//! test split (a new seed each run, printed), builds the release `planwright` (or takes
//! `--binary`), then, for each model, mode and action kind asked for, runs every instance
//! in a fresh folder — `ws/` seeded with its files, its own `--db` — with a time limit,
//! reads the JSON outcome and the run's events, checks that the seeded inputs the task did
//! not ask to change are unchanged and that the workspace holds the answer, names the cause
//! of each failure, prints the report (and the dev failures' transcripts), writes it into
//! docs/eval.md under the run's label and appends its records to docs/eval-history.jsonl;
//! with several modes, models or action kinds, a matrix table too. With `--server
//! llama-cpp` it starts llama.cpp's `llama-server` on each model (crate::llama_server) and
//! runs the instances through it as through `--base-url`. It shells out to `planwright`; it
//! must not depend on project crates.

mod cause;
mod checks;
mod families;
mod family;
mod history;
mod inputs;
mod instance;
mod judge;
mod matrix;
mod mcp;
mod models;
mod options;
mod outcome;
mod page;
mod report;
mod rng;
mod runner;
mod splits;
mod transcript;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use self::family::Family;
use self::instance::{Category, Instance, URL_PLACEHOLDER};
use self::matrix::{MatrixRow, MatrixSetup};
use self::models::ModelChoice;
use self::options::Options;
use self::outcome::Observed;
use self::report::{Row, Setup, Totals};
use self::splits::{Split, DEV_SEED};

/// The instances of one split.
struct SplitRun {
    split: Split,
    seed: u64,
    instances: Vec<Instance>,
}

pub(crate) fn eval(args: &[String]) -> Result<(), String> {
    let opts = options::parse(args)?;
    let selected = families::select(&opts.families)?;
    let test_seed = opts.seed.unwrap_or_else(splits::fresh_seed);
    let plan: Vec<SplitRun> = opts
        .splits
        .list()
        .into_iter()
        .map(|split| {
            let seed = match split {
                Split::Dev => DEV_SEED,
                Split::Test => test_seed,
            };
            SplitRun {
                split,
                seed,
                instances: splits::instances(&selected, split, seed, opts.per_family),
            }
        })
        .collect();
    if opts.list {
        print(&listing(&selected, &plan, opts.show_transcripts));
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
    let pages = page::serve()?;
    let mut matrix = Vec::new();
    let combinations = models.len() * opts.modes.len() * opts.action_runs().len();
    for model in &models {
        // `--server`: this model's own endpoint, reached as `--base-url` would be; stopped
        // when the loop moves on to the next model (or on an error).
        let mut served = serve(&opts, model)?;
        let opts = served
            .as_ref()
            .map_or_else(|| opts.clone(), |(_, o)| o.clone());
        for mode in &opts.modes {
            for actions in opts.action_runs() {
                let setup = describe(
                    &opts,
                    model,
                    mode,
                    actions.as_deref(),
                    &plan,
                    selected.len(),
                );
                let run = Run {
                    binary: &binary,
                    opts: &opts,
                    mode,
                    actions: actions.as_deref(),
                    model,
                    pages: &pages,
                };
                let (rows, transcripts) = run_suite(&run, &setup, &plan)?;
                if let Some((server, _)) = served.as_mut() {
                    server.check_running()?;
                }
                let section = report::section(&setup, &rows, opts.show_transcripts);
                print(&section);
                if !transcripts.is_empty() {
                    print(&transcripts);
                }
                write_section(&opts, &setup.label, &section)?;
                if opts.write_doc {
                    let records: Vec<Value> = plan
                        .iter()
                        .map(|p| history::record(&setup, &model.name, p.split, p.seed, &rows))
                        .collect();
                    history::append(&docs_dir().join("eval-history.jsonl"), &records)?;
                }
                matrix.push(matrix_row(
                    &opts,
                    model,
                    mode,
                    actions.as_deref(),
                    &setup,
                    &rows,
                ));
                // Rewritten after every combination, so a long run leaves its table so far.
                if opts.is_matrix() {
                    let table = matrix::section(
                        &matrix_setup(&opts, &setup, &plan, selected.len()),
                        &matrix,
                    );
                    write_section(&opts, &matrix_label(&opts), &table)?;
                    if matrix.len() == combinations {
                        print(&table);
                    }
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

/// How many variants and (variant, phrasing) pairs a family shows over 400 seeds.
fn shape(family: &Family) -> (usize, usize) {
    let mut seen: Vec<(&str, usize)> = (0..400)
        .map(|seed| {
            let i = (family.generate)(&mut rng::Rng::new(seed));
            (i.variant, i.phrasing)
        })
        .collect();
    seen.sort_unstable();
    seen.dedup();
    let mut variants: Vec<&str> = seen.iter().map(|(v, _)| *v).collect();
    variants.dedup();
    (variants.len(), seen.len())
}

/// `--list`: the families (name, category, language, variants, phrasings, what they ask),
/// how many instances each split makes (per category), and the instances' texts: the dev
/// split's always, the test split's with `--show-transcripts` (they are hidden otherwise).
/// Runs nothing.
fn listing(selected: &[&Family], plan: &[SplitRun], show_test_texts: bool) -> String {
    let mut s = String::new();
    let width = selected.iter().map(|f| f.name.len()).max().unwrap_or(0);
    for f in selected {
        let (variants, phrasings) = shape(f);
        let _ = writeln!(
            s,
            "{:<width$}  {:<6}  {}  {variants} variants, {phrasings:>2} phrasings  {}",
            f.name,
            f.category.name(),
            f.language,
            f.about.split_whitespace().collect::<Vec<_>>().join(" ")
        );
    }
    let languages = {
        let mut l: Vec<&str> = selected.iter().map(|f| f.language).collect();
        l.sort_unstable();
        l.dedup();
        l.join(", ")
    };
    let _ = writeln!(s, "\n{} families (languages: {languages})", selected.len());
    for p in plan {
        let per: Vec<String> = Category::ALL
            .iter()
            .map(|c| {
                let n = p.instances.iter().filter(|i| i.category == *c).count();
                format!("{n} {}", c.name())
            })
            .collect();
        let _ = writeln!(
            s,
            "{} split, seed {}: {} instances ({})",
            p.split.name(),
            p.seed,
            p.instances.len(),
            per.join(", ")
        );
    }
    for p in plan {
        if p.split == Split::Test && !show_test_texts {
            continue;
        }
        let _ = writeln!(s, "\n{} split, seed {}:", p.split.name(), p.seed);
        for i in &p.instances {
            let _ = writeln!(
                s,
                "\n{} ({}, {}):\n  {}",
                i.id,
                i.category.name(),
                i.variant,
                i.text.replace('\n', "\n  ")
            );
        }
    }
    s
}

/// What one instance run needs besides the instance.
struct Run<'a> {
    binary: &'a Path,
    opts: &'a Options,
    mode: &'a str,
    actions: Option<&'a str>,
    model: &'a ModelChoice,
    pages: &'a page::Pages,
}

/// Every instance of every split on one (mode, model, actions): the rows, and the
/// transcripts of the failures that may be shown (the dev split's; the test split's with
/// `--show-transcripts`).
fn run_suite(
    run: &Run<'_>,
    setup: &Setup,
    plan: &[SplitRun],
) -> Result<(Vec<Row>, String), String> {
    let root = std::env::temp_dir()
        .join("planwright-eval")
        .join(slug(&setup.label));
    let total: usize = plan.iter().map(|p| p.instances.len()).sum();
    crate::report(&format!(
        "eval '{}': {total} instance(s) ({}), workspaces under {}",
        setup.label,
        plan.iter()
            .map(|p| format!(
                "{} {} with seed {}",
                p.instances.len(),
                p.split.name(),
                p.seed
            ))
            .collect::<Vec<_>>()
            .join(", "),
        root.display()
    ));
    let mut rows = Vec::new();
    let mut transcripts = String::new();
    for p in plan {
        let shown = p.split == Split::Dev || run.opts.show_transcripts;
        for (n, instance) in p.instances.iter().enumerate() {
            let dir = root.join(p.split.name()).join(&instance.id);
            let (row, text, transcript) = run_instance(run, instance, p.split, &dir)?;
            let cause = match (&row.cause, shown) {
                (Some((c, e)), true) => format!(" — {c}: {e}"),
                (Some((c, _)), false) => format!(" — {c}"),
                (None, _) => String::new(),
            };
            crate::report(&format!(
                "  [{} {}/{}] {} ({}): {} {}{} in {:.1} s, {} LLM call(s){cause}",
                p.split.name(),
                n + 1,
                p.instances.len(),
                instance.id,
                instance.category.name(),
                row.status,
                if row.verdict.is_ok() { "pass" } else { "FAIL" },
                if row.verified { " (verified)" } else { "" },
                row.wall_secs,
                row.usage.llm_calls,
            ));
            if shown && row.verdict.is_err() {
                let _ = write!(
                    transcripts,
                    "\n### {} split: {} ({}, {})\n\nTask: {}\n\nVerdict: {}\n\n```text\n{}```\n",
                    p.split.name(),
                    instance.id,
                    instance.category.name(),
                    instance.variant,
                    text.replace('\n', " "),
                    row.verdict.as_ref().err().map_or("", String::as_str),
                    transcript
                );
            }
            rows.push(row);
        }
    }
    if !transcripts.is_empty() {
        transcripts.insert_str(
            0,
            &format!("\n## Transcripts of the failures: {}\n", setup.label),
        );
        let path = root.join("transcripts.md");
        std::fs::write(&path, &transcripts)
            .map_err(|e| format!("writing {}: {e}", path.display()))?;
        crate::report(&format!("transcripts written to {}", path.display()));
    }
    Ok((rows, transcripts))
}

/// One run of one instance: fresh folder, planwright with a time limit, checks, cause; the
/// row, the task's text as sent (the page's address in it) and, for a failure, the
/// transcript.
fn run_instance(
    run: &Run<'_>,
    instance: &Instance,
    split: Split,
    dir: &Path,
) -> Result<(Row, String, String), String> {
    let Run {
        binary,
        opts,
        mode,
        actions,
        model,
        pages,
    } = *run;
    let _ = std::fs::remove_dir_all(dir);
    let ws = dir.join("ws");
    std::fs::create_dir_all(&ws).map_err(|e| format!("creating {}: {e}", ws.display()))?;
    inputs::seed(&ws, &instance.seed)?;
    if !instance.library.is_empty() {
        mcp::set_up(&target_dir(), dir, &instance.library)?;
    }
    let text = match &instance.page {
        Some(html) => {
            let url = pages.add(&format!("{}-{}", split.name(), instance.id), html);
            instance.text.replace(URL_PLACEHOLDER, &url)
        }
        None => instance.text.clone(),
    };
    let db = dir.join("run.db");
    let mut cmd = Command::new(binary);
    cmd.arg("run")
        .arg("--json")
        .arg("--db")
        .arg(&db)
        .arg("--workspace")
        .arg(&ws)
        .args(["--mode", mode])
        // The browser family's pages are served on 127.0.0.1, which the browser otherwise
        // refuses (docs/security.md, "The browser").
        .arg("--browser-allow-local");
    if let Some(a) = actions {
        cmd.args(["--actions", a]);
    }
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
    for answer in &instance.answers {
        cmd.args(["--answer", answer]);
    }
    // Named with --config: a run folder's own planwright.toml is read only once the folder
    // is trusted (docs/security.md), and the eval records nothing in the user's config.
    if !instance.library.is_empty() {
        cmd.arg("--config").arg(dir.join("planwright.toml"));
    }
    cmd.args(&opts.extra).arg("--").arg(&text).current_dir(dir);
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
    let judgement = judge::judge(instance, &ws, &dir.join("check"));
    let cause =
        cause::of(&observed, &judgement).map(|(c, evidence)| (c.name().to_string(), evidence));
    let status = observed.status();
    let transcript = if judgement.verdict.is_err() {
        transcript::of(&observed.events)
    } else {
        String::new()
    };
    let row = Row {
        completed_without_output: status == "completed" && !judgement.missing_outputs.is_empty(),
        id: instance.id.clone(),
        family: instance.family.to_string(),
        category: instance.category,
        split,
        status,
        verified: observed.verified(),
        verdict: judgement.verdict,
        cause,
        wall_secs: finished.wall.as_secs_f64(),
        llm_secs: observed.llm_secs(),
        usage: observed.usage(),
        changed_inputs: judgement.changed_inputs,
    };
    Ok((row, text, transcript))
}

/// The matrix row of one (mode, model, actions).
fn matrix_row(
    opts: &Options,
    model: &ModelChoice,
    mode: &str,
    actions: Option<&str>,
    setup: &Setup,
    rows: &[Row],
) -> MatrixRow {
    let of = |split: Split| rows.iter().filter(move |r| r.split == split);
    let ran = |split: Split| opts.splits.list().contains(&split);
    MatrixRow {
        mode: mode.to_string(),
        model: model.name.clone(),
        actions: actions.unwrap_or("default").to_string(),
        details: setup.label.clone(),
        test: ran(Split::Test).then(|| {
            let per =
                Category::ALL.map(|c| Totals::of(of(Split::Test).filter(|r| r.category == c)));
            (Totals::of(of(Split::Test)), per)
        }),
        dev: ran(Split::Dev).then(|| Totals::of(of(Split::Dev))),
    }
}

/// Writes `section` under `label` into docs/eval.md (unless `--no-doc`).
fn write_section(opts: &Options, label: &str, section: &str) -> Result<(), String> {
    if !opts.write_doc {
        return Ok(());
    }
    let path = docs_dir().join("eval.md");
    let doc = std::fs::read_to_string(&path).unwrap_or_else(|_| INTRO.to_string());
    std::fs::write(&path, report::merge(&doc, label, section))
        .map_err(|e| format!("writing {}: {e}", path.display()))?;
    crate::report(&format!("wrote section '{label}' of {}", path.display()));
    Ok(())
}

fn docs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("docs")
}

/// The matrix table's label: `mode × model`, after `--label`'s text if given.
fn matrix_label(opts: &Options) -> String {
    match &opts.label {
        Some(label) => format!("{label}: mode × model"),
        None => "mode × model".to_string(),
    }
}

/// What every row of the matrix table shares (taken from one section's setup).
fn matrix_setup(opts: &Options, setup: &Setup, plan: &[SplitRun], families: usize) -> MatrixSetup {
    MatrixSetup {
        label: matrix_label(opts),
        endpoint: match (opts.server, &opts.base_url) {
            (Some(server), Some(url)) => format!("{} started by the eval on {url}", server.name()),
            (_, Some(url)) => url.clone(),
            (_, None) => "embedded (in-process llama.cpp, `--provider local`)".to_string(),
        },
        timeout_secs: setup.timeout_secs,
        extra_args: setup.extra_args.clone(),
        per_family: opts.per_family,
        families,
        test_seed: plan.iter().find(|p| p.split == Split::Test).map(|p| p.seed),
        date: setup.date.clone(),
        commit: setup.commit.clone(),
    }
}

/// The head of a new docs/eval.md; sections are appended below it.
const INTRO: &str = "# Eval: real models on generated tasks\n\n\
Written by `cargo xtask eval` (xtask/src/eval/). Each section is one run, headed by its \
label; re-running a label replaces its section.\n\n";

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

/// The section's heading facts: endpoint, model file and hash, mode, actions, seeds,
/// machine.
fn describe(
    opts: &Options,
    model: &ModelChoice,
    mode: &str,
    actions: Option<&str>,
    plan: &[SplitRun],
    families: usize,
) -> Setup {
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
        label: label(opts, model, mode, actions),
        endpoint,
        model_file: model.file_name.clone(),
        model_sha256: model.sha256.clone(),
        mode: mode.to_string(),
        actions: match actions {
            Some(a) => format!("`--actions {a}`"),
            None => "the binary's default".to_string(),
        },
        timeout_secs: opts.timeout.as_secs(),
        extra_args: opts.extra.join(" "),
        date: output("date", &["-u", "+%Y-%m-%d %H:%M UTC"]),
        commit: output("git", &["rev-parse", "--short", "HEAD"]),
        per_family: opts.per_family,
        families,
        seeds: plan.iter().map(|p| (p.split, p.seed)).collect(),
        check_programs: checks::sandbox_note().to_string(),
        machine: crate::bench::machine(),
    }
}

/// The section's label: `--label` (followed by the model, mode and action kind when there
/// are several), else the model, the endpoint, the mode and the action kind.
fn label(opts: &Options, model: &ModelChoice, mode: &str, actions: Option<&str>) -> String {
    let actions = actions.map_or_else(String::new, |a| format!(", {a}"));
    match (&opts.label, &opts.base_url) {
        (Some(label), _) if opts.is_matrix() => format!("{label}: {}, {mode}{actions}", model.name),
        (Some(label), _) => label.clone(),
        // Not the URL: its port changes from run to run.
        (None, _) if opts.server.is_some() => format!(
            "{} via {} ({mode}{actions})",
            model.name,
            opts.server.map_or("", options::Server::name)
        ),
        (None, Some(url)) => format!("{} via {url} ({mode}{actions})", model.name),
        (None, None) => format!("{} embedded ({mode}{actions})", model.name),
    }
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

    fn parsed(a: &[&str]) -> Options {
        options::parse(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>()).expect("valid")
    }

    /// One combination keeps the plain labels; several get the model, mode and action
    /// kind after `--label`'s text, so each has its own section.
    #[test]
    fn labels_name_the_model_mode_and_actions() {
        let q = choice("qwen2.5-coder-1.5b");
        assert_eq!(
            label(&parsed(&["--mode", "flow"]), &q, "flow", None),
            "qwen2.5-coder-1.5b embedded (flow)"
        );
        assert_eq!(label(&parsed(&["--label", "x"]), &q, "auto", None), "x");
        let many = parsed(&["--label", "after 43", "--modes", "direct,flow"]);
        assert_eq!(
            label(&many, &q, "direct", None),
            "after 43: qwen2.5-coder-1.5b, direct"
        );
        let kinds = parsed(&["--label", "code vs tools", "--actions", "code,tools"]);
        assert_eq!(
            label(&kinds, &q, "auto", Some("tools")),
            "code vs tools: qwen2.5-coder-1.5b, auto, tools"
        );
        assert_eq!(matrix_label(&many), "after 43: mode × model");
        assert_eq!(matrix_label(&Options::default()), "mode × model");
        let server = parsed(&["--base-url", "http://h/v1", "--model", "m"]);
        assert_eq!(
            label(&server, &choice("m"), "auto", None),
            "m via http://h/v1 (auto)"
        );
        // A started server's port changes from run to run; the label does not.
        let mut started = parsed(&["--server", "llama-cpp"]);
        started.base_url = Some("http://127.0.0.1:40123/v1".to_string());
        assert_eq!(
            label(&started, &q, "auto", None),
            "qwen2.5-coder-1.5b via llama-server (auto)"
        );
        assert_eq!(
            label(&started, &q, "dag", Some("code")),
            "qwen2.5-coder-1.5b via llama-server (dag, code)"
        );
    }

    #[test]
    fn the_listing_counts_the_instances_and_shows_test_texts_only_when_asked() {
        let fams =
            families::select(&["csv_extract".to_string(), "es_edit".to_string()]).expect("known");
        let split = |split: Split, seed: u64| SplitRun {
            split,
            seed,
            instances: splits::instances(&fams, split, seed, 2),
        };
        let plan = vec![split(Split::Dev, DEV_SEED), split(Split::Test, 77)];
        let text = listing(&fams, &plan, false);
        assert!(
            text.starts_with(
                "csv_extract  single  en  4 variants, 14 phrasings  a fact read off a CSV file"
            ),
            "{text}"
        );
        assert!(
            text.contains("\n2 families (languages: en, es)\n"),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "dev split, seed {DEV_SEED}: 4 instances (2 single, 2 edit, 0 multi)"
            )),
            "{text}"
        );
        assert!(
            text.contains("test split, seed 77: 4 instances (2 single, 2 edit, 0 multi)"),
            "{text}"
        );
        assert!(text.contains("csv_extract-02 (single, "), "{text}");
        assert!(text.contains(&plan[0].instances[0].text), "{text}");
        assert!(!text.contains(&plan[1].instances[0].text), "{text}");
        let shown = listing(&fams, &plan, true);
        assert!(shown.contains(&plan[1].instances[0].text), "{shown}");
        let err = families::select(&["nope".to_string()]).expect_err("unknown");
        assert!(
            err.contains("unknown family 'nope'") && err.contains("bug_fix"),
            "{err}"
        );
    }

    /// docs/eval.md's families table is the registry's: a row per family with its
    /// category, language, variant and phrasing counts and description, nothing else.
    #[test]
    fn the_docs_table_lists_every_family_as_generated() {
        let doc = std::fs::read_to_string(docs_dir().join("eval.md")).expect("docs/eval.md");
        for f in families::FAMILIES {
            let (variants, phrasings) = shape(f);
            let row = format!(
                "| `{}` | {} | {} | {variants} | {phrasings} | {} |",
                f.name,
                f.category.name(),
                f.language,
                f.about.split_whitespace().collect::<Vec<_>>().join(" ")
            );
            assert!(doc.contains(&row), "docs/eval.md lacks the row\n{row}");
        }
        let rows = doc
            .lines()
            .filter(|l| l.starts_with("| `") && l.matches(" | ").count() == 5)
            .count();
        assert_eq!(rows, families::FAMILIES.len());
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
