//! Turning a [`ChatRequest`] into the chat messages fed to the model's own template, and
//! choosing the output protocol (tool call, JSON object or plain text) with its grammar.

use domain::error::LlmError;
use domain::llm::{ChatMessage, ChatRequest, ResponseFormat, Role, ToolChoice, ToolSchema};
use serde_json::Value;

use crate::code_surface;
use crate::grammar;
use crate::tools_text::describe_tools;

/// Used when the request has no system message (the template's own default system prompt
/// is dropped by llama.cpp's template engine, so there is always one).
pub const DEFAULT_SYSTEM: &str = "You are a helpful AI assistant.";

/// How the model must answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Protocol {
    /// Unconstrained text (summaries, plain answers).
    Text,
    /// One JSON object `{"tool": NAME, "arguments": {...}}` (or `{"content": "..."}` when
    /// plain answers are allowed), constrained by `grammar`.
    ToolCall { grammar: String },
    /// One JSON object, constrained by `grammar`, returned as content.
    Json { grammar: String },
    /// The code surface (docs/code-actions.md): a fenced program, `ASK: …`, `DONE: …` /
    /// `FAILED: …`, or a JSON call of another tool, constrained by `grammar` and read back
    /// into a tool call by `code_surface::parse`.
    Code { grammar: String },
}

/// A message ready for the chat template: a role name and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateMessage {
    pub role: &'static str,
    pub content: String,
}

/// What to render and how to decode.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    pub messages: Vec<TemplateMessage>,
    pub protocol: Protocol,
}

/// Builds the template messages and the protocol for `request`.
///
/// Tool choice: `None` (or no tools) → plain text; `Function(name)` → that tool only;
/// `Required` → any offered tool; `Auto` → any offered tool, plus a plain answer
/// `{"content": ...}` only when `allow_text_with_tools`.
pub fn prepare(request: &ChatRequest, allow_text_with_tools: bool) -> Result<Prepared, LlmError> {
    let offered: Vec<&ToolSchema> = match &request.tool_choice {
        ToolChoice::None => Vec::new(),
        ToolChoice::Function(name) => {
            let tool = request
                .tools
                .iter()
                .find(|t| &t.name == name)
                .ok_or_else(|| {
                    LlmError::Permanent(format!("tool_choice names `{name}`, which is not offered"))
                })?;
            vec![tool]
        }
        ToolChoice::Auto | ToolChoice::Required => request.tools.iter().collect(),
    };
    let allow_content = allow_text_with_tools && matches!(request.tool_choice, ToolChoice::Auto);

    let mut system = request
        .messages
        .iter()
        .filter(|m| m.role == Role::System)
        .filter_map(|m| m.content.as_deref())
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    if system.is_empty() {
        system = DEFAULT_SYSTEM.to_string();
    }

    let code = code_surface::applies(&request.tools);
    let protocol = if code && !offered.is_empty() {
        let forms = code_surface::forms(&offered);
        system.push_str("\n\n");
        system.push_str(&code_surface::describe(&forms));
        Protocol::Code {
            grammar: grammar::code_action_grammar(&forms),
        }
    } else if !offered.is_empty() {
        system.push_str("\n\n");
        system.push_str(&describe_tools(&offered, allow_content));
        Protocol::ToolCall {
            grammar: grammar::tool_call_grammar(&offered, allow_content),
        }
    } else {
        match &request.response_format {
            ResponseFormat::Text => Protocol::Text,
            ResponseFormat::JsonObject => {
                system.push_str("\n\nAnswer with one JSON object and nothing else.");
                Protocol::Json {
                    grammar: grammar::json_grammar(None),
                }
            }
            ResponseFormat::JsonSchema { schema, .. } => {
                system.push_str(&format!(
                    "\n\nAnswer with one JSON object matching this JSON schema, and nothing else:\n{}",
                    compact(schema)
                ));
                Protocol::Json {
                    grammar: grammar::json_grammar(Some(schema)),
                }
            }
        }
    };

    let mut messages = vec![TemplateMessage {
        role: "system",
        content: system,
    }];
    for (i, m) in request.messages.iter().enumerate() {
        match m.role {
            Role::System => {}
            Role::User => messages.push(TemplateMessage {
                role: "user",
                content: m.content.clone().unwrap_or_default(),
            }),
            Role::Assistant => messages.push(TemplateMessage {
                role: "assistant",
                content: if code {
                    code_surface::render_assistant(m)
                } else {
                    render_assistant(m)
                },
            }),
            Role::Tool => {
                let id = m.tool_call_id.as_deref().unwrap_or("?");
                let name = tool_name_of(&request.messages[..i], id).unwrap_or("tool");
                let result = m.content.as_deref().unwrap_or("");
                messages.push(TemplateMessage {
                    role: "user",
                    content: if code {
                        code_surface::render_result(name, result)
                    } else {
                        format!("Result of tool call {id} ({name}):\n{result}")
                    },
                });
            }
        }
    }
    Ok(Prepared { messages, protocol })
}

/// An assistant turn as text: its content, then each tool call as the JSON it was written as.
pub(crate) fn render_assistant(m: &ChatMessage) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(c) = m
        .content
        .as_deref()
        .map(str::trim)
        .filter(|c| !c.is_empty())
    {
        parts.push(c.to_string());
    }
    for call in &m.tool_calls {
        let args: Value = serde_json::from_str(&call.arguments)
            .unwrap_or_else(|_| Value::String(call.arguments.clone()));
        parts.push(serde_json::json!({"tool": call.name, "arguments": args}).to_string());
    }
    parts.join("\n")
}

/// The name of the tool call `id` made by an earlier assistant turn.
fn tool_name_of<'a>(earlier: &'a [ChatMessage], id: &str) -> Option<&'a str> {
    earlier
        .iter()
        .rev()
        .flat_map(|m| m.tool_calls.iter())
        .find(|c| c.id == id)
        .map(|c| c.name.as_str())
}

fn compact(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::llm::{CallPurpose, ToolCall};
    use serde_json::json;

    fn tool() -> ToolSchema {
        ToolSchema {
            name: "shell_exec".into(),
            description: "Run a command".into(),
            parameters: json!({"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}),
        }
    }

    #[test]
    fn tools_go_to_the_system_prompt_and_tool_turns_are_rendered() {
        let mut assistant = ChatMessage::assistant("");
        assistant.tool_calls.push(ToolCall {
            id: "call_1".into(),
            name: "shell_exec".into(),
            arguments: r#"{"command":"ls"}"#.into(),
        });
        let req = ChatRequest::new(
            CallPurpose::Execute,
            vec![
                ChatMessage::system("Be brief."),
                ChatMessage::user("List files"),
                assistant,
                ChatMessage::tool_result("call_1", "a.txt"),
            ],
        )
        .with_tools(vec![tool()], ToolChoice::Auto);
        let p = prepare(&req, false).unwrap();
        assert_eq!(p.messages[0].role, "system");
        assert!(p.messages[0].content.starts_with("Be brief."));
        assert!(p.messages[0]
            .content
            .contains("- shell_exec(command: string): Run a command"));
        assert_eq!(p.messages[2].role, "assistant");
        assert_eq!(
            p.messages[2].content,
            r#"{"arguments":{"command":"ls"},"tool":"shell_exec"}"#
        );
        assert_eq!(p.messages[3].role, "user");
        assert!(p.messages[3].content.contains("call_1 (shell_exec)"));
        assert!(p.messages[3].content.contains("a.txt"));
        assert!(matches!(p.protocol, Protocol::ToolCall { .. }));
    }

    #[test]
    fn no_system_message_gets_the_default_and_text_is_unconstrained() {
        let req = ChatRequest::new(CallPurpose::Summarize, vec![ChatMessage::user("hi")])
            .with_tools(vec![tool()], ToolChoice::None);
        let p = prepare(&req, false).unwrap();
        assert_eq!(p.messages[0].content, DEFAULT_SYSTEM);
        assert_eq!(p.protocol, Protocol::Text);
    }

    #[test]
    fn unknown_forced_function_is_refused() {
        let req = ChatRequest::new(CallPurpose::Execute, vec![ChatMessage::user("hi")])
            .with_tools(vec![tool()], ToolChoice::Function("nope".into()));
        assert!(matches!(prepare(&req, false), Err(LlmError::Permanent(_))));
    }

    #[test]
    fn json_format_gets_a_json_grammar() {
        let mut req = ChatRequest::new(CallPurpose::Plan, vec![ChatMessage::user("plan")]);
        req.response_format = ResponseFormat::JsonSchema {
            name: "plan".into(),
            schema: json!({"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}),
        };
        let p = prepare(&req, false).unwrap();
        match p.protocol {
            Protocol::Json { grammar } => assert!(grammar.contains(r#""\"title\"""#)),
            other => panic!("{other:?}"),
        }
    }
}
