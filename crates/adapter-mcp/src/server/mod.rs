//! One declared MCP server: started once, its offered tools, its calls, one restart after a
//! crash.

mod connection;
mod environment;
pub(crate) mod error;
mod process_group;
mod traced_http;

use std::sync::RwLock;
use std::time::Duration;

use domain::ports::{ToolError, ToolOutput};
use rmcp::model::{CallToolRequestParams, ErrorCode, RequestMetaObject};
use serde_json::Value;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

pub use error::StartError;

use crate::config::{McpServerConfig, Transport};
use crate::names::exposed_name;
use crate::output::tool_output;
use crate::status::{ServerState, ServerStatus};
use connection::Connection;

/// The trace context of the call (its `execute_tool` span, when traces are exported) as the
/// request's `_meta` `traceparent` and `tracestate`, MCP's convention (SEP-414), so a traced
/// server's spans join the run's trace (docs/observability.md, "Across processes").
fn trace_meta() -> Option<RequestMetaObject> {
    let headers = http_client::trace_headers();
    if headers.is_empty() {
        return None;
    }
    let mut meta = RequestMetaObject::default();
    for (name, value) in headers {
        match name {
            "traceparent" => meta.set_traceparent(value),
            "tracestate" => meta.set_tracestate(value),
            _ => {}
        }
    }
    Some(meta)
}

/// How many times a crashed server is started again.
const RESTARTS: u32 = 1;

/// A tool of this server as offered to the model.
#[derive(Debug, Clone)]
pub struct OfferedTool {
    /// `mcp__<server>__<tool>`.
    pub name: String,
    /// The tool's name on the server.
    pub mcp_name: String,
    pub description: String,
    pub parameters: Value,
    /// The server marked it `readOnlyHint: true`.
    pub read_only: bool,
}

enum State {
    NotStarted,
    Running(Box<Connection>),
    Failed(StartError),
}

struct Session {
    state: State,
    restarts: u32,
    /// Counts the sessions opened, so a failed call breaks only the session it used.
    generation: u64,
}

pub struct Server {
    pub name: String,
    config: McpServerConfig,
    transport: Transport,
    session: Mutex<Session>,
    /// Read by the sync `Toolbox` methods.
    tools: RwLock<Vec<OfferedTool>>,
}

impl Server {
    pub fn new(name: String, config: McpServerConfig, transport: Transport) -> Server {
        Server {
            name,
            config,
            transport,
            session: Mutex::new(Session {
                state: State::NotStarted,
                restarts: 0,
                generation: 0,
            }),
            tools: RwLock::new(Vec::new()),
        }
    }

    /// Starts the server unless it was started (or failed) already.
    pub async fn start(&self) {
        let mut session = self.session.lock().await;
        if matches!(session.state, State::NotStarted) {
            session.generation += 1;
            session.state = self.open().await;
        }
    }

    pub fn tools(&self) -> Vec<OfferedTool> {
        self.tools.read().map(|t| t.clone()).unwrap_or_default()
    }

    pub fn tool(&self, name: &str) -> Option<OfferedTool> {
        self.tools
            .read()
            .ok()
            .and_then(|tools| tools.iter().find(|t| t.name == name).cloned())
    }

    /// Why the server is not running, when it failed.
    pub async fn failure(&self) -> Option<ToolError> {
        match &self.session.lock().await.state {
            State::Failed(error) => Some(self.failed(format!("not running: {error}"))),
            State::NotStarted | State::Running(_) => None,
        }
    }

    /// Whether `name` is one of this server's model-facing names (`mcp__<server>__...`).
    pub fn owns_name(&self, name: &str) -> bool {
        name.starts_with(&exposed_name(&self.name, ""))
    }

    pub async fn status(&self) -> ServerStatus {
        let mut session = self.session.lock().await;
        let restarts = session.restarts;
        let state = match &mut session.state {
            State::NotStarted => ServerState::NotStarted,
            State::Running(connection) => ServerState::Started {
                tools: self.tools().into_iter().map(|t| t.name).collect(),
                pid: connection.pid(),
                alive: connection.is_alive(),
                restarts,
            },
            State::Failed(error) => ServerState::Failed {
                error: error.clone(),
                restarts,
            },
        };
        ServerStatus {
            name: self.name.clone(),
            state,
        }
    }

    /// Calls MCP tool `tool`; a server found dead is started again once.
    pub async fn call(
        &self,
        tool: &OfferedTool,
        args: Value,
        cancel: &CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        let arguments = match args {
            Value::Object(map) => Some(map),
            Value::Null => None,
            other => {
                return Err(ToolError::InvalidArguments(format!(
                    "expected an object, got {other}"
                )))
            }
        };
        let (peer, generation) = self.live_peer().await?;
        let mut params = CallToolRequestParams::new(tool.mcp_name.clone());
        params.arguments = arguments;
        params.meta = trace_meta();
        let timeout = self.config.tool_timeout();
        let result = tokio::select! {
            biased;
            () = cancel.cancelled() => {
                return Err(ToolError::Failed(format!("MCP server `{}`: call cancelled", self.name)));
            }
            result = tokio::time::timeout(timeout, peer.call_tool(params)) => result,
        };
        match result {
            Err(_) => Err(ToolError::Timeout(timeout)),
            Ok(Ok(result)) => serde_json::to_value(&result)
                .map(|json| tool_output(&json))
                .map_err(|e| self.failed(format!("unreadable result: {e}"))),
            Ok(Err(rmcp::ServiceError::McpError(error)))
                if error.code == ErrorCode::INVALID_PARAMS =>
            {
                Err(ToolError::InvalidArguments(error.message.to_string()))
            }
            Ok(Err(rmcp::ServiceError::McpError(error))) => {
                Err(self.failed(error.message.to_string()))
            }
            Ok(Err(rmcp::ServiceError::Timeout { timeout })) => Err(ToolError::Timeout(timeout)),
            Ok(Err(
                closed @ (rmcp::ServiceError::TransportClosed
                | rmcp::ServiceError::TransportSend(_)),
            )) => {
                self.break_session(generation).await;
                Err(self.failed(closed.to_string()))
            }
            Ok(Err(other)) => Err(self.failed(other.to_string())),
        }
    }

    /// Marks session `generation` closed, unless another was opened since.
    async fn break_session(&self, generation: u64) {
        let mut session = self.session.lock().await;
        if session.generation == generation {
            if let State::Running(connection) = &mut session.state {
                connection.set_broken();
            }
        }
    }

    /// The session to call on (and its generation): started if needed, started again once
    /// after a crash.
    async fn live_peer(&self) -> Result<(rmcp::Peer<rmcp::service::RoleClient>, u64), ToolError> {
        let mut session = self.session.lock().await;
        if matches!(session.state, State::NotStarted) {
            session.generation += 1;
            session.state = self.open().await;
        }
        if let State::Running(connection) = &mut session.state {
            if connection.is_alive() {
                return Ok((connection.peer(), session.generation));
            }
            tracing::warn!(server = %self.name, "MCP server stopped");
            session.state = if session.restarts < RESTARTS {
                session.restarts += 1;
                session.generation += 1;
                tracing::info!(server = %self.name, "restarting MCP server");
                self.open().await
            } else {
                self.set_tools(Vec::new());
                State::Failed(StartError::Crashed)
            };
        }
        match &session.state {
            State::Running(connection) => Ok((connection.peer(), session.generation)),
            State::Failed(error) => Err(self.failed(format!("not running: {error}"))),
            State::NotStarted => Err(self.failed("not started".into())),
        }
    }

    async fn open(&self) -> State {
        let timeout: Duration = self.config.startup_timeout();
        match Connection::open(&self.name, &self.transport, timeout).await {
            Ok(connection) => {
                self.set_tools(self.offered(&connection));
                tracing::info!(server = %self.name, tools = connection.tools.len(), "MCP server started");
                State::Running(Box::new(connection))
            }
            Err(error) => {
                tracing::warn!(server = %self.name, "MCP server failed to start: {error}");
                self.set_tools(Vec::new());
                State::Failed(error)
            }
        }
    }

    fn offered(&self, connection: &Connection) -> Vec<OfferedTool> {
        let mut offered: Vec<OfferedTool> = Vec::new();
        for tool in &connection.tools {
            if !self.config.offers(&tool.name) {
                continue;
            }
            let name = exposed_name(&self.name, &tool.name);
            if offered.iter().any(|o| o.name == name) {
                tracing::warn!(server = %self.name, tool = %tool.name, "MCP tool skipped: its name `{name}` is taken");
                continue;
            }
            offered.push(OfferedTool {
                name,
                mcp_name: tool.name.to_string(),
                description: tool.description.as_deref().unwrap_or_default().to_owned(),
                // As the built-in tools' schemas: no `$schema` or title, plainer properties.
                parameters: domain::tools::args::tidy_schema(Value::Object(
                    (*tool.input_schema).clone(),
                )),
                read_only: tool.annotations.as_ref().and_then(|a| a.read_only_hint) == Some(true),
            });
        }
        offered
    }

    fn set_tools(&self, tools: Vec<OfferedTool>) {
        if let Ok(mut slot) = self.tools.write() {
            *slot = tools;
        }
    }

    fn failed(&self, reason: String) -> ToolError {
        ToolError::Failed(format!("MCP server `{}`: {reason}", self.name))
    }
}
