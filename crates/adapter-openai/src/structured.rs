//! Structured output: which `response_format` to send, the JSON instruction for servers that
//! cannot be asked natively, spotting a server that rejects a format, and pulling the JSON
//! out of a reply.

use domain::llm::{ChatMessage, ChatRequest, ResponseFormat, Role};
use domain::LlmError;
use serde_json::Value;

use crate::json_text;

/// How JSON is asked of the server, best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JsonMode {
    /// `response_format: {"type": "json_schema", ...}`.
    Schema,
    /// `response_format: {"type": "json_object"}`, the schema (if any) in the prompt.
    Object,
    /// No `response_format`; the prompt asks for JSON and the reply is searched for it.
    Prompt,
}

/// The best mode for `format` given what the server still accepts; `None` for plain text.
pub(crate) fn mode_for(
    format: &ResponseFormat,
    schema_ok: bool,
    object_ok: bool,
) -> Option<JsonMode> {
    match format {
        ResponseFormat::Text => None,
        ResponseFormat::JsonSchema { .. } if schema_ok => Some(JsonMode::Schema),
        _ if object_ok => Some(JsonMode::Object),
        _ => Some(JsonMode::Prompt),
    }
}

/// The request as it goes out in `mode`: the `response_format` sent, and a JSON instruction
/// in the system prompt when the server will not see the schema (or, for `json_object`,
/// when no message mentions JSON, which OpenAI requires).
pub(crate) fn prepare(request: &ChatRequest, mode: JsonMode) -> ChatRequest {
    let mut out = request.clone();
    let schema = match &request.response_format {
        ResponseFormat::JsonSchema { schema, .. } => Some(schema),
        _ => None,
    };
    let instruct = match mode {
        JsonMode::Schema => false,
        JsonMode::Object => schema.is_some() || !mentions_json(&request.messages),
        JsonMode::Prompt => true,
    };
    out.response_format = match mode {
        JsonMode::Schema => request.response_format.clone(),
        JsonMode::Object => ResponseFormat::JsonObject,
        JsonMode::Prompt => ResponseFormat::Text,
    };
    if instruct {
        add_to_system_prompt(&mut out.messages, &instruction(schema));
    }
    out
}

fn instruction(schema: Option<&Value>) -> String {
    let mut text = String::from(
        "Answer with exactly one JSON value and nothing else: no prose, no code fences.",
    );
    if let Some(schema) = schema {
        text.push_str(&format!(" It must match this JSON schema:\n{schema}"));
    }
    text
}

fn mentions_json(messages: &[ChatMessage]) -> bool {
    messages.iter().any(|m| {
        m.content
            .as_deref()
            .is_some_and(|c| c.to_ascii_lowercase().contains("json"))
    })
}

/// Appends `text` to the first system message, or adds a system message in front (some chat
/// templates refuse a system message anywhere else).
pub(crate) fn add_to_system_prompt(messages: &mut Vec<ChatMessage>, text: &str) {
    match messages.iter_mut().find(|m| m.role == Role::System) {
        Some(system) => {
            let current = system.content.take().unwrap_or_default();
            system.content = Some(if current.trim().is_empty() {
                text.to_owned()
            } else {
                format!("{current}\n\n{text}")
            });
        }
        None => messages.insert(0, ChatMessage::system(text)),
    }
}

/// Whether `err` is the server refusing the `response_format` it was sent: a 400-class
/// error naming `response_format`, `json_schema` or `json_object` (OpenAI's "'response_format'
/// of type 'json_object' is not supported with this model", LM Studio's "'response_format.type'
/// must be 'json_schema'", DeepSeek's "This response_format type is unavailable now").
pub(crate) fn is_format_rejection(err: &LlmError) -> bool {
    let LlmError::Permanent(message) = err else {
        return false;
    };
    let m = message.to_ascii_lowercase();
    ["response_format", "response format", "json_schema", "json_object"]
        .iter()
        .any(|hint| m.contains(hint))
        // OpenAI's complaint that no message says "json" is fixed by the instruction, not by
        // giving up json_object.
        && !m.contains("must contain the word")
}

/// The JSON in `content`, as clean text, or why there is none.
pub(crate) fn extract(content: Option<&str>, format: &ResponseFormat) -> Result<String, String> {
    let content = content.unwrap_or_default();
    let want_array = matches!(format, ResponseFormat::JsonSchema { schema, .. }
        if schema.get("type").and_then(Value::as_str) == Some("array"));
    let accept = |v: &Value| {
        if want_array {
            v.is_array()
        } else {
            v.is_object()
        }
    };
    let found = json_text::find_json(content, accept)?;
    // The model's own text (key order kept), without the fences and prose around it.
    Ok(content[found.span].to_owned())
}

/// The follow-up turn asking the model to fix a reply that held no valid JSON.
pub(crate) fn repair_request(sent: &ChatRequest, bad_reply: &str, problem: &str) -> ChatRequest {
    let mut out = sent.clone();
    out.messages.push(ChatMessage::assistant(bad_reply));
    out.messages.push(ChatMessage::user(format!(
        "Your reply could not be used: {problem}. Reply again with only the JSON value, \
         no prose and no code fences."
    )));
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use domain::llm::CallPurpose;
    use serde_json::json;

    fn schema_request() -> ChatRequest {
        let mut r = ChatRequest::new(
            CallPurpose::Plan,
            vec![
                ChatMessage::system("You plan."),
                ChatMessage::user("Plan it."),
            ],
        );
        r.response_format = ResponseFormat::JsonSchema {
            name: "plan".into(),
            schema: json!({"type": "object", "properties": {"steps": {"type": "array"}}}),
        };
        r
    }

    #[test]
    fn modes_degrade_in_order() {
        let schema = schema_request().response_format;
        assert_eq!(mode_for(&schema, true, true), Some(JsonMode::Schema));
        assert_eq!(mode_for(&schema, false, true), Some(JsonMode::Object));
        assert_eq!(mode_for(&schema, false, false), Some(JsonMode::Prompt));
        let object = ResponseFormat::JsonObject;
        assert_eq!(mode_for(&object, true, true), Some(JsonMode::Object));
        assert_eq!(mode_for(&object, true, false), Some(JsonMode::Prompt));
        assert_eq!(mode_for(&ResponseFormat::Text, true, true), None);
    }

    #[test]
    fn prepare_instructs_only_when_needed() {
        let r = schema_request();
        assert_eq!(prepare(&r, JsonMode::Schema), r);

        let object = prepare(&r, JsonMode::Object);
        assert_eq!(object.response_format, ResponseFormat::JsonObject);
        let system = object.messages[0].content.clone().unwrap();
        assert!(system.starts_with("You plan.\n\nAnswer with exactly one JSON value"));
        assert!(system.contains("\"steps\""), "{system}");

        let prompt = prepare(&r, JsonMode::Prompt);
        assert_eq!(prompt.response_format, ResponseFormat::Text);
        assert_eq!(prompt.messages.len(), 2);

        let mut plain = ChatRequest::new(CallPurpose::Other, vec![ChatMessage::user("hi")]);
        plain.response_format = ResponseFormat::JsonObject;
        let sent = prepare(&plain, JsonMode::Object);
        assert_eq!(
            sent.messages[0].role,
            Role::System,
            "instruction added in front"
        );
        plain.messages[0].content = Some("answer in JSON".into());
        assert_eq!(prepare(&plain, JsonMode::Object).messages.len(), 1);
    }

    #[test]
    fn rejections_are_recognised() {
        for m in [
            "HTTP 400: 'response_format.type' must be 'json_schema'",
            "HTTP 400: Invalid parameter: 'response_format' of type 'json_object' is not supported with this model.",
            "HTTP 400: This response_format type is unavailable now (code: invalid_request_error)",
            "HTTP 422: json_schema is not supported",
        ] {
            assert!(is_format_rejection(&LlmError::Permanent(m.into())), "{m}");
        }
        assert!(!is_format_rejection(&LlmError::Permanent(
            "HTTP 400: 'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.".into()
        )));
        assert!(!is_format_rejection(&LlmError::Permanent(
            "HTTP 404: no model".into()
        )));
        assert!(!is_format_rejection(&LlmError::Transient(
            "response_format".into()
        )));
    }

    #[test]
    fn extraction_prefers_the_wanted_shape() {
        let object = ResponseFormat::JsonObject;
        assert_eq!(
            extract(Some("Sure [1]:\n```json\n{\"a\": 1}\n```"), &object).unwrap(),
            "{\"a\": 1}"
        );
        assert!(extract(Some("{\"a\": }"), &object).is_err());
        assert!(extract(None, &object).is_err());
        let array = ResponseFormat::JsonSchema {
            name: "l".into(),
            schema: json!({"type": "array"}),
        };
        assert_eq!(extract(Some("here: [1, 2]"), &array).unwrap(), "[1, 2]");
    }
}
