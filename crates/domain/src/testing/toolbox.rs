//! [`EchoToolbox`]: a [`Toolbox`] that runs nothing. `shell_exec` echoes its command,
//! `boom` fails, `panic` panics (a tool bug), any other name is refused; each call can be
//! delayed (tokio's clock) and can fire a hook (to stop a run from inside a tool call).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};

use crate::ports::llm::ToolSchema;
use crate::ports::{ToolContext, ToolError, ToolOutput, Toolbox};

type Hook = Arc<dyn Fn() + Send + Sync>;

#[derive(Default, Clone)]
pub struct EchoToolbox {
    delay: Option<Duration>,
    on_call: Option<Hook>,
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
    /// `hook` runs at the start of every call.
    pub fn on_call(mut self, hook: impl Fn() + Send + Sync + 'static) -> EchoToolbox {
        self.on_call = Some(Arc::new(hook));
        self
    }
}

#[async_trait]
impl Toolbox for EchoToolbox {
    fn schemas(&self) -> Vec<ToolSchema> {
        vec![ToolSchema {
            name: "shell_exec".into(),
            description: "run".into(),
            parameters: json!({"type": "object"}),
        }]
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
            "boom" => Err(ToolError::Failed("kaboom".into())),
            "panic" => panic!("tool bug"),
            other => Err(ToolError::Refused(format!("unknown tool '{other}'"))),
        }
    }
}
