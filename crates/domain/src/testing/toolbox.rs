//! [`EchoToolbox`]: a [`Toolbox`] that runs nothing. `shell_exec` echoes its command,
//! `file_write` (not in its schemas) says what it would write,
//! `boom` fails, `panic` panics (a tool bug), any other name is refused; each call can be
//! delayed (tokio's clock) and can fire a hook (to stop a run from inside a tool call).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};

use crate::model::tool_kind::ToolFamily;
use crate::ports::llm::ToolSchema;
use crate::ports::{ToolContext, ToolError, ToolOutput, Toolbox};

type Hook = Arc<dyn Fn() + Send + Sync>;

#[derive(Default, Clone)]
pub struct EchoToolbox {
    delay: Option<Duration>,
    on_call: Option<Hook>,
    /// Tools offered beside `shell_exec` (they answer as by name above).
    also_offered: Vec<String>,
}

impl EchoToolbox {
    pub fn new() -> EchoToolbox {
        EchoToolbox::default()
    }
    /// Every call takes `delay` (of tokio's clock) before it answers.
    pub fn delay(mut self, delay: Duration) -> EchoToolbox {
        self.delay = Some(delay);
        self
    }
    /// Offers `tool` too (e.g. `boom`: a known tool that fails).
    pub fn offering(mut self, tool: &str) -> EchoToolbox {
        self.also_offered.push(tool.to_string());
        self
    }
    /// `hook` runs at the start of every call.
    pub fn on_call(mut self, hook: impl Fn() + Send + Sync + 'static) -> EchoToolbox {
        self.on_call = Some(Arc::new(hook));
        self
    }
}

#[async_trait]
impl Toolbox for EchoToolbox {
    fn schemas(&self) -> Vec<ToolSchema> {
        std::iter::once("shell_exec")
            .chain(self.also_offered.iter().map(String::as_str))
            .map(|name| ToolSchema {
                name: name.into(),
                description: "run".into(),
                parameters: json!({"type": "object"}),
            })
            .collect()
    }

    /// As the built-in tools it stands in for declare it.
    fn family(&self, name: &str) -> ToolFamily {
        match name {
            "shell_exec" => ToolFamily::Shell,
            "file_write" => ToolFamily::Files,
            "code_run" => ToolFamily::Code,
            _ => ToolFamily::Other,
        }
    }

    async fn call(
        &self,
        name: &str,
        args: Value,
        _ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        if let Some(hook) = &self.on_call {
            hook();
        }
        if let Some(delay) = self.delay {
            tokio::time::sleep(delay).await;
        }
        match name {
            "shell_exec" => Ok(ToolOutput::ok(format!(
                "exit code: 0\nstdout: ran {}",
                args["command"].as_str().unwrap_or("?")
            ))),
            "file_write" => Ok(ToolOutput::ok(format!(
                "Wrote {} bytes to '{}'",
                args["content"].as_str().map_or(0, str::len),
                args["path"].as_str().unwrap_or("?")
            ))),
            "boom" => Err(ToolError::Failed("kaboom".into())),
            "code_run" => Err(ToolError::Failed(
                "exit code: 1\nTraceback: ValueError".into(),
            )),
            "panic" => panic!("tool bug"),
            other => Err(ToolError::Refused(format!("unknown tool '{other}'"))),
        }
    }
}
