//! The body of `POST /v1/messages`, built from a [`ChatRequest`]:
//!
//! - the leading system messages become the top-level `system` (a later system message, which
//!   the API has no place for, is sent as user text where it stood);
//! - user messages are `text` blocks; an assistant turn is its text and one `tool_use` block
//!   per call (parallel calls side by side, `input` the parsed arguments); each tool message
//!   is a `tool_result` block in a user turn, `is_error: true` when the engine marked the
//!   result as a failure (see [`is_failure`]);
//! - consecutive turns of one role are merged into one message (the API wants user and
//!   assistant turns to alternate), the `tool_result` blocks first in a user turn;
//! - tools are `{name, description, input_schema}`, the tool choice `auto`, `none`, `any`
//!   or `tool`; `max_tokens` is always set;
//! - with prompt caching, `cache_control: {"type": "ephemeral"}` on the stable prefix
//!   ([`mark_cache_breakpoints`]; the crate's `//!` doc says why there).

use domain::llm::{ChatMessage, ChatRequest, Role, ToolChoice, ToolSchema};
use serde::Serialize;
use serde_json::{json, Map, Value};

/// The text sent for a user message with no text (the API refuses empty text blocks).
const EMPTY_MESSAGE: &str = "(empty message)";
/// The content of a tool result with no text.
const NO_OUTPUT: &str = "(no output)";

/// How the engine's tool results begin when the call failed or was refused
/// (`crates/domain/src/engine/executor/tool_call.rs`): the port's tool message carries no
/// failure flag, so these are read as one.
const FAILURE_PREFIXES: [&str; 2] = ["Error:", "Refused:"];

/// The API's limit on `cache_control` breakpoints in one request.
pub(crate) const MAX_CACHE_BREAKPOINTS: usize = 4;

/// How a request body is written, beyond the request itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RequestOptions {
    /// `max_tokens` when the request sets none.
    pub max_tokens: u32,
    pub stream: bool,
    pub prompt_caching: bool,
}

/// The JSON body of `POST /v1/messages`.
#[derive(Debug, Serialize)]
pub(crate) struct WireRequest<'a> {
    model: &'a str,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    system: Vec<Block>,
    messages: Vec<WireMessage>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<WireToolChoice<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
}

impl WireRequest<'_> {
    /// The `max_tokens` the body asks for.
    pub(crate) fn max_tokens(&self) -> u32 {
        self.max_tokens
    }
}

/// `{"type": "ephemeral"}`: a prompt-cache breakpoint (five minutes' lifetime).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
}

const EPHEMERAL: CacheControl = CacheControl { kind: "ephemeral" };

/// One content block of a message (or of `system`, text only).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block {
    Text {
        text: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolUse {
        id: String,
        name: String,
        input: Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolResult {
        tool_use_id: String,
        content: String,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
}

impl Block {
    fn text(text: impl Into<String>) -> Block {
        Block::Text {
            text: text.into(),
            cache_control: None,
        }
    }

    fn mark(&mut self) {
        let (Block::Text { cache_control, .. }
        | Block::ToolUse { cache_control, .. }
        | Block::ToolResult { cache_control, .. }) = self;
        *cache_control = Some(EPHEMERAL);
    }

    fn is_tool_result(&self) -> bool {
        matches!(self, Block::ToolResult { .. })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
enum WireRole {
    User,
    Assistant,
}

#[derive(Debug, Serialize)]
struct WireMessage {
    role: WireRole,
    content: Vec<Block>,
}

#[derive(Debug, Serialize)]
struct WireTool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireToolChoice<'a> {
    Auto,
    None,
    Any,
    Tool { name: &'a str },
}

/// The body for `request`, sent to `model`.
pub(crate) fn build_request<'a>(
    model: &'a str,
    request: &'a ChatRequest,
    options: RequestOptions,
) -> WireRequest<'a> {
    let leading_system = request
        .messages
        .iter()
        .take_while(|m| m.role == Role::System)
        .count();
    let system: Vec<Block> = request.messages[..leading_system]
        .iter()
        .filter_map(|m| m.content.as_deref())
        .filter(|text| !text.trim().is_empty())
        .map(Block::text)
        .collect();
    let mut messages: Vec<WireMessage> = Vec::new();
    for message in &request.messages[leading_system..] {
        let (role, content) = wire_turn(message);
        if content.is_empty() {
            continue;
        }
        match messages.last_mut() {
            Some(last) if last.role == role => last.content.extend(content),
            _ => messages.push(WireMessage { role, content }),
        }
    }
    for message in &mut messages {
        if message.role == WireRole::User {
            // `tool_result` blocks come first in a user turn; the order is kept otherwise.
            message.content.sort_by_key(|block| !block.is_tool_result());
        }
    }
    let tools: Vec<WireTool<'a>> = request.tools.iter().map(wire_tool).collect();
    let tool_choice = (!tools.is_empty()).then(|| wire_tool_choice(&request.tool_choice));
    let mut body = WireRequest {
        model,
        max_tokens: request.max_tokens.unwrap_or(options.max_tokens),
        system,
        messages,
        tools,
        tool_choice,
        temperature: request.temperature,
        stream: options.stream,
    };
    if options.prompt_caching {
        mark_cache_breakpoints(&mut body);
    }
    body
}

/// Places the `cache_control` breakpoints, at most [`MAX_CACHE_BREAKPOINTS`], on what stays
/// the same from one call to the next: the last tool (caching all tools), the last `system`
/// block, the last block of the first user turn (the step's prompt, the same on every call
/// of the step) and the last block of the last turn (the transcript so far, which the next
/// call of the step starts with). A prefix too short for the model's cache minimum is
/// simply not cached; the API does not refuse it.
fn mark_cache_breakpoints(body: &mut WireRequest<'_>) {
    if let Some(tool) = body.tools.last_mut() {
        tool.cache_control = Some(EPHEMERAL);
    }
    if let Some(block) = body.system.last_mut() {
        block.mark();
    }
    let first_user = body.messages.iter().position(|m| m.role == WireRole::User);
    let last = body.messages.len().checked_sub(1);
    let mut turns = vec![first_user, last];
    turns.dedup();
    for index in turns.into_iter().flatten() {
        if let Some(block) = body.messages[index].content.last_mut() {
            block.mark();
        }
    }
    // Tools, system, two turns: never past the API's limit.
    const _: () = assert!(2 + 2 <= MAX_CACHE_BREAKPOINTS);
}

/// The role and blocks of one message of the port.
fn wire_turn(message: &ChatMessage) -> (WireRole, Vec<Block>) {
    let text = message.content.as_deref().unwrap_or_default();
    match message.role {
        Role::System | Role::User => {
            let text = if text.trim().is_empty() {
                EMPTY_MESSAGE
            } else {
                text
            };
            (WireRole::User, vec![Block::text(text)])
        }
        Role::Assistant => {
            let mut blocks = Vec::with_capacity(1 + message.tool_calls.len());
            if !text.trim().is_empty() {
                blocks.push(Block::text(text));
            }
            blocks.extend(message.tool_calls.iter().map(|call| Block::ToolUse {
                id: call.id.clone(),
                name: call.name.clone(),
                input: tool_input(&call.arguments),
                cache_control: None,
            }));
            (WireRole::Assistant, blocks)
        }
        Role::Tool => {
            let content = if text.trim().is_empty() {
                NO_OUTPUT
            } else {
                text
            };
            let block = Block::ToolResult {
                tool_use_id: message.tool_call_id.clone().unwrap_or_default(),
                content: content.to_owned(),
                is_error: is_failure(text),
                cache_control: None,
            };
            (WireRole::User, vec![block])
        }
    }
}

/// Whether a tool result reports a failed or refused call (it starts with one of
/// [`FAILURE_PREFIXES`]).
pub(crate) fn is_failure(result: &str) -> bool {
    let start = result.trim_start();
    FAILURE_PREFIXES
        .iter()
        .any(|prefix| start.starts_with(prefix))
}

/// A call's `input`, which the API wants as an object: the model's arguments when they are
/// one, `{}` when there are none, else `{"invalid_arguments": TEXT}` so the model still sees
/// what it wrote (the engine answered that call with an error).
fn tool_input(arguments: &str) -> Value {
    if arguments.trim().is_empty() {
        return Value::Object(Map::new());
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(object @ Value::Object(_)) => object,
        _ => domain::llm::transcript::invalid_arguments(arguments),
    }
}

fn wire_tool(tool: &ToolSchema) -> WireTool<'_> {
    let input_schema = match &tool.parameters {
        schema @ Value::Object(_) => schema.clone(),
        _ => json!({"type": "object", "properties": {}}),
    };
    WireTool {
        name: &tool.name,
        description: &tool.description,
        input_schema,
        cache_control: None,
    }
}

fn wire_tool_choice(choice: &ToolChoice) -> WireToolChoice<'_> {
    match choice {
        ToolChoice::Auto => WireToolChoice::Auto,
        ToolChoice::None => WireToolChoice::None,
        ToolChoice::Required => WireToolChoice::Any,
        ToolChoice::Function(name) => WireToolChoice::Tool { name },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::llm::{CallPurpose, ToolCall};

    const OPTIONS: RequestOptions = RequestOptions {
        max_tokens: 1000,
        stream: false,
        prompt_caching: true,
    };

    fn body(request: &ChatRequest, options: RequestOptions) -> Value {
        serde_json::to_value(build_request("claude-test", request, options)).unwrap()
    }

    fn call(id: &str, arguments: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: "file_read".into(),
            arguments: arguments.into(),
        }
    }

    fn breakpoints(body: &Value) -> usize {
        body.to_string().matches("\"cache_control\"").count()
    }

    #[test]
    fn arguments_become_an_object_whatever_the_model_wrote() {
        assert_eq!(tool_input(r#"{"path": "a"}"#), json!({"path": "a"}));
        assert_eq!(tool_input("  "), json!({}));
        assert_eq!(
            tool_input("{\"path\": "),
            json!({"invalid_arguments": "{\"path\": "})
        );
        assert_eq!(tool_input("[1]"), json!({"invalid_arguments": "[1]"}));
    }

    #[test]
    fn failures_are_read_from_the_engines_prefixes() {
        assert!(is_failure("Error: no such file"));
        assert!(is_failure("Refused: outside the workspace"));
        assert!(!is_failure("exit code 0\nError: only in the output later"));
    }

    #[test]
    fn a_later_system_message_is_user_text_in_place_and_empty_turns_are_dropped() {
        let request = ChatRequest::new(
            CallPurpose::Execute,
            vec![
                ChatMessage::system("rules"),
                ChatMessage::user("task"),
                ChatMessage::assistant("  "),
                ChatMessage::system("the context was trimmed"),
            ],
        );
        let body = body(
            &request,
            RequestOptions {
                prompt_caching: false,
                ..OPTIONS
            },
        );
        assert_eq!(body["system"], json!([{"type": "text", "text": "rules"}]));
        assert_eq!(
            body["messages"],
            json!([{"role": "user", "content": [
                {"type": "text", "text": "task"},
                {"type": "text", "text": "the context was trimmed"}
            ]}])
        );
        assert_eq!(breakpoints(&body), 0);
        assert!(body.get("tools").is_none() && body.get("tool_choice").is_none());
        assert!(body.get("stream").is_none());
    }

    #[test]
    fn results_come_first_in_a_user_turn_and_breakpoints_stay_within_the_limit() {
        let request = ChatRequest::new(
            CallPurpose::Execute,
            vec![
                ChatMessage::system("rules"),
                ChatMessage::user("task"),
                ChatMessage {
                    tool_calls: vec![call("a", "{}"), call("b", "{}")],
                    ..ChatMessage::assistant("")
                },
                ChatMessage::tool_result("a", "ra"),
                ChatMessage::system("note"),
                ChatMessage::tool_result("b", "Error: missing"),
            ],
        )
        .with_tools(
            vec![ToolSchema {
                name: "file_read".into(),
                description: "Read".into(),
                parameters: Value::Null,
            }],
            ToolChoice::Function("file_read".into()),
        );
        let body = body(&request, OPTIONS);
        let last = &body["messages"][2]["content"];
        assert_eq!(last[0]["type"], "tool_result");
        assert_eq!(last[1]["type"], "tool_result");
        assert_eq!(last[1]["is_error"], true);
        assert_eq!(last[2]["text"], "note");
        assert_eq!(last[2]["cache_control"], json!({"type": "ephemeral"}));
        assert_eq!(
            body["tools"][0]["input_schema"],
            json!({"type": "object", "properties": {}})
        );
        assert_eq!(
            body["tool_choice"],
            json!({"type": "tool", "name": "file_read"})
        );
        assert_eq!(breakpoints(&body), MAX_CACHE_BREAKPOINTS);
    }
}
