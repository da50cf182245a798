//! The `planning` function's JSON schemas: the full OpenManus one and the two narrowed to
//! `create` / `update` for models that honour `required`.

use serde_json::json;

use super::{PlanningTool, COMMANDS, PLANNING};
use crate::model::plan_check::{STEP_MAX_CHARS, STEP_MIN_CHARS, TITLE_MAX_CHARS};
use crate::ports::llm::ToolSchema;

impl PlanningTool {
    pub fn schema() -> ToolSchema {
        ToolSchema {
            name: PLANNING.to_string(),
            description: "A planning tool that allows the agent to create and manage plans for \
                          solving complex tasks. The tool provides functionality for creating \
                          plans, updating plan steps, and tracking progress."
                .to_string(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "command": {
                        "description": "The command to execute. Available commands: create, update, list, get, set_active, mark_step, delete.",
                        "enum": COMMANDS,
                        "type": "string"
                    },
                    "plan_id": {
                        "description": "Unique identifier for the plan. Required for update, set_active, and delete commands. Optional for create (one is generated), get and mark_step (uses the active plan if not specified).",
                        "type": "string"
                    },
                    "title": {
                        "description": "Title for the plan. Required for create command, optional for update command.",
                        "type": "string"
                    },
                    "steps": {
                        "description": "List of plan steps. Required for create command, optional for update command. A step may start with a [KIND] tag.",
                        "type": "array",
                        "items": {"type": "string"}
                    },
                    "step_index": {
                        "description": "Index of the step to update (0-based). Required for mark_step command.",
                        "type": "integer"
                    },
                    "step_status": {
                        "description": "Status to set for a step. Used with mark_step command.",
                        "enum": ["not_started", "in_progress", "completed", "blocked", "failed", "skipped"],
                        "type": "string"
                    },
                    "step_notes": {
                        "description": "Additional notes for a step. Optional for mark_step command.",
                        "type": "string"
                    }
                },
                "required": ["command"],
                "additionalProperties": false
            }),
        }
    }

    /// The `planning` function narrowed to `create` (same name: the tool name is a
    /// contract): `command` can only be `create`, `title` (1..80 chars) and 1..`max_steps`
    /// steps (3..200 chars each) are required. A grammar-constrained model cannot leave them
    /// out, and a server that honours `required` will not either.
    pub fn create_schema(max_steps: usize) -> ToolSchema {
        Self::narrowed(
            "create",
            max_steps,
            "Create the plan: a short title and the steps.",
        )
    }

    /// The `planning` function narrowed to `update` of the active plan, as
    /// [`PlanningTool::create_schema`] is to `create`; `max_steps` counts the whole new list.
    pub fn update_schema(max_steps: usize) -> ToolSchema {
        Self::narrowed(
            "update",
            max_steps,
            "Replace the plan's steps with the full new list (completed steps kept as they are).",
        )
    }

    fn narrowed(command: &str, max_steps: usize, description: &str) -> ToolSchema {
        ToolSchema {
            name: PLANNING.to_string(),
            description: description.to_string(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "command": {"type": "string", "enum": [command]},
                    "title": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": TITLE_MAX_CHARS,
                        "description": "a short title of the plan"
                    },
                    "steps": {
                        "type": "array",
                        "minItems": 1,
                        "maxItems": max_steps.max(1),
                        "items": {"type": "string", "minLength": STEP_MIN_CHARS, "maxLength": STEP_MAX_CHARS},
                        "description": "each step one concrete action, in order"
                    }
                },
                "required": ["command", "title", "steps"],
                "additionalProperties": false
            }),
        }
    }
}
