//! What a scripted LLM answers: text, tool calls, a flow plan, a step's `complete_step`.
//! Every reply reports 10 prompt and 5 completion tokens.

use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::{json, Value};

use crate::ports::llm::{ChatResponse, LlmError, ToolCall, Usage};

/// One answer of a scripted LLM.
pub type Reply = Result<ChatResponse, LlmError>;

/// The usage every reply reports.
pub fn usage() -> Usage {
    Usage {
        prompt_tokens: 10,
        completion_tokens: 5,
        cached_prompt_tokens: 0,
    }
}

/// A text answer.
pub fn text(s: &str) -> Reply {
    Ok(ChatResponse {
        content: Some(s.to_string()),
        usage: usage(),
        ..ChatResponse::default()
    })
}

/// A text answer holding `v` as JSON (the planners of plan-act, todo, dag, auto).
pub fn json_reply(v: Value) -> Reply {
    text(&v.to_string())
}

/// One answer with these tool calls, arguments as JSON.
pub fn calls(list: &[(&str, Value)]) -> Reply {
    raw_calls(
        &list
            .iter()
            .map(|(n, a)| (*n, a.to_string()))
            .collect::<Vec<_>>(),
    )
}

/// One answer with one tool call.
pub fn call(name: &str, args: Value) -> Reply {
    calls(&[(name, args)])
}

/// One answer with these tool calls, arguments as written (invalid JSON included). Call ids
/// are unique within the test process.
pub fn raw_calls(list: &[(&str, String)]) -> Reply {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    Ok(ChatResponse {
        tool_calls: list
            .iter()
            .map(|(name, args)| ToolCall {
                id: format!("call_{}", NEXT.fetch_add(1, Ordering::Relaxed)),
                name: name.to_string(),
                arguments: args.clone(),
            })
            .collect(),
        usage: usage(),
        ..ChatResponse::default()
    })
}

/// The flow planner's `planning` `create` call with these steps.
pub fn create_plan(steps: &[&str]) -> Reply {
    call(
        "planning",
        json!({"command": "create", "title": "Test plan", "steps": steps}),
    )
}

/// `complete_step` claiming success, with no other call.
pub fn done(result: &str) -> Reply {
    call("complete_step", json!({"success": true, "result": result}))
}

/// A shell call and `complete_step` in one turn: a step that acts, then claims success (an
/// executor claiming success without any tool call is refused for steps that ask for an
/// action).
pub fn acted(result: &str) -> Reply {
    calls(&[
        ("shell_exec", json!({"command": "true"})),
        ("complete_step", json!({"success": true, "result": result})),
    ])
}

/// `complete_step` reporting failure.
pub fn fail(result: &str) -> Reply {
    call("complete_step", json!({"success": false, "result": result}))
}
