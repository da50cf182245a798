//! [`McpToolbox`]: the tools of every declared MCP server as one [`Toolbox`], started once
//! per process and shared by runs.

use std::sync::Arc;

use async_trait::async_trait;
use domain::ports::llm::ToolSchema;
use domain::ports::{ToolContext, ToolEffect, ToolError, ToolOutput, Toolbox};
use futures_util::future::join_all;
use serde_json::Value;
use tokio::runtime::{Handle, RuntimeFlavor};
use tokio::sync::OnceCell;

use crate::config::{ConfigError, McpServerConfig};
use crate::server::{OfferedTool, Server};
use crate::status::ServerStatus;

/// Every declared server's tools, named `mcp__<server>__<tool>`.
#[derive(Clone)]
pub struct McpToolbox {
    inner: Arc<Inner>,
}

struct Inner {
    servers: Vec<Server>,
    started: OnceCell<()>,
}

impl Inner {
    async fn start(&self) {
        self.started
            .get_or_init(|| async {
                join_all(self.servers.iter().map(Server::start)).await;
            })
            .await;
    }
}

impl McpToolbox {
    /// Checks every declaration; starts nothing.
    pub fn new(
        servers: impl IntoIterator<Item = (String, McpServerConfig)>,
    ) -> Result<McpToolbox, ConfigError> {
        let servers = servers
            .into_iter()
            .map(|(name, config)| {
                let transport = config.transport(&name)?;
                Ok(Server::new(name, config, transport))
            })
            .collect::<Result<Vec<_>, ConfigError>>()?;
        Ok(McpToolbox {
            inner: Arc::new(Inner {
                servers,
                started: OnceCell::new(),
            }),
        })
    }

    /// Starts every server (each within its `startup_timeout_secs`); later calls return at
    /// once. A server that fails is reported by [`McpToolbox::status`], never an error here.
    pub async fn start(&self) {
        self.inner.start().await;
    }

    /// Each server: not started, started (with its tools) or failed (why).
    pub async fn status(&self) -> Vec<ServerStatus> {
        let mut statuses = Vec::with_capacity(self.inner.servers.len());
        for server in &self.inner.servers {
            statuses.push(server.status().await);
        }
        statuses
    }

    /// `schemas()` is sync: on a multi-thread runtime it waits for the start in place;
    /// elsewhere it starts the servers in the background and offers their tools once up.
    fn start_from_sync(&self) {
        if self.inner.started.initialized() {
            return;
        }
        let Ok(handle) = Handle::try_current() else {
            tracing::warn!("MCP servers not started: no tokio runtime");
            return;
        };
        let inner = self.inner.clone();
        if handle.runtime_flavor() == RuntimeFlavor::MultiThread {
            tokio::task::block_in_place(|| handle.block_on(inner.start()));
        } else {
            handle.spawn(async move { inner.start().await });
        }
    }

    fn find(&self, name: &str) -> Option<(&Server, OfferedTool)> {
        self.inner
            .servers
            .iter()
            .find_map(|server| server.tool(name).map(|tool| (server, tool)))
    }
}

#[async_trait]
impl Toolbox for McpToolbox {
    fn schemas(&self) -> Vec<ToolSchema> {
        self.start_from_sync();
        self.inner
            .servers
            .iter()
            .flat_map(Server::tools)
            .map(|tool| ToolSchema {
                name: tool.name,
                description: tool.description,
                parameters: tool.parameters,
            })
            .collect()
    }

    async fn call(
        &self,
        name: &str,
        args: Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        self.inner.start().await;
        let Some((server, tool)) = self.find(name) else {
            // A failed server's tools are gone from `schemas()`; a call still names it.
            for server in self.inner.servers.iter().filter(|s| s.owns_name(name)) {
                if let Some(failure) = server.failure().await {
                    return Err(failure);
                }
            }
            return Err(ToolError::Refused(format!("unknown tool `{name}`")));
        };
        server.call(&tool, args, &ctx.cancel).await
    }

    /// Only tools the server marks `readOnlyHint: true`.
    fn idempotent(&self, name: &str) -> bool {
        self.find(name).is_some_and(|(_, tool)| tool.read_only)
    }

    /// Reads when the server marks the tool `readOnlyHint: true`, else acts (the server's
    /// other hints do not lift approvals); the family is always `Other` (always offered).
    fn effect(&self, name: &str) -> ToolEffect {
        if self.idempotent(name) {
            ToolEffect::Reads
        } else {
            ToolEffect::Acts
        }
    }
}
