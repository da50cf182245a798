//! One live session with a server: the child process (stdio) or HTTP transport, after
//! `initialize` and `tools/list`.

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::Tool as McpTool;
use rmcp::service::{Peer, RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::ServiceExt;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStderr, Command};
use tokio::task::JoinHandle;

use super::environment::server_env;
use super::error::StartError;
use super::process_group::ProcessGroup;
use super::traced_http::TracedHttp;
use crate::config::Transport;

/// Lines of a child's stderr kept to explain why it stopped.
const STDERR_TAIL: usize = 5;

/// How long a child that broke the session is given to finish exiting.
const EXIT_GRACE: Duration = Duration::from_secs(1);

/// A running, initialized session.
pub struct Connection {
    service: RunningService<RoleClient, ()>,
    child: Option<Child>,
    /// Killed with the connection (stdio servers).
    _group: Option<ProcessGroup>,
    /// A call found the session closed.
    broken: bool,
    pub tools: Vec<McpTool>,
}

impl Connection {
    /// Starts the server and lists its tools, all within `timeout`.
    pub async fn open(
        server: &str,
        transport: &Transport,
        timeout: Duration,
    ) -> Result<Connection, StartError> {
        match transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let mut cmd = Command::new(command);
                cmd.args(args)
                    .env_clear()
                    .envs(server_env(std::env::vars_os(), env))
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .process_group(0)
                    .kill_on_drop(true);
                if let Some(cwd) = cwd {
                    cmd.current_dir(cwd);
                }
                let mut child = cmd.spawn().map_err(|e| StartError::Spawn {
                    command: command.clone(),
                    reason: e.to_string(),
                })?;
                let group = ProcessGroup::of(&child);
                let tail = Arc::new(Mutex::new(VecDeque::new()));
                let stderr_reader = child.stderr.take().map(|stderr| {
                    tokio::spawn(keep_stderr(server.to_owned(), stderr, tail.clone()))
                });
                let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
                    return Err(StartError::Initialize("no stdio pipes".into()));
                };
                let started =
                    tokio::time::timeout(timeout, initialize((stdout, stdin), timeout)).await;
                match started {
                    Ok(Ok((service, tools))) => Ok(Connection {
                        service,
                        child: Some(child),
                        _group: Some(group),
                        broken: false,
                        tools,
                    }),
                    Ok(Err(error)) => Err(exit_reason(&mut child, stderr_reader, &tail)
                        .await
                        .unwrap_or(error)),
                    Err(_) => Err(StartError::InitializeTimeout(timeout)),
                }
            }
            Transport::Http {
                url,
                bearer_token_env,
            } => {
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                if let Some(var) = bearer_token_env {
                    let token = std::env::var(var)
                        .map_err(|_| StartError::MissingToken { var: var.clone() })?;
                    config = config.auth_header(token);
                }
                let client = TracedHttp::new()
                    .map_err(|e| StartError::HttpClient(http_client::error_chain(&e)))?;
                let transport = StreamableHttpClientTransport::with_client(client, config);
                let (service, tools) =
                    tokio::time::timeout(timeout, initialize(transport, timeout))
                        .await
                        .map_err(|_| StartError::InitializeTimeout(timeout))??;
                Ok(Connection {
                    service,
                    child: None,
                    _group: None,
                    broken: false,
                    tools,
                })
            }
        }
    }

    /// The child's process id (stdio servers).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(Child::id)
    }

    /// False once the child exited or the session closed.
    pub fn is_alive(&mut self) -> bool {
        let exited = match self.child.as_mut() {
            Some(child) => !matches!(child.try_wait(), Ok(None)),
            None => false,
        };
        !exited && !self.broken && !self.service.is_closed()
    }

    /// A call found the session closed: the next call starts the server again.
    pub fn set_broken(&mut self) {
        self.broken = true;
    }

    pub fn peer(&self) -> Peer<RoleClient> {
        self.service.peer().clone()
    }
}

async fn initialize<T, E, A>(
    transport: T,
    timeout: Duration,
) -> Result<(RunningService<RoleClient, ()>, Vec<McpTool>), StartError>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let service = ().serve(transport).await.map_err(|e| match e {
        rmcp::service::ClientInitializeError::ConnectionClosed(_) => {
            StartError::Initialize("the server closed the connection".into())
        }
        other => StartError::Initialize(other.to_string()),
    })?;
    let tools = service.peer().list_all_tools().await.map_err(|e| match e {
        rmcp::ServiceError::Timeout { .. } => StartError::InitializeTimeout(timeout),
        other => StartError::ListTools(other.to_string()),
    })?;
    Ok((service, tools))
}

/// Why the child stopped, if it did: its exit status and the end of its stderr.
async fn exit_reason(
    child: &mut Child,
    stderr_reader: Option<JoinHandle<()>>,
    tail: &Mutex<VecDeque<String>>,
) -> Option<StartError> {
    let status = tokio::time::timeout(EXIT_GRACE, child.wait())
        .await
        .ok()?
        .ok()?;
    if let Some(reader) = stderr_reader {
        // Its last lines: the pipe ends when the child (and what it started) exited.
        let _ = tokio::time::timeout(EXIT_GRACE, reader).await;
    }
    let lines: Vec<String> = tail
        .lock()
        .map(|t| t.iter().cloned().collect())
        .unwrap_or_default();
    let stderr = if lines.is_empty() {
        String::new()
    } else {
        format!(": {}", lines.join(" | "))
    };
    Some(StartError::Exited {
        status: status.to_string(),
        stderr,
    })
}

/// Logs the child's stderr and keeps its last lines.
async fn keep_stderr(server: String, stderr: ChildStderr, tail: Arc<Mutex<VecDeque<String>>>) {
    let mut lines = BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        tracing::debug!(server = %server, "mcp stderr: {line}");
        if let Ok(mut tail) = tail.lock() {
            if tail.len() == STDERR_TAIL {
                tail.pop_front();
            }
            tail.push_back(line);
        }
    }
}
