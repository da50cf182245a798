//! `planwright run` and `planwright resume`: a run in this process, shown live on the
//! terminal (`view`), stopped by Ctrl-C (`signals`), printed at the end (`report`).

use std::process::ExitCode;
use std::sync::Arc;

use domain::ports::{LlmClient, RunStatus, RunStore};
use domain::{RunControl, RunRequest, Runtime};
use runner::database::{Database, QueueStore};
use runner::wiring::LlmSetup;
use runner::RunSettings;

use crate::cli::{OutputArg, ResumeArgs, RunArgs};
use crate::error::AppError;
use crate::signals::stop_on_signals;
use crate::terminal::print_stdout;
use crate::{jsonl, report, scripted_user, terminal_user, view};

pub async fn run(db: &Database, args: RunArgs) -> Result<ExitCode, AppError> {
    let task = args.task.join(" ").trim().to_string();
    if task.is_empty() {
        return Err(AppError::Config("the task is empty".into()));
    }
    let settings = args.opts.settings();
    let llm = runner::wiring::llm(&settings)?;
    runner::providers::preflight(&settings).await?;
    let opened = db.open().await?;
    let runs_root = db.runs_root();
    let mut runtime = console_runtime(
        llm.client.clone(),
        opened.store.clone(),
        &settings,
        &runs_root,
    )?;
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
    let workspace =
        runner::workspace::prepare_workspace(settings.workspace.as_deref(), &runs_root, &run_id)?;
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
        .map_err(|e| AppError::stopped(e, &run_id))?;
    finish(
        &outcome,
        &workspace.display().to_string(),
        stdout_of(args.opts.json, args.output),
        &llm,
    )
}

pub async fn resume(db: &Database, args: ResumeArgs) -> Result<ExitCode, AppError> {
    let settings = args.opts.settings();
    let llm = runner::wiring::llm(&settings)?;
    runner::providers::preflight(&settings).await?;
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
    let runs_root = db.runs_root();
    runner::state_folder::guard(&runs_root)?;
    let mut runtime = console_runtime(llm.client.clone(), store.clone(), &settings, &runs_root)?;
    // The live view starts from the stored plan: the resumed run does not announce it.
    if let Ok(Some(plan)) = store.latest_plan(&args.run_id).await {
        let sandbox = runner::sandbox::resolve(settings.sandbox, settings.notices)?;
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
        .resume_with(
            &args.run_id,
            control,
            runner::liveness::stale_owner(&record),
        )
        .await
        .map_err(|e| match e {
            domain::Error::Config(m) => AppError::Config(m),
            e @ domain::Error::UnknownRun(_) => AppError::NotFound(e.to_string()),
            e @ domain::Error::Leased { .. } => AppError::Config(e.to_string()),
            other => AppError::stopped(other, &args.run_id),
        })?;
    finish(
        &outcome,
        &record.workspace,
        stdout_of(args.opts.json, args.output),
        &llm,
    )
}

/// The runner's runtime for `settings`, shown live on the terminal and asking its user
/// there.
fn console_runtime(
    llm: Arc<dyn LlmClient>,
    store: Arc<dyn RunStore>,
    settings: &RunSettings,
    runs_root: &std::path::Path,
) -> Result<Runtime, AppError> {
    let mut runtime = runner::wiring::runtime(llm, store, settings, runs_root)?;
    let sandbox = runner::sandbox::resolve(settings.sandbox, settings.notices)?;
    runtime.sink = Arc::new(view::ConsoleView::new().with_sandbox(sandbox.name()));
    runtime.user = Arc::new(terminal_user::TerminalUser);
    Ok(runtime)
}

/// What `run` and `resume` print on stdout at the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Finish {
    Text,
    Json,
    /// `--output jsonl`: the events were the output; nothing more.
    Nothing,
}

fn stdout_of(json: bool, output: OutputArg) -> Finish {
    match (output, json) {
        (OutputArg::Jsonl, _) => Finish::Nothing,
        (OutputArg::Text, true) => Finish::Json,
        (OutputArg::Text, false) => Finish::Text,
    }
}

/// Reads the run's mailbox while the CLI runs it, so that a server on the same database
/// can cancel it (`POST /v1/runs/{id}/cancel`). Answers go to the terminal's user only;
/// one posted from elsewhere is dropped. Stops when the guard is dropped.
fn read_mailbox(
    opened: &QueueStore,
    runtime: &Runtime,
    run_id: &str,
    control: &RunControl,
) -> tokio_util::sync::DropGuard {
    let done = tokio_util::sync::CancellationToken::new();
    let reader = runner::mailbox::MailboxReader {
        mailbox: opened.mailbox.clone(),
        changes: opened.changes.clone(),
        run_id: run_id.to_string(),
        owner: runtime.config.lease.owner.clone(),
    };
    tokio::spawn(reader.run(control.cancel.clone(), |_| false, done.clone()));
    done.drop_guard()
}

/// Prints the outcome and picks the exit code.
fn finish(
    outcome: &domain::RunOutcome,
    workspace: &str,
    output: Finish,
    llm: &LlmSetup,
) -> Result<ExitCode, AppError> {
    match output {
        Finish::Json => {
            let value = runner::json::outcome_json(outcome, workspace);
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
