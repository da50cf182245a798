//! The ways to ask a client for JSON ([`JsonMode`]) and the request each makes; which
//! response formats each client refused during a run
//! ([`LlmError::ResponseFormatUnsupported`](crate::LlmError::ResponseFormatUnsupported)), so
//! a refusal is paid once per client and run (docs/architecture.md, "Structured output").

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::Value;

use crate::ports::llm::{CallPurpose, ChatMessage, ChatRequest, ResponseFormat};
use crate::ports::LlmClient;

/// How a JSON answer is asked of a client, best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JsonMode {
    /// `response_format: json_schema`: the server shapes the answer.
    Schema,
    /// `response_format: json_object`; the schema, if any, described in the system prompt.
    Object,
    /// No `response_format`: the system prompt asks for JSON, the reply is searched for it.
    Prompt,
}

/// What one client refused.
#[derive(Debug, Clone, Copy, Default)]
struct Refused {
    schema: bool,
    object: bool,
}

/// The refusals of a run's clients, keyed by the client's address (the run's clients are
/// held by its `Runtime` for the whole run, so an address names one client).
#[derive(Debug, Default)]
pub(crate) struct FormatRefusals(Mutex<HashMap<usize, Refused>>);

impl FormatRefusals {
    /// The best mode `llm` has not refused, for an answer with (`with_schema`) or without a
    /// JSON schema.
    pub fn mode(&self, llm: &dyn LlmClient, with_schema: bool) -> JsonMode {
        let refused = self
            .0
            .lock()
            .map(|m| m.get(&key(llm)).copied().unwrap_or_default())
            .unwrap_or_default();
        match (with_schema && !refused.schema, !refused.object) {
            (true, _) => JsonMode::Schema,
            (false, true) => JsonMode::Object,
            (false, false) => JsonMode::Prompt,
        }
    }

    /// Remembers that `llm` refused `mode` (the prompt-only mode cannot be refused).
    pub fn refuse(&self, llm: &dyn LlmClient, mode: JsonMode) {
        if let Ok(mut m) = self.0.lock() {
            let refused = m.entry(key(llm)).or_default();
            match mode {
                JsonMode::Schema => refused.schema = true,
                JsonMode::Object => refused.object = true,
                JsonMode::Prompt => {}
            }
        }
    }
}

/// The request asking `messages` for JSON in `mode`: the response format sent, and the JSON
/// instruction in the system prompt when the server does not get the schema (or, for
/// `json_object`, when no message says "JSON", which OpenAI requires).
pub(crate) fn json_request(
    purpose: CallPurpose,
    messages: &[ChatMessage],
    mode: JsonMode,
    schema: Option<(&str, &Value)>,
) -> ChatRequest {
    let mut request = ChatRequest::new(purpose, messages.to_vec());
    let instruct = match mode {
        JsonMode::Schema => false,
        JsonMode::Object => schema.is_some() || !mentions_json(messages),
        JsonMode::Prompt => true,
    };
    request.response_format = match (mode, schema) {
        (JsonMode::Schema, Some((name, schema))) => ResponseFormat::JsonSchema {
            name: name.to_string(),
            schema: schema.clone(),
        },
        (JsonMode::Schema | JsonMode::Object, _) => ResponseFormat::JsonObject,
        (JsonMode::Prompt, _) => ResponseFormat::Text,
    };
    if instruct {
        request.add_to_system_prompt(&crate::prompts::json_instruction(schema.map(|(_, s)| s)));
    }
    request
}

fn mentions_json(messages: &[ChatMessage]) -> bool {
    messages.iter().any(|m| {
        m.content
            .as_deref()
            .is_some_and(|c| c.to_ascii_lowercase().contains("json"))
    })
}

fn key(llm: &dyn LlmClient) -> usize {
    (llm as *const dyn LlmClient).cast::<()>() as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::llm::Role;
    use crate::ports::MockLlmClient;
    use serde_json::json;

    #[test]
    fn modes_degrade_in_order_per_client() {
        let (a, b) = (MockLlmClient::new(), MockLlmClient::new());
        let refusals = FormatRefusals::default();
        assert_eq!(refusals.mode(&a, true), JsonMode::Schema);
        assert_eq!(refusals.mode(&a, false), JsonMode::Object);
        refusals.refuse(&a, JsonMode::Schema);
        assert_eq!(refusals.mode(&a, true), JsonMode::Object);
        assert_eq!(refusals.mode(&a, false), JsonMode::Object);
        refusals.refuse(&a, JsonMode::Object);
        assert_eq!(refusals.mode(&a, true), JsonMode::Prompt);
        assert_eq!(refusals.mode(&a, false), JsonMode::Prompt);
        assert_eq!(refusals.mode(&b, true), JsonMode::Schema, "another client");
        refusals.refuse(&b, JsonMode::Object);
        assert_eq!(
            refusals.mode(&b, true),
            JsonMode::Schema,
            "json_schema is still tried when only json_object was refused"
        );
    }

    #[test]
    fn each_mode_asks_its_way() {
        let messages = vec![
            ChatMessage::system("You plan."),
            ChatMessage::user("Plan it."),
        ];
        let schema = json!({"type": "object", "required": ["steps"]});
        let shaped = Some(("plan", &schema));

        let sent = json_request(CallPurpose::Plan, &messages, JsonMode::Schema, shaped);
        assert!(
            matches!(&sent.response_format, ResponseFormat::JsonSchema { name, .. } if name == "plan")
        );
        assert_eq!(sent.messages, messages, "no instruction");

        let sent = json_request(CallPurpose::Plan, &messages, JsonMode::Object, shaped);
        assert_eq!(sent.response_format, ResponseFormat::JsonObject);
        let system = sent.messages[0].content.clone().unwrap_or_default();
        assert!(
            system.starts_with("You plan.\n\nAnswer with exactly one JSON value"),
            "{system}"
        );
        assert!(system.contains("\"required\":[\"steps\"]"), "{system}");

        let sent = json_request(CallPurpose::Plan, &messages, JsonMode::Prompt, shaped);
        assert_eq!(sent.response_format, ResponseFormat::Text);
        assert_eq!(
            sent.messages.len(),
            2,
            "the instruction joins the system prompt"
        );

        // json_object without a schema: OpenAI wants the word JSON in some message.
        let plain = vec![ChatMessage::user("hi")];
        let sent = json_request(CallPurpose::Other, &plain, JsonMode::Object, None);
        assert_eq!(
            sent.messages[0].role,
            Role::System,
            "instruction put in front"
        );
        assert_eq!(sent.messages.len(), 2);
        let says_json = vec![ChatMessage::user("answer in JSON")];
        let sent = json_request(CallPurpose::Other, &says_json, JsonMode::Object, None);
        assert_eq!(sent.messages, says_json, "nothing added");
        let sent = json_request(CallPurpose::Other, &plain, JsonMode::Schema, None);
        assert_eq!(
            sent.response_format,
            ResponseFormat::JsonObject,
            "no schema to send"
        );
    }
}
