//! What `planwright mcp list`, `planwright mcp check NAME` and the MCP lines of
//! `planwright tools list` print (each starts the servers it reports on).

use crate::error::AppError;
use runner::mcp::McpServers;

/// The MCP lines of `tools list` and the number of MCP tools offered (but those `disabled`,
/// `--disabled-tools` patterns); starts the servers.
pub async fn tools_lines(disabled: &[String], servers: &McpServers) -> (String, usize) {
    #[cfg(feature = "mcp")]
    if let Some(toolbox) = servers.toolbox() {
        toolbox.start().await;
        let offered: Vec<String> = runner::mcp::executor_toolbox(
            domain::tools::builtin::ToolSet::new(),
            disabled,
            servers,
        )
        .schemas()
        .into_iter()
        .map(|s| s.name)
        .collect();
        let mut out = String::new();
        let mut count = 0;
        for status in toolbox.status().await {
            match &status.state {
                adapter_mcp::ServerState::Started { tools, .. } => {
                    let tools: Vec<&String> =
                        tools.iter().filter(|t| offered.contains(t)).collect();
                    count += tools.len();
                    if tools.is_empty() {
                        out.push_str(&format!(
                            "MCP {}: not offered (turned off by --disabled-tools)\n",
                            status.name
                        ));
                        continue;
                    }
                    let names: Vec<&str> = tools.iter().map(|t| t.as_str()).collect();
                    out.push_str(&format!("MCP {}: {}\n", status.name, names.join(", ")));
                }
                state => out.push_str(&format!(
                    "MCP {}: not offered ({})\n",
                    status.name,
                    state_text(state)
                )),
            }
        }
        return (out, count);
    }
    let _ = disabled;
    let out = servers
        .declarations()
        .iter()
        .map(|d| {
            format!(
                "MCP {}: not offered (this planwright was built without the `mcp` feature)\n",
                d.name
            )
        })
        .collect();
    (out, 0)
}

/// `planwright mcp list`: each declared server, where, its transport and its state after
/// trying to start it.
#[cfg(feature = "mcp")]
pub async fn list(servers: &McpServers) -> Result<String, AppError> {
    let Some(toolbox) = servers.toolbox() else {
        return Ok(
            "no MCP servers declared ([mcp_servers.NAME] in planwright.toml, \
                   docs/mcp.md)\n"
                .into(),
        );
    };
    toolbox.start().await;
    let statuses = toolbox.status().await;
    let mut out = String::new();
    for (declaration, status) in servers.declarations().iter().zip(&statuses) {
        out.push_str(&format!(
            "{} ({}:{}): {}: {}\n",
            declaration.name,
            declaration.file,
            declaration.line,
            transport_text(declaration),
            state_text(&status.state)
        ));
    }
    Ok(out)
}

/// `planwright mcp check NAME`: starts that server alone and lists its tools; an error
/// (exit 1) when it does not start, a usage error (exit 2) when no server has that name.
#[cfg(feature = "mcp")]
pub async fn check(servers: &McpServers, name: &str) -> Result<String, AppError> {
    use adapter_mcp::{McpToolbox, ServerState};
    use domain::ports::Toolbox;

    let declaration = servers
        .declarations()
        .iter()
        .find(|d| d.name == name)
        .ok_or_else(|| no_such_server(servers, name))?;
    let toolbox = McpToolbox::new([(name.to_string(), declaration.config.clone())])
        .map_err(|e| AppError::Config(e.to_string()))?;
    toolbox.start().await;
    let status = toolbox.status().await;
    let state = status
        .first()
        .map_or(ServerState::NotStarted, |s| s.state.clone());
    let ServerState::Started { tools, .. } = &state else {
        return Err(AppError::Run(format!(
            "MCP server `{name}` ({}): {}",
            transport_text(declaration),
            state_text(&state)
        )));
    };
    let mut out = format!(
        "{name} ({}): started, {} tools\n",
        transport_text(declaration),
        tools.len()
    );
    for tool in tools {
        let kind = if toolbox.idempotent(tool) {
            "read (re-run on resume, never asks)"
        } else {
            "effect"
        };
        out.push_str(&format!("  {tool}  {kind}\n"));
    }
    Ok(out)
}

#[cfg(not(feature = "mcp"))]
pub async fn list(_servers: &McpServers) -> Result<String, AppError> {
    Err(built_without())
}

#[cfg(not(feature = "mcp"))]
pub async fn check(servers: &McpServers, name: &str) -> Result<String, AppError> {
    if !servers.declarations().iter().any(|d| d.name == name) {
        return Err(no_such_server(servers, name));
    }
    Err(built_without())
}

#[cfg(not(feature = "mcp"))]
fn built_without() -> AppError {
    AppError::Config("this planwright was built without MCP (enable the `mcp` feature)".into())
}

fn no_such_server(servers: &McpServers, name: &str) -> AppError {
    let names: Vec<&str> = servers
        .declarations()
        .iter()
        .map(|d| d.name.as_str())
        .collect();
    let known = if names.is_empty() {
        "none is declared".to_string()
    } else {
        format!("declared: {}", names.join(", "))
    };
    AppError::NotFound(format!(
        "no MCP server `{name}` in the config files ({known})"
    ))
}

/// `stdio: COMMAND ARGS` or `http: URL`.
#[cfg(feature = "mcp")]
fn transport_text(declaration: &runner::mcp::Declaration) -> String {
    match declaration.config.transport(&declaration.name) {
        Ok(adapter_mcp::Transport::Stdio { command, args, .. }) => {
            let mut words = vec![command];
            words.extend(args);
            format!("stdio `{}`", words.join(" "))
        }
        Ok(adapter_mcp::Transport::Http { url, .. }) => format!("http {url}"),
        Err(e) => e.to_string(),
    }
}

#[cfg(feature = "mcp")]
fn state_text(state: &adapter_mcp::ServerState) -> String {
    use adapter_mcp::ServerState;
    match state {
        ServerState::NotStarted => "not started".into(),
        ServerState::Started {
            tools,
            alive,
            restarts,
            ..
        } => {
            let mut text = format!("started, {} tools", tools.len());
            if !alive {
                text.push_str(", exited since (started again on the next call)");
            }
            if *restarts > 0 {
                text.push_str(&format!(", restarted {restarts} time(s)"));
            }
            text
        }
        ServerState::Failed { error, .. } => format!("failed: {error}"),
    }
}
