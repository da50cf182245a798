//! The Chat Completions wire format: request bodies built from [`ChatRequest`], and lenient
//! parsing of replies into [`ChatResponse`].
//!
//! Compatible servers differ in small ways (content as an array of parts, arguments as an
//! object, missing ids, no usage…); the parsing here accepts all of them and ignores fields
//! it does not know.

use domain::llm::{
    ChatMessage, ChatRequest, ChatResponse, ResponseFormat, Role, ToolCall, ToolChoice, ToolSchema,
    Usage,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::ReasoningEcho;

// ---------------------------------------------------------------------------------------------
// Request
// ---------------------------------------------------------------------------------------------

/// The JSON body of `POST /chat/completions`.
#[derive(Debug, Serialize)]
pub(crate) struct WireRequest<'a> {
    model: &'a str,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<WireToolChoice<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<WireResponseFormat<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    /// Sent with a temperature only: OpenAI's and llama.cpp's `seed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<WireStreamOptions>,
}

#[derive(Debug, Serialize)]
struct WireStreamOptions {
    include_usage: bool,
}

/// How a request body is written, beyond the request itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct WireOptions {
    pub stream: bool,
    /// With `stream`: ask for usage in the last chunk.
    pub stream_usage: bool,
    pub reasoning_echo: ReasoningEcho,
}

#[derive(Debug, Serialize)]
struct WireMessage<'a> {
    role: &'static str,
    /// Always present; `null` only on an assistant turn that carries tool calls instead.
    content: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<WireToolCallOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_content: Option<&'a str>,
}

#[derive(Debug, Serialize)]
struct WireToolCallOut<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunctionOut<'a>,
}

#[derive(Debug, Serialize)]
struct WireFunctionOut<'a> {
    name: &'a str,
    arguments: std::borrow::Cow<'a, str>,
}

/// A past call's arguments as sent back: as the model wrote them when they are JSON, else
/// the domain's [`invalid_arguments`](domain::llm::transcript::invalid_arguments) object.
/// Servers that render the transcript through a chat template parse them (llama.cpp's
/// answered HTTP 500 "Failed to parse tool call arguments as JSON" to every later request
/// of a run whose model once wrote plain text there, and the run failed).
fn sent_arguments(arguments: &str) -> std::borrow::Cow<'_, str> {
    if serde_json::from_str::<serde::de::IgnoredAny>(arguments).is_ok() {
        std::borrow::Cow::Borrowed(arguments)
    } else {
        std::borrow::Cow::Owned(domain::llm::transcript::invalid_arguments(arguments).to_string())
    }
}

#[derive(Debug, Serialize)]
struct WireTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunctionDef<'a>,
}

#[derive(Debug, Serialize)]
struct WireFunctionDef<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
enum WireToolChoice<'a> {
    Mode(&'static str),
    Function {
        #[serde(rename = "type")]
        kind: &'static str,
        function: WireFunctionName<'a>,
    },
}

#[derive(Debug, Serialize)]
struct WireFunctionName<'a> {
    name: &'a str,
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireResponseFormat<'a> {
    JsonObject,
    JsonSchema { json_schema: WireJsonSchema<'a> },
}

#[derive(Debug, Serialize)]
struct WireJsonSchema<'a> {
    name: &'a str,
    schema: &'a Value,
}

/// Translates a domain request into the wire body. `purpose` is domain metadata and is not
/// sent.
pub(crate) fn build_request<'a>(
    model: &'a str,
    request: &'a ChatRequest,
    options: WireOptions,
) -> WireRequest<'a> {
    let has_tools = !request.tools.is_empty();
    // Assistant turns after this index belong to the current question.
    let last_user = request
        .messages
        .iter()
        .rposition(|m| m.role == Role::User)
        .unwrap_or(0);
    WireRequest {
        model,
        messages: request
            .messages
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let echo = match options.reasoning_echo {
                    ReasoningEcho::Always => true,
                    ReasoningEcho::CurrentTurn => i > last_user,
                    ReasoningEcho::Never => false,
                };
                wire_message(m, echo)
            })
            .collect(),
        tools: request.tools.iter().map(wire_tool).collect(),
        tool_choice: has_tools.then(|| wire_tool_choice(&request.tool_choice)),
        response_format: wire_response_format(&request.response_format),
        temperature: request.temperature,
        seed: request.seed.filter(|_| request.temperature.is_some()),
        max_tokens: request.max_tokens,
        stream: options.stream,
        stream_options: (options.stream && options.stream_usage).then_some(WireStreamOptions {
            include_usage: true,
        }),
    }
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

fn wire_message(m: &ChatMessage, echo_reasoning: bool) -> WireMessage<'_> {
    let is_assistant = m.role == Role::Assistant;
    // `content: null` is only valid on an assistant turn that carries tool calls; everywhere
    // else servers expect a string, so a missing text becomes "".
    let content = match m.content.as_deref() {
        Some(text) => Some(text),
        None if is_assistant && !m.tool_calls.is_empty() => None,
        None => Some(""),
    };
    WireMessage {
        role: role_name(m.role),
        content,
        tool_calls: if is_assistant {
            m.tool_calls
                .iter()
                .map(|c| WireToolCallOut {
                    id: &c.id,
                    kind: "function",
                    function: WireFunctionOut {
                        name: &c.name,
                        arguments: sent_arguments(&c.arguments),
                    },
                })
                .collect()
        } else {
            Vec::new()
        },
        tool_call_id: if m.role == Role::Tool {
            m.tool_call_id.as_deref()
        } else {
            None
        },
        reasoning_content: if is_assistant && echo_reasoning {
            m.reasoning_content.as_deref()
        } else {
            None
        },
    }
}

fn wire_tool(t: &ToolSchema) -> WireTool<'_> {
    WireTool {
        kind: "function",
        function: WireFunctionDef {
            name: &t.name,
            description: &t.description,
            parameters: &t.parameters,
        },
    }
}

fn wire_tool_choice(choice: &ToolChoice) -> WireToolChoice<'_> {
    match choice {
        ToolChoice::Auto => WireToolChoice::Mode("auto"),
        ToolChoice::None => WireToolChoice::Mode("none"),
        ToolChoice::Required => WireToolChoice::Mode("required"),
        ToolChoice::Function(name) => WireToolChoice::Function {
            kind: "function",
            function: WireFunctionName { name },
        },
    }
}

fn wire_response_format(format: &ResponseFormat) -> Option<WireResponseFormat<'_>> {
    match format {
        ResponseFormat::Text => None,
        ResponseFormat::JsonObject => Some(WireResponseFormat::JsonObject),
        ResponseFormat::JsonSchema { name, schema } => Some(WireResponseFormat::JsonSchema {
            json_schema: WireJsonSchema { name, schema },
        }),
    }
}

// ---------------------------------------------------------------------------------------------
// Response
// ---------------------------------------------------------------------------------------------

/// A `chat.completion` object, keeping only what we use. Every field is optional and of a
/// forgiving type; unknown fields are ignored.
#[derive(Debug, Deserialize)]
struct WireResponse {
    #[serde(default)]
    choices: Option<Vec<WireChoice>>,
    /// `{prompt_tokens, completion_tokens, prompt_tokens_details: {cached_tokens}}`, each
    /// part optional; read by [`usage_of`].
    #[serde(default)]
    usage: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct WireChoice {
    #[serde(default)]
    message: Option<WireReply>,
    #[serde(default)]
    finish_reason: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct WireReply {
    /// A string, `null`, or an array of parts (`[{"type":"text","text":"…"}]`).
    #[serde(default)]
    content: Option<Value>,
    /// OpenAI's refusal text, used as content when there is no other.
    #[serde(default)]
    refusal: Option<Value>,
    #[serde(default)]
    tool_calls: Option<Vec<WireToolCallIn>>,
    /// The legacy single `function_call`, still sent by a few servers.
    #[serde(default)]
    function_call: Option<WireFunctionIn>,
    #[serde(default)]
    reasoning_content: Option<Value>,
    /// What vLLM (newer versions) and OpenRouter call `reasoning_content`.
    #[serde(default)]
    reasoning: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct WireToolCallIn {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    function: Option<WireFunctionIn>,
}

#[derive(Debug, Deserialize)]
struct WireFunctionIn {
    #[serde(default)]
    name: Option<Value>,
    /// A JSON string (OpenAI), an object (Ollama), or missing.
    #[serde(default)]
    arguments: Option<Value>,
}

/// Turns a parsed reply body (already known not to be an error object) into a domain
/// response. The error string says what was wrong, for [`domain::LlmError::InvalidResponse`].
pub(crate) fn parse_response(body: Value) -> Result<ChatResponse, String> {
    let wire: WireResponse = serde_json::from_value(body)
        .map_err(|e| format!("unexpected chat completion shape: {e}"))?;
    let choice = wire
        .choices
        .and_then(|choices| choices.into_iter().next())
        .ok_or_else(|| "the reply has no choices".to_owned())?;
    let message = choice
        .message
        .ok_or_else(|| "the first choice has no message".to_owned())?;

    let mut tool_calls: Vec<ToolCall> = message
        .tool_calls
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(index, call)| tool_call(index, call.id, call.function))
        .collect();
    if tool_calls.is_empty() {
        if let Some(function) = message.function_call {
            tool_calls.push(tool_call(0, None, Some(function)));
        }
    }

    let content = message
        .content
        .and_then(content_text)
        .or_else(|| message.refusal.and_then(text_of));

    Ok(ChatResponse {
        content,
        tool_calls,
        reasoning_content: message
            .reasoning_content
            .and_then(text_of)
            .or_else(|| message.reasoning.and_then(text_of)),
        usage: wire.usage.as_ref().map(usage_of).unwrap_or_default(),
        finish_reason: choice.finish_reason.and_then(text_of),
    })
}

fn tool_call(index: usize, id: Option<Value>, function: Option<WireFunctionIn>) -> ToolCall {
    let (name, arguments) = match function {
        Some(f) => (f.name.and_then(text_of), f.arguments),
        None => (None, None),
    };
    ToolCall {
        id: id
            .and_then(text_of)
            .filter(|id| !id.is_empty())
            .unwrap_or_else(|| format!("call_{index}")),
        name: name.unwrap_or_default(),
        arguments: arguments_text(arguments),
    }
}

/// Arguments as raw JSON text: strings verbatim, objects (and anything else) serialized,
/// missing or null as `{}`.
pub(crate) fn arguments_text(arguments: Option<Value>) -> String {
    match arguments {
        None | Some(Value::Null) => "{}".to_owned(),
        Some(Value::String(s)) if s.trim().is_empty() => "{}".to_owned(),
        Some(Value::String(s)) => s,
        Some(other) => other.to_string(),
    }
}

/// Message content: a string, or the texts of an array of parts joined together.
pub(crate) fn content_text(content: Value) -> Option<String> {
    match content {
        Value::Null => None,
        Value::String(s) => Some(s),
        Value::Array(parts) => {
            let texts: Vec<String> = parts.into_iter().filter_map(part_text).collect();
            (!texts.is_empty()).then(|| texts.concat())
        }
        other => Some(other.to_string()),
    }
}

/// The text of one content part: `{"type":"text","text":"…"}` or a bare string. Other
/// parts (images, "thinking" blocks…) carry no answer text and are skipped.
fn part_text(part: Value) -> Option<String> {
    match part {
        Value::String(s) => Some(s),
        Value::Object(mut map) => {
            let kind = map.get("type").and_then(Value::as_str);
            if matches!(kind, None | Some("text" | "output_text")) {
                map.remove("text").and_then(text_of)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// A string value as is, null as `None`, anything else as its JSON text.
pub(crate) fn text_of(value: Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::String(s) => Some(s),
        other => Some(other.to_string()),
    }
}

/// A `usage` object of a reply or of a stream's last chunk. The cached count comes from
/// `prompt_tokens_details.cached_tokens` (OpenAI, vLLM, DeepSeek-compatible servers); it is
/// part of `prompt_tokens`, so it never exceeds it. Anything that is not an object counts 0.
pub(crate) fn usage_of(u: &Value) -> Usage {
    let prompt_tokens = count(u.get("prompt_tokens").cloned());
    let cached = count(
        u.get("prompt_tokens_details")
            .and_then(|d| d.get("cached_tokens"))
            .cloned(),
    );
    Usage {
        prompt_tokens,
        completion_tokens: count(u.get("completion_tokens").cloned()),
        cached_prompt_tokens: cached.min(prompt_tokens),
    }
}

/// A token count; missing, null, negative or non-numeric counts as 0.
pub(crate) fn count(value: Option<Value>) -> u64 {
    match value {
        Some(Value::Number(n)) => n
            .as_u64()
            .or_else(|| n.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
            .unwrap_or(0),
        Some(Value::String(s)) => s.trim().parse().unwrap_or(0),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::llm::CallPurpose;
    use serde_json::json;

    fn body(request: &ChatRequest) -> Value {
        serde_json::to_value(build_request("m", request, WireOptions::default())).unwrap()
    }

    #[test]
    fn plain_request_has_no_optional_fields() {
        let r = ChatRequest::new(CallPurpose::Other, vec![ChatMessage::user("hi")]);
        assert_eq!(
            body(&r),
            json!({"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": false})
        );
    }

    #[test]
    fn tool_choice_is_sent_only_with_tools() {
        let mut r = ChatRequest::new(CallPurpose::Other, vec![ChatMessage::user("hi")]);
        r.tool_choice = ToolChoice::Required;
        assert!(body(&r).get("tool_choice").is_none());
        let tool = ToolSchema {
            name: "f".into(),
            description: "d".into(),
            parameters: json!({"type": "object"}),
        };
        for (choice, expected) in [
            (ToolChoice::Auto, json!("auto")),
            (ToolChoice::None, json!("none")),
            (ToolChoice::Required, json!("required")),
            (
                ToolChoice::Function("f".into()),
                json!({"type": "function", "function": {"name": "f"}}),
            ),
        ] {
            let r = r.clone().with_tools(vec![tool.clone()], choice);
            let b = body(&r);
            assert_eq!(b["tool_choice"], expected);
            assert_eq!(
                b["tools"],
                json!([{"type": "function", "function": {"name": "f", "description": "d", "parameters": {"type": "object"}}}])
            );
        }
    }

    #[test]
    fn response_formats() {
        let mut r = ChatRequest::new(CallPurpose::Other, vec![]);
        assert!(body(&r).get("response_format").is_none());
        r.response_format = ResponseFormat::JsonObject;
        assert_eq!(body(&r)["response_format"], json!({"type": "json_object"}));
        r.response_format = ResponseFormat::JsonSchema {
            name: "plan".into(),
            schema: json!({"type": "object"}),
        };
        assert_eq!(
            body(&r)["response_format"],
            json!({"type": "json_schema", "json_schema": {"name": "plan", "schema": {"type": "object"}}})
        );
    }

    #[test]
    fn temperature_and_max_tokens_when_set() {
        let mut r = ChatRequest::new(CallPurpose::Other, vec![]);
        r.temperature = Some(0.5);
        r.max_tokens = Some(100);
        let b = body(&r);
        assert_eq!(b["temperature"], json!(0.5));
        assert_eq!(b["max_tokens"], json!(100));
        assert!(b.get("seed").is_none(), "no seed was set: {b}");
    }

    /// A sampled call's seed goes with it; without a temperature it means nothing and is
    /// not sent.
    #[test]
    fn a_sampled_calls_seed_is_sent() {
        let mut r = ChatRequest::new(CallPurpose::Other, vec![]);
        r.seed = Some(7);
        assert!(body(&r).get("seed").is_none());
        r.temperature = Some(0.7);
        assert_eq!(body(&r)["seed"], json!(7));
    }

    /// A past call whose arguments were not JSON goes back as JSON holding them, so that a
    /// server parsing the transcript does not refuse every later request.
    #[test]
    fn past_arguments_that_are_not_json_go_back_as_json() {
        let call = |arguments: &str| ChatMessage {
            role: Role::Assistant,
            content: None,
            tool_calls: vec![ToolCall {
                id: "c1".into(),
                name: "f".into(),
                arguments: arguments.into(),
            }],
            tool_call_id: None,
            reasoning_content: None,
        };
        for (written, sent) in [
            (
                "wrote 35 bytes",
                json!({"invalid_arguments": "wrote 35 bytes"}).to_string(),
            ),
            (
                "{\"a\": 1",
                json!({"invalid_arguments": "{\"a\": 1"}).to_string(),
            ),
            ("{\"a\": 1}", "{\"a\": 1}".to_string()),
            ("\"text\"", "\"text\"".to_string()),
        ] {
            let r = ChatRequest::new(
                CallPurpose::Execute,
                vec![call(written), ChatMessage::tool_result("c1", "invalid")],
            );
            assert_eq!(
                body(&r)["messages"][0]["tool_calls"][0]["function"]["arguments"],
                json!(sent),
                "{written}"
            );
        }
    }

    #[test]
    fn assistant_tool_turn_and_tool_result() {
        let assistant = ChatMessage {
            role: Role::Assistant,
            content: None,
            tool_calls: vec![ToolCall {
                id: "c1".into(),
                name: "f".into(),
                arguments: "{\"a\":1}".into(),
            }],
            tool_call_id: None,
            reasoning_content: Some("think".into()),
        };
        let r = ChatRequest::new(
            CallPurpose::Execute,
            vec![assistant, ChatMessage::tool_result("c1", "out")],
        );
        assert_eq!(
            body(&r)["messages"],
            json!([
                {"role": "assistant", "content": null, "reasoning_content": "think",
                 "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"a\":1}"}}]},
                {"role": "tool", "content": "out", "tool_call_id": "c1"}
            ])
        );
    }

    #[test]
    fn parses_lenient_shapes() {
        let r = parse_response(json!({
            "choices": [{"message": {
                "content": [{"type": "text", "text": "a"}, {"type": "image_url"}, {"type": "text", "text": "b"}],
                "tool_calls": [
                    {"function": {"name": "f", "arguments": {"x": 1}}},
                    {"id": "", "function": {"name": "g"}},
                    {"id": "k", "type": "function", "function": {"name": "h", "arguments": "{\"y\":2}"}}
                ]
            }, "finish_reason": null}]
        }))
        .unwrap();
        assert_eq!(r.content.as_deref(), Some("ab"));
        assert_eq!(r.tool_calls[0].id, "call_0");
        assert_eq!(r.tool_calls[0].arguments, "{\"x\":1}");
        assert_eq!(r.tool_calls[1].id, "call_1");
        assert_eq!(r.tool_calls[1].arguments, "{}");
        assert_eq!(r.tool_calls[2].id, "k");
        assert_eq!(r.tool_calls[2].arguments, "{\"y\":2}");
        assert_eq!(r.usage, Usage::default());
        assert_eq!(r.finish_reason, None);
    }

    #[test]
    fn refusal_and_legacy_function_call() {
        let r =
            parse_response(json!({"choices": [{"message": {"content": null, "refusal": "no"}}]}))
                .unwrap();
        assert_eq!(r.content.as_deref(), Some("no"));
        let r = parse_response(json!({"choices": [{"message": {
            "function_call": {"name": "f", "arguments": "{}"}
        }}]}))
        .unwrap();
        assert_eq!(r.tool_calls.len(), 1);
        assert_eq!(r.tool_calls[0].name, "f");
        assert_eq!(r.tool_calls[0].id, "call_0");
    }

    #[test]
    fn no_choices_is_an_error() {
        assert!(parse_response(json!({"choices": []})).is_err());
        assert!(parse_response(json!({"choices": null})).is_err());
        assert!(parse_response(json!({"id": "x"})).is_err());
        assert!(parse_response(json!([1, 2])).is_err());
    }

    #[test]
    fn usage_counts_are_forgiving() {
        let r = parse_response(json!({
            "choices": [{"message": {"content": "x"}}],
            "usage": {"prompt_tokens": 12, "completion_tokens": null}
        }))
        .unwrap();
        assert_eq!(
            r.usage,
            Usage {
                prompt_tokens: 12,
                completion_tokens: 0,
                cached_prompt_tokens: 0
            }
        );
    }

    #[test]
    fn cached_tokens_are_read_from_prompt_tokens_details() {
        let usage = |u: Value| {
            parse_response(json!({"choices": [{"message": {"content": "x"}}], "usage": u}))
                .unwrap()
                .usage
        };
        let u = usage(json!({
            "prompt_tokens": 2006, "completion_tokens": 300,
            "prompt_tokens_details": {"cached_tokens": 1920, "audio_tokens": 0}
        }));
        assert_eq!(
            u,
            Usage {
                prompt_tokens: 2006,
                completion_tokens: 300,
                cached_prompt_tokens: 1920
            }
        );
        let cached = |details: Value| {
            usage(json!({"prompt_tokens": 100, "prompt_tokens_details": details}))
                .cached_prompt_tokens
        };
        assert_eq!(cached(json!({"cached_tokens": "64"})), 64);
        assert_eq!(cached(json!({"cached_tokens": null})), 0);
        assert_eq!(cached(json!({"cached_tokens": -5})), 0);
        assert_eq!(cached(json!({"cached_tokens": "lots"})), 0);
        assert_eq!(cached(json!({})), 0);
        assert_eq!(cached(json!(null)), 0);
        assert_eq!(cached(json!("64")), 0);
        // More cached than prompt tokens is a server bug; cached is part of prompt.
        assert_eq!(cached(json!({"cached_tokens": 500})), 100);
        assert_eq!(usage(json!("not an object")), Usage::default());
    }
}
