//! # planwright-server
//!
//! Planwright's servers over the runner (`planwright-runner`): `planwright serve` (the HTTP
//! API under `/v1`, the live event stream (SSE), the web page at `/`, the MCP service at
//! `/mcp`), `planwright worker` and `planwright mcp serve` (the MCP service on stdio); the
//! API's tokens and clients.
//!
//! Architecture invariant (docs/architecture.md): this crate imports the runner and the
//! domain, never clap, never the `planwright` binary nor its output modules; it is started
//! with plain settings ([`ServeSettings`], [`WorkerSettings`], [`McpServeSettings`]) and a
//! shutdown future (the binary owns the process's one signal handler).
//!
//! ```text
//! POST /v1/runs ─▶ store: queued ─▶ dispatch: claim (lease) + Semaphore slot ─▶ Runtime
//!                                      sink ─▶ broadcast ─▶ SSE (replay from store)
//! ```
//!
//! Runs execute concurrently up to `--workers`; the rest wait in the durable
//! queue (`dispatch`): a queued run is in the store before its client is answered, so a
//! restart loses none. Every run has its own workspace (`./.planwright/runs/<id>/workspace`).
//! Live listeners never slow a run: events go through a bounded broadcast channel, and a
//! listener that falls behind re-reads what it missed from the store.

mod api;
mod auth;
mod error;
mod files;
mod listener;
mod mcp;
mod metrics;
mod percent;
mod runs;
mod serve_error;
#[cfg(test)]
mod service_seam;
mod settings;
mod sse;
pub mod tokens;

/// Who calls and what it may do: the runner's rule (`runner::caller`), named here for the
/// binary's `token add --scope`.
pub mod clients {
    pub use runner::service::{Caller, Scope};
}
mod web;

pub use mcp::stdio::serve as mcp_serve;
pub use serve_error::ServeError;
pub use settings::{McpServeSettings, ServeSettings, WorkerSettings};

use std::future::Future;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use runner::database::Database;
use runner::service::RunService;
use runner::RunSettings;

pub(crate) use runner::queue::QueueRunner;

/// Everything the handlers share: the run operations ([`RunService`], the only way the
/// handlers reach runs), the queue runner the process starts and stops (its lease owner,
/// its shutdown token), and the tokens the API accepts.
pub(crate) struct AppState {
    /// The operations on runs the API and the MCP service call (docs/architecture.md,
    /// "The server crate"); a fake in the seam's test.
    pub service: Arc<dyn RunService>,
    pub runner: Arc<QueueRunner>,
    /// The tokens the API accepts and who each is (docs/security.md, "Clients").
    pub tokens: tokens::TokenBook,
}

pub(crate) type State = Arc<AppState>;

/// `planwright serve`, until `shutdown` resolves (to the name of what stopped it, e.g.
/// "interrupted").
pub async fn serve(
    db: &Database,
    args: ServeSettings,
    shutdown: impl Future<Output = &'static str> + Send + 'static,
) -> Result<(), ServeError> {
    if args.run.workspace.is_some() {
        return Err(ServeError::Config(
            "serve gives every run its own workspace; --workspace is not supported here".into(),
        ));
    }
    let sandbox = runner::sandbox::resolve_for_server(args.run.sandbox, "serve", args.run.notices)?;
    let token = auth::resolve_token(&db.local_folder(), args.token.as_deref(), &args.addr)?;
    let tokens = tokens::TokenBook::new(token, &db.local_folder())?;
    runner::state_folder::guard(&args.workspace_root)?;
    let workers = args
        .workers
        .unwrap_or(if db.is_shared() { 0 } else { DEFAULT_WORKERS });
    let runner = Runner {
        slots: workers,
        ask_timeout: args.ask_timeout,
        tokens,
        workspace_root: args.workspace_root.clone(),
    };
    let state = runner_state(db, &args.run, runner).await?;
    let listener = tokio::net::TcpListener::bind(args.addr)
        .await
        .map_err(|e| ServeError::Config(format!("cannot listen on {}: {e}", args.addr)))?;
    let local = listener
        .local_addr()
        .map_err(|e| ServeError::Config(format!("cannot read the bound address: {e}")))?;
    // The runs' browsers must not reach this server (docs/security.md, "The browser").
    runner::served_on::listening_on(local);
    let router =
        api::router(state.clone()).merge(metrics::router(state.clone(), args.metrics_public));
    if workers > 0 {
        start_runner(&state).await;
    }
    let quiet = args.quiet;
    inform(quiet, &format!("sandbox: {}", sandbox.name()));
    say(&format!("listening on http://{local}"));
    let shutdown_state = state.clone();
    let limits = listener::Limits {
        max_connections: args.max_connections as usize,
        header_timeout: args.header_timeout,
        ..listener::Limits::default()
    };
    listener::serve(listener, router, limits, async move {
        let signal = shutdown.await;
        inform(
            quiet,
            &format!("\n{signal}: suspending the active runs at their next safe point"),
        );
        stop_runner(&shutdown_state).await;
    })
    .await;
    Ok(())
}

/// `planwright worker`: the server's runner without the HTTP API. Claims queued runs (and
/// runs whose owner is gone) from the shared store until SIGTERM or Ctrl-C, then suspends
/// its runs at their next safe point and gives their leases up, so another worker goes on
/// with them (docs/durability.md, "The work queue").
pub async fn work(
    db: &Database,
    args: WorkerSettings,
    shutdown: impl Future<Output = &'static str>,
) -> Result<(), ServeError> {
    if args.run.workspace.is_some() {
        return Err(ServeError::Config(
            "a worker gives every run its own workspace; --workspace is not supported here".into(),
        ));
    }
    let sandbox =
        runner::sandbox::resolve_for_server(args.run.sandbox, "worker", args.run.notices)?;
    runner::state_folder::guard(&args.workspace_root)?;
    let runner = Runner {
        slots: args.concurrency,
        ask_timeout: args.ask_timeout,
        tokens: tokens::TokenBook::none(),
        // A worker creates no workspace: a claimed run's is in its record, under this root.
        workspace_root: args.workspace_root.clone(),
    };
    let state = runner_state(db, &args.run, runner).await?;
    if let Some(addr) = args.metrics_addr {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| ServeError::Config(format!("cannot listen on {addr}: {e}")))?;
        let local = listener
            .local_addr()
            .map_err(|e| ServeError::Config(format!("cannot read the bound address: {e}")))?;
        runner::served_on::listening_on(local);
        let stopped = state.runner.shutdown.clone();
        let router = metrics::router(state.clone(), true);
        tokio::spawn(async move {
            listener::serve(listener, router, listener::Limits::default(), async move {
                stopped.cancelled().await;
            })
            .await;
        });
        say(&format!("metrics on http://{local}/metrics"));
    }
    start_runner(&state).await;
    inform(
        args.quiet,
        &format!(
            "worker {} ready: up to {} runs at once, sandbox {}",
            state.runner.lease.owner,
            args.concurrency,
            sandbox.name()
        ),
    );
    let signal = shutdown.await;
    inform(
        args.quiet,
        &format!("{signal}: suspending the active runs at their next safe point"),
    );
    stop_runner(&state).await;
    Ok(())
}

/// A line of progress on stderr, unless `quiet` (`-q`).
fn inform(quiet: bool, line: &str) {
    if !quiet {
        say(line);
    }
}

/// One line on stderr, flushed (tests and supervisors wait for these lines), even with `-q`:
/// the address the server listens on.
fn say(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}");
    let _ = err.flush();
}

/// What `serve` and `worker` set up differently.
struct Runner {
    /// Runs executed at once.
    slots: u32,
    ask_timeout: Duration,
    /// The API's tokens (none for a worker).
    tokens: tokens::TokenBook,
    workspace_root: PathBuf,
}

/// The state shared by the API handlers and the queue runner.
async fn runner_state(
    db: &Database,
    opts: &RunSettings,
    runner: Runner,
) -> Result<State, ServeError> {
    let options = runner::queue::QueueOptions {
        slots: runner.slots,
        ask_timeout: runner.ask_timeout,
        workspace_root: runner.workspace_root,
    };
    let queue = QueueRunner::open(db, opts, options).await?;
    Ok(Arc::new(AppState {
        service: Arc::new(queue.clone()),
        runner: queue,
        tokens: runner.tokens,
    }))
}

/// Starts executing runs (see `runner::queue::start`).
async fn start_runner(state: &State) {
    runner::queue::start(&state.runner).await;
}

/// Stops claiming and suspends the active runs (see `runner::queue::stop`).
async fn stop_runner(state: &State) {
    runner::queue::stop(&state.runner).await;
}

const DEFAULT_WORKERS: u32 = runner::queue::DEFAULT_WORKERS;

/// A server's state over `store` with `serve`'s default options, no token and an LLM with
/// nothing to say (no run is started), for the server's unit tests.
#[cfg(test)]
pub(crate) fn test_state(store: Arc<domain::testing::MemoryStore>) -> State {
    let llm = Arc::new(domain::testing::ScriptedLlm::new(Vec::new()));
    let runner = Arc::new(QueueRunner::over(store, llm));
    Arc::new(AppState {
        service: Arc::new(runner.clone()),
        runner,
        tokens: tokens::TokenBook::none(),
    })
}
