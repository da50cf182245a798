//! # planwright
//!
//! The `planwright` binary: reads the command line, the config files and the environment,
//! hands plain settings to the runner (`planwright-runner`: adapters wired into the domain,
//! picked with cargo features) and the server (`planwright-server`), and prints results.
//! Only this crate's output layer (`view`, `report`, `jsonl`, `terminal`) writes to the
//! terminal; `main` only wires. Exit codes: see `error`.

mod cli;
mod commands;
mod completions;
mod config;
mod diff_text;
mod doctor;
mod environ;
mod error;
mod jsonl;
mod mcp;
mod panel;
mod report;
mod safe_text;
mod scripted_user;
mod signals;
mod terminal;
mod terminal_user;
mod view;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use runner::state_folder;

use crate::cli::{Cli, Command, ConfigCommand, McpCommand, RunsCommand, ToolsCommand};
use crate::commands::{run, runs, tools};
use crate::error::AppError;
use crate::terminal::print_stdout;

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
        runner::sandbox::probe_in_background(arg);
    }
    let terminal = terminal::init(cli.verbosity);
    // Kept until `main` returns: dropping it flushes the spans still queued (bounded wait).
    let telemetry_settings = config::telemetry::settings(&loaded.layers.telemetry()).with_env();
    let (telemetry, telemetry_note) = match runner::telemetry::start(&telemetry_settings) {
        Ok(telemetry) => (telemetry, None),
        Err(e) => (None, Some(e.to_string())),
    };
    init_tracing(cli.verbosity, terminal.colour_stderr, telemetry.as_ref());
    for note in environ_notes
        .iter()
        .chain(&loaded.layers.notes)
        .chain(&telemetry_note)
    {
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
fn sandbox_arg(cli: &Cli) -> Option<runner::SandboxMode> {
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
                | RunsCommand::Events { json, .. }
                | RunsCommand::Diff { json, .. }
                | RunsCommand::Undo { json, .. },
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
/// warnings (`terminal::log_filter`); coloured only on a terminal without `NO_COLOR`. With
/// `telemetry`, Planwright's own `info` spans are exported too, whatever the log shows.
fn init_tracing(
    verbosity: cli::Verbosity,
    colour: bool,
    telemetry: Option<&runner::telemetry::Telemetry>,
) {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::Layer;
    let directives = terminal::log_filter(
        verbosity,
        std::env::var("PLANWRIGHT_LOG").ok(),
        std::env::var("RUST_LOG").ok(),
    );
    let filter = tracing_subscriber::EnvFilter::try_new(&directives)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let log = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(colour)
        .with_target(false)
        .with_filter(filter);
    let exported = telemetry.map(runner::telemetry::Telemetry::layer);
    let _ = tracing_subscriber::registry()
        .with(log)
        .with(exported)
        .try_init();
}

async fn dispatch(mut cli: Cli, loaded: config::Loaded) -> Result<ExitCode, AppError> {
    // Every run built from these settings is offered the same servers.
    let servers = mcp::declare(&loaded.layers)?;
    let config_file = cli.config.clone();
    if let Some(opts) = cli.command.run_options_mut() {
        opts.provider_tables = loaded.layers.provider_tables();
        opts.mcp_servers = servers.clone();
        opts.notices = runner::notice::Notices::to(terminal::notice);
        opts.config_file = config_file;
    }
    match cli.command {
        Command::Run(args) => run::run(&cli.db, args).await,
        Command::Resume(args) => run::resume(&cli.db, args).await,
        Command::Tools {
            command: ToolsCommand::List { opts },
        } => tools::list(&opts).await,
        Command::Mcp { command } => match command {
            McpCommand::Serve(args) => {
                let shutdown = signals::first(signals::listen());
                server::mcp_serve(&cli.db, args.settings(&cli.db), shutdown).await?;
                Ok(ExitCode::SUCCESS)
            }
            McpCommand::List => {
                print_stdout(&mcp::list(&servers).await?);
                Ok(ExitCode::SUCCESS)
            }
            McpCommand::Check { name } => {
                print_stdout(&mcp::check(&servers, &name).await?);
                Ok(ExitCode::SUCCESS)
            }
        },
        Command::Serve(args) => {
            let shutdown = signals::first(signals::listen());
            server::serve(
                &cli.db,
                args.settings(&cli.db, terminal::get().quiet),
                shutdown,
            )
            .await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Worker(args) => {
            let shutdown = signals::first(signals::listen());
            server::work(
                &cli.db,
                args.settings(&cli.db, terminal::get().quiet),
                shutdown,
            )
            .await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Token { command } => {
            let printed = server::tokens::run(&cli.db.local_folder(), command.into())?;
            if let Some(note) = printed.note.filter(|_| !terminal::get().quiet) {
                let _ = writeln!(std::io::stderr(), "{note}");
            }
            print_stdout(&printed.out);
            Ok(ExitCode::SUCCESS)
        }
        Command::Runs { command } => runs::runs(&cli.db, command).await,
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
