//! `planwright mcp serve`: the MCP service on stdin/stdout, over the state `serve` builds
//! (same store, queue, workers, sandbox rule), without the HTTP listener. Stdout carries
//! only JSON-RPC; every log line goes to stderr.

use std::future::Future;

use rmcp::ServiceExt;

use runner::database::Database;

use super::super::{runner_state, say, start_runner, stop_runner, Runner};
use super::PlanwrightMcp;
use crate::{McpServeSettings, ServeError};

/// Serves until the client closes stdin (or `shutdown` resolves: SIGTERM / Ctrl-C), then
/// suspends the runs still active at their next safe point, as `serve` does at shutdown.
pub async fn serve(
    db: &Database,
    args: McpServeSettings,
    shutdown: impl Future<Output = &'static str>,
) -> Result<(), ServeError> {
    if args.run.workspace.is_some() {
        return Err(ServeError::Config(
            "mcp serve gives every run its own workspace; --workspace is not supported here".into(),
        ));
    }
    let sandbox =
        runner::sandbox::resolve_for_server(args.run.sandbox, "mcp serve", args.run.notices)?;
    let workers = args.workers.unwrap_or(if db.is_shared() {
        0
    } else {
        super::super::DEFAULT_WORKERS
    });
    runner::state_folder::guard(&args.workspace_root)?;
    let runner = Runner {
        slots: workers,
        ask_timeout: args.ask_timeout,
        // Whoever holds our stdin is the client (admin): no token.
        tokens: super::super::tokens::TokenBook::none(),
        workspace_root: args.workspace_root.clone(),
    };
    let state = runner_state(db, &args.run, runner).await?;
    if workers > 0 {
        start_runner(&state).await;
    }
    let service = PlanwrightMcp::local(state.clone())
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| ServeError::Run(format!("the MCP session could not start: {e}")))?;
    say(&format!(
        "mcp serve ready on stdio: up to {workers} runs at once, sandbox {}",
        sandbox.name()
    ));
    let cancel = service.cancellation_token();
    tokio::select! {
        ended = service.waiting() => {
            if let Err(e) = ended {
                tracing::warn!(error = %e, "the MCP session ended with an error");
            }
        }
        signal = shutdown => {
            say(&format!("{signal}: suspending the active runs at their next safe point"));
            cancel.cancel();
        }
    }
    stop_runner(&state).await;
    Ok(())
}
