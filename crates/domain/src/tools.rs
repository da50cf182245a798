//! [`ToolSet`], the plain [`Toolbox`] over a list of [`Tool`]s, and the domain's own
//! `complete_step` function, by which an executor ends a step.

use std::sync::Arc;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::error::ToolError;
use crate::llm::ToolSchema;
use crate::ports::{Tool, ToolContext, ToolOutput, Toolbox};

/// Name of the function that ends a step.
pub const COMPLETE_STEP: &str = "complete_step";

/// A toolbox made of individual tools; names must be unique. Schemas are computed once,
/// when a tool is added, not at every step.
#[derive(Clone, Default)]
pub struct ToolSet {
    tools: Vec<Arc<dyn Tool>>,
    schemas: Vec<ToolSchema>,
}

impl std::fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.tools.iter().map(|t| t.name().to_string()))
            .finish()
    }
}

impl ToolSet {
    pub fn new() -> ToolSet {
        ToolSet::default()
    }

    /// Adds a tool; a later tool with the same name replaces the earlier one.
    pub fn with(mut self, tool: Arc<dyn Tool>) -> ToolSet {
        self.tools.retain(|t| t.name() != tool.name());
        self.schemas.retain(|s| s.name != tool.name());
        self.schemas.push(ToolSchema {
            name: tool.name().to_string(),
            description: tool.description().to_string(),
            parameters: tool.parameters(),
        });
        self.tools.push(tool);
        self
    }

    pub fn extend(mut self, tools: impl IntoIterator<Item = Arc<dyn Tool>>) -> ToolSet {
        for t in tools {
            self = self.with(t);
        }
        self
    }

    pub fn names(&self) -> Vec<String> {
        self.tools.iter().map(|t| t.name().to_string()).collect()
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|t| t.name() == name)
    }
}

#[async_trait]
impl Toolbox for ToolSet {
    fn schemas(&self) -> Vec<ToolSchema> {
        self.schemas.clone()
    }

    async fn call(
        &self,
        name: &str,
        args: Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        match self.get(name) {
            Some(tool) => tool.execute(args, ctx).await,
            None => Err(ToolError::Refused(format!(
                "unknown tool '{name}'; available tools: {}",
                self.names().join(", ")
            ))),
        }
    }
}

/// Arguments of `complete_step`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CompleteStepArgs {
    pub success: bool,
    pub result: String,
    /// The executor learned that the remaining plan no longer fits.
    #[serde(default)]
    pub revise_plan: bool,
}

/// The `complete_step` schema, built once.
pub fn complete_step_schema() -> ToolSchema {
    static SCHEMA: std::sync::LazyLock<ToolSchema> =
        std::sync::LazyLock::new(build_complete_step_schema);
    SCHEMA.clone()
}

fn build_complete_step_schema() -> ToolSchema {
    ToolSchema {
        name: COMPLETE_STEP.to_string(),
        description: "Finish the current step. Call it once the step is done (success=true) or \
                      cannot be done (success=false). `result` summarises what you did and found, \
                      including any facts later steps need; on failure, say why."
            .to_string(),
        parameters: json!({
            "type": "object",
            "properties": {
                "success": {"type": "boolean", "description": "true if the step achieved its goal"},
                "result": {"type": "string", "description": "what was done and found, or why it failed"},
                "revise_plan": {"type": "boolean", "description": "optional: true if what you found means the remaining steps of the plan no longer fit"}
            },
            "required": ["success", "result"],
            "additionalProperties": false
        }),
    }
}
