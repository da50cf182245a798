//! # planwright
//!
//! The `planwright` binary: reads the command line and environment, wires adapters into the
//! domain's ports (adapters are picked with cargo features), runs tasks and prints results.
//! Only this crate's output layer (`view`, `report`) writes to the terminal.
//!
//! Exit codes: 0 the run completed, 1 the run failed, 2 a usage or configuration error.

mod cli;
mod completions;
mod config;
mod database;
mod doctor;
mod environ;
mod jsonl;
mod mailbox;
mod mcp;
mod owner;
mod panel;
mod report;
mod safe_text;
mod sandbox;
mod scripted_user;
mod server;
mod state_folder;
mod terminal;
mod terminal_user;
mod view;
mod wiring;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use domain::ports::{RunStatus, RunStore};
use domain::{RunControl, RunRequest, Runtime};

use crate::cli::{
    Cli, Command, ConfigCommand, McpCommand, OutputArg, ResumeArgs, RunArgs, RunsCommand,
    ToolsCommand,
};
use crate::database::Database;

/// The app's error enum; each variant maps to an exit code.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// Bad usage or configuration: exit code 2.
    #[error("{0}")]
    Config(String),
    /// The run named does not exist: exit code 2, like other bad input.
    #[error("{0}")]
    NotFound(String),
    /// The run could not be carried out (store failure): exit code 1.
    #[error("{0}")]
    Run(String),
    /// Stopped by the user (a second Ctrl-C): exit code 130, like a shell.
    #[error("{0}")]
    Stopped(String),
}

impl AppError {
    fn exit_code(&self) -> u8 {
        match self {
            AppError::Config(_) | AppError::NotFound(_) => 2,
            AppError::Run(_) => 1,
            AppError::Stopped(_) => 130,
        }
    }
}

fn main() -> ExitCode {
    // Before anything reads the environment or starts a thread (see `environ`).
    let environ_notes = environ::protect();
    let (cli, loaded) = match config::parse() {
        Ok(parsed) => parsed,
        Err(e) => {
            let json = std::env::args().any(|a| a == "--json");
            return fail(&e.into(), json);
        }
    };
    let json = wants_json(&cli);
    if let Some(arg) = sandbox_arg(&cli) {
        sandbox::probe_in_background(arg);
    }
    let terminal = terminal::init(cli.verbosity);
    init_tracing(cli.verbosity, terminal.colour_stderr);
    for note in environ_notes.iter().chain(&loaded.layers.notes) {
        tracing::warn!("{note}");
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            return fail(
                &AppError::Run(format!("cannot start the async runtime: {e}")),
                json,
            )
        }
    };
    match runtime.block_on(dispatch(cli, loaded)) {
        Ok(code) => code,
        Err(e) => fail(&e, json),
    }
}

/// The `--sandbox` of a command that runs shell commands.
fn sandbox_arg(cli: &Cli) -> Option<cli::SandboxArg> {
    match &cli.command {
        Command::Run(args) => Some(args.opts.sandbox),
        Command::Resume(args) => Some(args.opts.sandbox),
        Command::Serve(args) => Some(args.opts.sandbox),
        Command::Worker(args) => Some(args.opts.sandbox),
        _ => None,
    }
}

/// Whether the command was asked for JSON on stdout (`--json`).
fn wants_json(cli: &Cli) -> bool {
    match &cli.command {
        Command::Run(args) => args.opts.json,
        Command::Resume(args) => args.opts.json,
        Command::Runs {
            command:
                RunsCommand::List { json }
                | RunsCommand::Show { json, .. }
                | RunsCommand::Events { json, .. },
        }
        | Command::Config {
            command: ConfigCommand::Show { json },
        } => *json,
        _ => false,
    }
}

/// Reports `e` on stderr and, for `--json`, as one object on stdout too: a script reading
/// stdout always gets an answer.
fn fail(e: &AppError, json: bool) -> ExitCode {
    let _ = writeln!(std::io::stderr(), "error: {e}");
    if json {
        let status = match e {
            AppError::Stopped(_) => "stopped",
            _ => "error",
        };
        let value = serde_json::json!({
            "status": status,
            "error": e.to_string(),
            "exit_code": e.exit_code(),
        });
        print_stdout(&format!("{value}\n"));
    }
    ExitCode::from(e.exit_code())
}

/// The log on stderr: `-q`/`-v`/`-vv`, else `PLANWRIGHT_LOG`, else `RUST_LOG`, else
/// warnings (`terminal::log_filter`); coloured only on a terminal without `NO_COLOR`.
fn init_tracing(verbosity: cli::Verbosity, colour: bool) {
    let directives = terminal::log_filter(
        verbosity,
        std::env::var("PLANWRIGHT_LOG").ok(),
        std::env::var("RUST_LOG").ok(),
    );
    let filter = tracing_subscriber::EnvFilter::try_new(&directives)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(colour)
        .with_target(false)
        .try_init();
}

async fn dispatch(cli: Cli, loaded: config::Loaded) -> Result<ExitCode, AppError> {
    // Once per process: every run built from here on is offered the same servers.
    mcp::declare(&loaded.layers)?;
    match cli.command {
        Command::Run(args) => run(&cli.db, args).await,
        Command::Resume(args) => resume(&cli.db, args).await,
        Command::Tools {
            command: ToolsCommand::List { opts },
        } => tools_list(&opts).await,
        Command::Mcp { command } => match command {
            McpCommand::Serve(args) => server::mcp::stdio::serve(&cli.db, *args).await,
            McpCommand::List => {
                print_stdout(&mcp::list().await?);
                Ok(ExitCode::SUCCESS)
            }
            McpCommand::Check { name } => {
                print_stdout(&mcp::check(&name).await?);
                Ok(ExitCode::SUCCESS)
            }
        },
        Command::Serve(args) => server::serve(&cli.db, args).await,
        Command::Worker(args) => server::work(&cli.db, args).await,
        Command::Token { command } => {
            let printed = server::tokens::run(&cli.db.local_folder(), command)?;
            if let Some(note) = printed.note.filter(|_| !terminal::get().quiet) {
                let _ = writeln!(std::io::stderr(), "{note}");
            }
            print_stdout(&printed.out);
            Ok(ExitCode::SUCCESS)
        }
        Command::Runs { command } => runs(&cli.db, command).await,
        Command::Config { command } => {
            print_stdout(&config::run(&loaded, command)?);
            Ok(ExitCode::SUCCESS)
        }
        Command::Trust { path } => {
            let folder = path.unwrap_or_else(|| PathBuf::from("."));
            let mut out = config::trust_folder(&loaded, &folder)?;
            if let Some(note) = state_folder::adopt(&folder.join(state_folder::STATE_FOLDER))? {
                out.push_str(&note);
            }
            print_stdout(&out);
            Ok(ExitCode::SUCCESS)
        }
        Command::Completions { shell } => {
            completions::print(shell);
            Ok(ExitCode::SUCCESS)
        }
        Command::Doctor(args) => Ok(doctor::doctor(&cli.db, &args).await),
    }
}

fn print_stdout(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

async fn run(db: &Database, args: RunArgs) -> Result<ExitCode, AppError> {
    let task = args.task.join(" ").trim().to_string();
    if task.is_empty() {
        return Err(AppError::Config("the task is empty".into()));
    }
    let opts = &args.opts;
    let llm = wiring::llm(opts)?;
    let opened = db.open().await?;
    let mut runtime: Runtime = wiring::runtime(llm.client.clone(), opened.store.clone(), opts)?;
    if args.output == OutputArg::Jsonl {
        runtime.sink = Arc::new(jsonl::JsonLines::new(runtime.sink.clone()));
    }
    if !args.answers.is_empty() {
        runtime.user = Arc::new(scripted_user::ScriptedUser::new(
            args.answers.clone(),
            terminal_user::TerminalUser,
        ));
    }
    let run_id = runtime.new_run_id();
    let workspace = prepare_workspace(opts.workspace.as_deref(), &run_id)?;
    let control = stop_on_signals();
    let _reading = read_mailbox(&opened, &runtime, &run_id, &control);
    let outcome = runtime
        .run_with(
            RunRequest {
                run_id: run_id.clone(),
                task,
                workspace: workspace.clone(),
            },
            control,
        )
        .await
        .map_err(|e| stopped(e, &run_id))?;
    finish(
        &outcome,
        &workspace.display().to_string(),
        stdout_of(opts, args.output),
        &llm,
    )
}

/// What `run` and `resume` print on stdout at the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Finish {
    Text,
    Json,
    /// `--output jsonl`: the events were the output; nothing more.
    Nothing,
}

fn stdout_of(opts: &cli::RunOptions, output: OutputArg) -> Finish {
    match (output, opts.json) {
        (OutputArg::Jsonl, _) => Finish::Nothing,
        (OutputArg::Text, true) => Finish::Json,
        (OutputArg::Text, false) => Finish::Text,
    }
}

async fn resume(db: &Database, args: ResumeArgs) -> Result<ExitCode, AppError> {
    let opts = &args.opts;
    let llm = wiring::llm(opts)?;
    let opened = db.open().await?;
    let store = opened.store.clone();
    let record = store
        .get_run(&args.run_id)
        .await
        .map_err(|e| AppError::Run(format!("reading {}: {e}", db)))?
        .ok_or_else(|| AppError::NotFound(format!("no run with id '{}' in {}", args.run_id, db)))?;
    if record.status == RunStatus::Queued {
        return Err(AppError::Config(format!(
            "run '{}' is queued and has not started; `planwright serve` on {} starts it",
            args.run_id, db
        )));
    }
    let mut runtime: Runtime = wiring::runtime(llm.client.clone(), store.clone(), opts)?;
    // The live view starts from the stored plan: the resumed run does not announce it.
    if let Ok(Some(plan)) = store.latest_plan(&args.run_id).await {
        let sandbox = sandbox::resolve(opts.sandbox)?;
        runtime.sink = Arc::new(view::ConsoleView::resuming(plan).with_sandbox(sandbox.name()));
    }
    if args.output == OutputArg::Jsonl {
        runtime.sink = Arc::new(jsonl::JsonLines::new(runtime.sink.clone()));
    }
    let control = stop_on_signals();
    let _reading = read_mailbox(&opened, &runtime, &args.run_id, &control);
    let outcome = runtime
        // The lease is taken first, in one compare-and-set: of several `resume` commands on
        // one run exactly one goes on; a lease whose owner is provably gone is taken at once.
        .resume_with(&args.run_id, control, report::stale_owner(&record))
        .await
        .map_err(|e| match e {
            domain::Error::Config(m) => AppError::Config(m),
            e @ domain::Error::UnknownRun(_) => AppError::NotFound(e.to_string()),
            e @ domain::Error::Leased { .. } => AppError::Config(e.to_string()),
            other => stopped(other, &args.run_id),
        })?;
    finish(
        &outcome,
        &record.workspace,
        stdout_of(opts, args.output),
        &llm,
    )
}

/// `planwright tools list`: every tool offered, and why a family is not (MCP servers are
/// started to list theirs).
async fn tools_list(opts: &cli::RunOptions) -> Result<ExitCode, AppError> {
    let (set, families) = wiring::tools(opts, domain::StepLimits::default().max_observation_bytes)?;
    let mut out = String::new();
    for f in &families {
        match &f.not_offered {
            None => out.push_str(&format!("{}: {}\n", f.family, f.tools.join(", "))),
            Some(why) => out.push_str(&format!("{}: not offered ({why})\n", f.family)),
        }
    }
    let (mcp_lines, mcp_tools) = mcp::tools_lines(&opts.disabled_tools).await;
    out.push_str(&mcp_lines);
    out.push_str(&format!(
        "always: complete_step, message_notify_user, message_ask_user\n{} tools offered in all\n",
        set.names().len() + mcp_tools + 3
    ));
    print_stdout(&out);
    Ok(ExitCode::SUCCESS)
}

/// Ctrl-C cancels the run cleanly (a summary is still written); a second Ctrl-C quits.
/// Reads the run's mailbox while the CLI runs it, so that a server on the same database
/// can cancel it (`POST /v1/runs/{id}/cancel`). Answers go to the terminal's user only;
/// one posted from elsewhere is dropped. Stops when the guard is dropped.
fn read_mailbox(
    opened: &database::QueueStore,
    runtime: &Runtime,
    run_id: &str,
    control: &RunControl,
) -> tokio_util::sync::DropGuard {
    let done = tokio_util::sync::CancellationToken::new();
    let reader = mailbox::MailboxReader {
        mailbox: opened.mailbox.clone(),
        changes: opened.changes.clone(),
        run_id: run_id.to_string(),
        owner: runtime.config.lease.owner.clone(),
    };
    tokio::spawn(reader.run(control.cancel.clone(), |_| false, done.clone()));
    done.drop_guard()
}

/// How the CLI stops a run: the first Ctrl-C or SIGTERM cancels it (the run ends `failed`,
/// "the run was cancelled", with a summary); a second one suspends it (it stops at the next
/// safe point, without a summary, its tools closed and its lease released); a third quits.
fn stop_on_signals() -> RunControl {
    let control = RunControl::default();
    let signals = control.clone();
    tokio::spawn(async move {
        let mut term =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        if !next_signal(&mut term).await {
            return;
        }
        let _ = writeln!(
            std::io::stderr(),
            "\ninterrupted: cancelling the run (again: stop at once, resumable)"
        );
        signals.cancel.cancel();
        if !next_signal(&mut term).await {
            return;
        }
        let _ = writeln!(
            std::io::stderr(),
            "\nstopping at the next safe point (again: quit now)"
        );
        signals.suspend.cancel();
        if next_signal(&mut term).await {
            std::process::exit(130);
        }
    });
    control
}

/// The next Ctrl-C or SIGTERM; false when signals cannot be received.
async fn next_signal(term: &mut Option<tokio::signal::unix::Signal>) -> bool {
    match term {
        Some(t) => tokio::select! {
            r = tokio::signal::ctrl_c() => r.is_ok(),
            r = t.recv() => r.is_some(),
        },
        None => tokio::signal::ctrl_c().await.is_ok(),
    }
}

/// The app error of a run that ended without an outcome.
fn stopped(e: domain::Error, run_id: &str) -> AppError {
    match e {
        domain::Error::Suspended => AppError::Stopped(format!(
            "the run was stopped; `planwright resume {run_id}` goes on from where it stopped"
        )),
        other => AppError::Run(format!("the run could not go on: {other}")),
    }
}

/// Prints the outcome and picks the exit code.
fn finish(
    outcome: &domain::RunOutcome,
    workspace: &str,
    output: Finish,
    llm: &wiring::LlmSetup,
) -> Result<ExitCode, AppError> {
    match output {
        Finish::Json => {
            let value = report::outcome_json(outcome, workspace);
            print_stdout(&format!("{value}\n"));
        }
        Finish::Text => print_stdout(&report::outcome_text(outcome)),
        Finish::Nothing => {}
    }
    // A replay that diverged (or a recording that failed) fails the run, even a completed one.
    if let Some(problem) = llm.problem() {
        return Err(AppError::Run(problem));
    }
    Ok(match outcome.status {
        RunStatus::Completed => ExitCode::SUCCESS,
        _ => ExitCode::from(1),
    })
}

/// The run's workspace: the given folder, or `./.planwright/runs/<run_id>/workspace`;
/// created when missing and returned as an absolute path.
/// Where runs' workspaces live unless told otherwise: `<root>/<run_id>/workspace`.
pub(crate) const DEFAULT_WORKSPACE_ROOT: &str = ".planwright/runs";

fn prepare_workspace(given: Option<&Path>, run_id: &str) -> Result<PathBuf, AppError> {
    let dir = match given {
        Some(d) => d.to_path_buf(),
        None => {
            let dir = run_workspace(Path::new(DEFAULT_WORKSPACE_ROOT), run_id);
            state_folder::guard(&dir)?;
            dir
        }
    };
    create_workspace(&dir)
}

/// The workspace of `run_id` under `root`.
pub(crate) fn run_workspace(root: &Path, run_id: &str) -> PathBuf {
    root.join(run_id).join("workspace")
}

/// Creates `dir` (and its parents); returns its absolute path, as runs record it.
pub(crate) fn create_workspace(dir: &Path) -> Result<PathBuf, AppError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| AppError::Config(format!("cannot create workspace {}: {e}", dir.display())))?;
    std::fs::canonicalize(dir)
        .map_err(|e| AppError::Config(format!("cannot resolve workspace {}: {e}", dir.display())))
}

async fn runs(db: &Database, command: RunsCommand) -> Result<ExitCode, AppError> {
    let store: Arc<dyn RunStore> = db.open().await?.store;
    let store_err = |e: domain::StoreError| AppError::Run(format!("reading {}: {e}", db));
    match command {
        RunsCommand::List { json } => {
            let runs = store.list_runs().await.map_err(store_err)?;
            if json {
                print_stdout(&format!("{}\n", report::runs_list_json(&runs)));
            } else {
                print_stdout(&report::runs_list_text(&runs));
            }
        }
        RunsCommand::Show { run_id, json } => {
            let run = store
                .get_run(&run_id)
                .await
                .map_err(store_err)?
                .ok_or_else(|| {
                    AppError::NotFound(format!("no run with id '{run_id}' in {}", db))
                })?;
            let plan = store.latest_plan(&run_id).await.map_err(store_err)?;
            let events = store.events(&run_id, 0).await.map_err(store_err)?;
            if json {
                let value = report::run_show_json(&run, plan.as_ref(), &events);
                print_stdout(&format!("{value}\n"));
            } else {
                print_stdout(&report::run_show_text(&run, plan.as_ref(), &events));
            }
        }
        RunsCommand::Events {
            run_id,
            follow,
            json,
        } => {
            if store.get_run(&run_id).await.map_err(store_err)?.is_none() {
                return Err(AppError::NotFound(format!(
                    "no run with id '{run_id}' in {}",
                    db
                )));
            }
            let mut after = 0;
            let mut polls: u32 = 0;
            loop {
                let events = store.events(&run_id, after).await.map_err(store_err)?;
                let mut ended = false;
                for e in &events {
                    if json {
                        print_stdout(&format!(
                            "{}\n",
                            serde_json::to_string(e).unwrap_or_default()
                        ));
                    } else {
                        print_stdout(&report::event_line(e));
                    }
                    after = e.seq;
                    ended |= e.kind.is_final();
                }
                if !follow || ended {
                    break;
                }
                // A followed run that stopped without a final event (killed) ends the follow.
                polls += 1;
                if polls % 10 == 0 {
                    let run = store.get_run(&run_id).await.map_err(store_err)?;
                    if run.is_none_or(|r| report::shown_status(&r) == "interrupted") {
                        break;
                    }
                }
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        }
        RunsCommand::Delete { run_id } => {
            let run = store
                .get_run(&run_id)
                .await
                .map_err(store_err)?
                .ok_or_else(|| {
                    AppError::NotFound(format!("no run with id '{run_id}' in {}", db))
                })?;
            if report::shown_status(&run) == "running" {
                return Err(AppError::Config(format!(
                    "run '{run_id}' is still running; stop it first"
                )));
            }
            store.delete_run(&run_id).await.map_err(store_err)?;
            let default_ws = Path::new(".planwright").join("runs").join(&run_id);
            let ws = Path::new(&run.workspace);
            let removed = match (
                std::fs::canonicalize(&default_ws),
                std::fs::canonicalize(ws),
            ) {
                (Ok(d), Ok(w)) if w.starts_with(&d) => std::fs::remove_dir_all(&d).is_ok(),
                _ => false,
            };
            let note = if removed { " and its workspace" } else { "" };
            print_stdout(&format!("deleted run {run_id}{note}\n"));
        }
    }
    Ok(ExitCode::SUCCESS)
}
