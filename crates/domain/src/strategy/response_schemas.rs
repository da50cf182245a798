//! JSON schemas of the planners' structured answers (plan-act, todo, dag), sent as the
//! response format so a grammar-constrained model or a schema-honouring server cannot pad a
//! plan past its bound or leave out what the planner needs. The parsers stay lenient; these
//! only shape the answer. Pure: no I/O.

use serde_json::{json, Value};

use crate::model::plan_check::{STEP_MAX_CHARS, STEP_MIN_CHARS, TITLE_MAX_CHARS};

fn step_text() -> Value {
    json!({"type": "string", "minLength": STEP_MIN_CHARS, "maxLength": STEP_MAX_CHARS})
}

/// plan-act's `{title, goal, language, steps: [{id, description, fallback?}]}`, 1..`max_steps`.
pub fn plan_act(max_steps: usize) -> Value {
    json!({
        "type": "object",
        "properties": {
            "title": {"type": "string", "minLength": 1, "maxLength": TITLE_MAX_CHARS},
            "goal": {"type": "string", "maxLength": STEP_MAX_CHARS},
            "language": {"type": "string", "maxLength": 8},
            "steps": {
                "type": "array",
                "minItems": 1,
                "maxItems": max_steps.max(1),
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string", "maxLength": 8},
                        "description": step_text(),
                        "fallback": {"type": "string", "maxLength": STEP_MAX_CHARS}
                    },
                    "required": ["id", "description"]
                }
            }
        },
        "required": ["title", "goal", "steps"]
    })
}

/// todo's first list: `{todos: [{description, dependencies}]}`, 1..3 TODOs.
pub fn todo_init() -> Value {
    json!({
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "minItems": 1,
                "maxItems": 3,
                "items": {
                    "type": "object",
                    "properties": {
                        "description": step_text(),
                        "dependencies": {"type": "array", "maxItems": 3, "items": {"type": "integer"}}
                    },
                    "required": ["description", "dependencies"]
                }
            }
        },
        "required": ["todos"]
    })
}

/// dag's `{goal, subgoals: [{id, description, actions: [...]}]}`: at most `max_steps`
/// sub-goals of at most `max_steps` actions each.
pub fn dag(max_steps: usize) -> Value {
    let max = max_steps.max(1);
    json!({
        "type": "object",
        "properties": {
            "goal": {"type": "string", "maxLength": STEP_MAX_CHARS},
            "subgoals": {
                "type": "array",
                "minItems": 1,
                "maxItems": max,
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string", "maxLength": 8},
                        "description": step_text(),
                        "actions": {
                            "type": "array",
                            "minItems": 1,
                            "maxItems": max,
                            "items": {
                                "type": "object",
                                "properties": {
                                    "id": {"type": "string", "maxLength": 8},
                                    "description": step_text(),
                                    "depends_on": {"type": "array", "maxItems": max, "items": {"type": "string", "maxLength": 8}},
                                    "fallback": {"type": "string", "maxLength": STEP_MAX_CHARS}
                                },
                                "required": ["id", "description", "depends_on"]
                            }
                        }
                    },
                    "required": ["id", "description", "actions"]
                }
            }
        },
        "required": ["goal", "subgoals"]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_carry_the_bound() {
        assert_eq!(plan_act(4)["properties"]["steps"]["maxItems"], 4);
        assert_eq!(dag(5)["properties"]["subgoals"]["maxItems"], 5);
        assert_eq!(todo_init()["properties"]["todos"]["maxItems"], 3);
        assert_eq!(plan_act(0)["properties"]["steps"]["maxItems"], 1);
    }
}
