//! Planwright as an MCP server (docs/mcp.md, "Planwright as an MCP server"): a driving
//! adapter beside the HTTP API. Its tools queue, follow, cancel and answer runs through the
//! same operations as `/v1` (the runner's `RunService`), on the same state (store, queue, registry,
//! `ServerUser`); its resources are the runs' workspace files.
//!
//! ```text
//! tools/call run_task ─▶ RunService::queue ─▶ store: queued ─▶ dispatch ─▶ Runtime
//!                wait ◀── store (events, plan) ─▶ notifications/progress
//! ```
//!
//! Two transports: stdio for `planwright mcp serve` (`stdio.rs`), streamable HTTP at `/mcp`
//! on `planwright serve`, behind its bearer token ([`http_service`]). Over HTTP each request
//! acts as the client its token names, as `/v1` does (docs/security.md, "Clients"); on
//! stdio the local user is admin.

mod calls;
mod resources;
mod sessions;
pub mod stdio;
mod tools;
mod wait;

use sessions::BoundedSessions;

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};

use super::error::ApiError;
use super::State;
use runner::service::Caller;

const INSTRUCTIONS: &str = "Planwright runs long multi-step tasks for you: it plans them, \
executes each step with shell and file tools in a workspace of its own, verifies and \
re-plans. Call run_task with the whole task (wait: true to get the result in the same \
call), get_run to follow a run, answer when a run asks a question, cancel_run to stop one. \
The files a run writes are resources planwright://runs/{run_id}/files/{path}.";

/// The MCP service over the server's state; one per session, all sharing the state.
#[derive(Clone)]
pub struct PlanwrightMcp {
    state: State,
    tools: Arc<Vec<Tool>>,
    /// Served on stdio to the local user (admin); otherwise over HTTP, where each request
    /// carries its token's client.
    local: bool,
}

impl PlanwrightMcp {
    /// The service for `planwright mcp serve`: its client is the local user.
    pub fn local(state: State) -> PlanwrightMcp {
        PlanwrightMcp {
            state,
            tools: Arc::new(tools::all()),
            local: true,
        }
    }

    /// The service for `/mcp`: each request's client is the one its token named.
    fn remote(state: State) -> PlanwrightMcp {
        PlanwrightMcp {
            local: false,
            ..PlanwrightMcp::local(state)
        }
    }

    /// Who makes this request: over HTTP the client `auth.rs` put in the request's parts
    /// (none there: nobody, allowed nothing).
    fn client(&self, context: &RequestContext<RoleServer>) -> Caller {
        if self.local {
            return Caller::admin();
        }
        context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Caller>())
            .cloned()
            .unwrap_or_else(Caller::nobody)
    }
}

/// A resource error as MCP says it: an unknown resource is `resource_not_found`.
fn resource_error(e: ApiError) -> McpError {
    match e {
        ApiError::NotFound(m) | ApiError::Forbidden(m) => McpError::resource_not_found(m, None),
        ApiError::BadRequest(m) | ApiError::TooLarge(m) => McpError::invalid_params(m, None),
        other => McpError::internal_error(other.to_string(), None),
    }
}

impl ServerHandler for PlanwrightMcp {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(
                Implementation::new("planwright", env!("CARGO_PKG_VERSION"))
                    .with_title("Planwright"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if !self.tools.iter().any(|t| t.name == request.name) {
            return Err(McpError::invalid_params(
                format!(
                    "no tool '{}' (run_task, get_run, list_runs, cancel_run, answer, approve_call, \
                     run_diff, undo_run)",
                    request.name
                ),
                None,
            ));
        }
        let client = self.client(&context);
        Ok(calls::call(
            &self.state,
            &client,
            &request.name,
            request.arguments,
            &context,
        )
        .await
        .into())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let client = self.client(&context);
        let page = resources::list(&self.state, &client, request.and_then(|r| r.cursor))
            .await
            .map_err(resource_error)?;
        let mut result = ListResourcesResult::with_all_items(page.resources);
        result.next_cursor = page.next_cursor;
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            resources::template(),
            resources::diff_template(),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let client = self.client(&context);
        let contents = resources::read(&self.state, &client, &request.uri)
            .await
            .map_err(resource_error)?;
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}

/// `/mcp` on `planwright serve`: streamable HTTP, sessions tied to the client that opened
/// them, closed on shutdown, when idle, or when their client opens too many
/// (`sessions.rs`). The bearer token (checked before this service, `auth.rs`) is what
/// protects it, so the Host check meant for unauthenticated local servers is off: a server
/// listening on a public address answers its own name.
pub fn http_service(state: State) -> axum::Router {
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .with_cancellation_token(state.runner.shutdown.child_token());
    let sessions = Arc::new(BoundedSessions::new(
        sessions::MAX_SESSIONS,
        sessions::PER_CLIENT,
        sessions::IDLE,
    ));
    let service_state = state.clone();
    let service = StreamableHttpService::new(
        move || Ok(PlanwrightMcp::remote(service_state.clone())),
        sessions.clone(),
        config,
    );
    axum::Router::new()
        .fallback_service(service)
        .layer(axum::middleware::from_fn_with_state(
            sessions,
            sessions::own_sessions,
        ))
}
