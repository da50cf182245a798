//! Structured (JSON) answers from an LLM, robust to weak models and picky servers. The one
//! owner of the structured-output fallback (docs/architecture.md, "Structured output"):
//! adapters only send the response format and report a refusal as
//! [`LlmError::ResponseFormatUnsupported`].
//!
//! `ask_json` asks the best way the client has not refused this run: `json_schema`, else
//! `json_object` with the schema described in the system prompt, else no response format
//! and the JSON asked for in the system prompt. A refusal is re-asked at once the next way
//! down, and remembered for the rest of the run (`json_formats::FormatRefusals`). The JSON is extracted
//! from the reply even when wrapped in prose or ``` fences; a reply with no valid JSON gets
//! ONE repair re-ask naming the problem.

use serde_json::Value;

use crate::engine::context::RunContext;
use crate::engine::failure::{CallProblem, Failure};
use crate::engine::json_formats::{json_request, JsonMode};
use crate::error::LlmError;
use crate::model::json_text::{find_json, NoJson};
use crate::ports::llm::{CallPurpose, ChatMessage};
use crate::ports::LlmClient;

/// Why no JSON answer could be had, when the run can go on.
#[derive(Debug)]
pub(crate) enum AskProblem {
    /// The model answered, but never with usable JSON (message for logs and events).
    Invalid(String),
    /// The call itself failed (after the adapter's retries), or the run is being cancelled.
    Call(CallProblem),
}

impl std::fmt::Display for AskProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AskProblem::Invalid(s) => write!(f, "{s}"),
            AskProblem::Call(p) => p.fmt(f),
        }
    }
}

/// A JSON question's failure.
pub(crate) type AskError = Failure<AskProblem>;

/// A JSON answer and the conversation that produced it (for follow-up re-asks).
#[derive(Debug)]
pub(crate) struct JsonAnswer {
    pub value: Value,
    pub transcript: Vec<ChatMessage>,
}

/// Asks `messages` for one JSON value. The last message should say what JSON to write.
pub(crate) async fn ask_json(
    ctx: &RunContext,
    scope: &str,
    llm: &dyn LlmClient,
    purpose: CallPurpose,
    messages: Vec<ChatMessage>,
    step_id: Option<&str>,
) -> Result<JsonAnswer, AskError> {
    ask_json_shaped(ctx, scope, llm, purpose, messages, step_id, None).await
}

/// As [`ask_json`], with the answer's JSON schema as the response format when `schema` is
/// given (`(name, schema)`; see `response_schemas`).
pub(crate) async fn ask_json_shaped(
    ctx: &RunContext,
    scope: &str,
    llm: &dyn LlmClient,
    purpose: CallPurpose,
    mut messages: Vec<ChatMessage>,
    step_id: Option<&str>,
    schema: Option<(&str, Value)>,
) -> Result<JsonAnswer, AskError> {
    let schema = schema.as_ref().map(|(name, schema)| (*name, schema));
    let mut repaired = false;
    loop {
        let mode = ctx.json_formats().mode(llm, schema.is_some());
        let request = json_request(purpose, &messages, mode, schema);
        let reply = match ctx.chat(scope, llm, request, step_id).await {
            Ok(r) => r,
            Err(Failure::Recoverable(CallProblem::Llm(LlmError::ResponseFormatUnsupported(e))))
                if mode != JsonMode::Prompt =>
            {
                ctx.json_formats().refuse(llm, mode);
                tracing::warn!(error = %e, refused = ?mode, "the server refused the JSON response format; asking the next way down");
                continue;
            }
            // The adapter could not read its own reply (an embedded model's JSON cut short).
            Err(Failure::Recoverable(CallProblem::Llm(LlmError::InvalidResponse(m)))) => {
                return Err(Failure::Recoverable(AskProblem::Invalid(m)))
            }
            Err(Failure::Fatal(e)) => return Err(Failure::Fatal(e)),
            Err(Failure::Recoverable(p)) => return Err(Failure::Recoverable(AskProblem::Call(p))),
        };
        let text = reply.content.clone().unwrap_or_default();
        messages.push(ChatMessage::from_reply(&reply));
        match extract_json(&text, schema.map(|(_, s)| s)) {
            Ok(value) => {
                return Ok(JsonAnswer {
                    value,
                    transcript: messages,
                })
            }
            Err(problem) if !repaired => {
                repaired = true;
                messages.push(ChatMessage::user(crate::prompts::json_repair(&problem)));
            }
            Err(_) => {
                return Err(Failure::Recoverable(AskProblem::Invalid(format!(
                    "no valid JSON after a repair request; last answer: {}",
                    crate::prompts::truncate_chars(text.trim(), 200)
                ))))
            }
        }
    }
}

/// The JSON in a reply's `text`, or why there is none (for the repair re-ask): an array when
/// `schema` asks for one, else the first object (the first array when there is no object),
/// found in the whole text, a ```json fence or prose around it.
fn extract_json(text: &str, schema: Option<&Value>) -> Result<Value, String> {
    if text.trim().is_empty() {
        return Err("the answer was empty".to_string());
    }
    let wants_array = schema.and_then(|s| s.get("type")).and_then(Value::as_str) == Some("array");
    let found = if wants_array {
        find_json(text, Value::is_array)
    } else {
        find_json(text, Value::is_object)
            .or_else(|e| find_json(text, Value::is_array).map_err(|_| e))
    };
    found.map(|f| f.value).map_err(|e| match e {
        NoJson::Absent => "the answer contained no valid JSON object".to_string(),
        other => format!("the answer contained no valid JSON object ({other})"),
    })
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::sync::{Arc, Mutex};

    use async_trait::async_trait;
    use serde_json::json;

    use super::*;
    use crate::engine::lease::RunControl;
    use crate::engine::runtime::{RunRequest, Runtime};
    use crate::ports::llm::{ChatRequest, ChatResponse, ResponseFormat, Role};
    use crate::ports::MockRunStore;

    /// A server that refuses the response formats in `refused` (as the OpenAI adapter reports
    /// an HTTP 400 about `response_format`) and answers the rest from `replies`, in order.
    struct Server {
        refused: Vec<&'static str>,
        replies: Mutex<VecDeque<String>>,
        seen: Mutex<Vec<ChatRequest>>,
    }

    impl Server {
        fn new(refused: &[&'static str], replies: &[&str]) -> Arc<Server> {
            Arc::new(Server {
                refused: refused.to_vec(),
                replies: Mutex::new(replies.iter().map(|r| r.to_string()).collect()),
                seen: Mutex::new(Vec::new()),
            })
        }
        fn seen(&self) -> Vec<ChatRequest> {
            self.seen.lock().expect("lock").clone()
        }
        fn formats(&self) -> Vec<&'static str> {
            self.seen()
                .iter()
                .map(|r| kind(&r.response_format))
                .collect()
        }
    }

    fn kind(format: &ResponseFormat) -> &'static str {
        match format {
            ResponseFormat::Text => "text",
            ResponseFormat::JsonObject => "json_object",
            ResponseFormat::JsonSchema { .. } => "json_schema",
        }
    }

    #[async_trait]
    impl LlmClient for Server {
        async fn chat(&self, request: ChatRequest) -> Result<ChatResponse, LlmError> {
            let format = kind(&request.response_format);
            self.seen.lock().expect("lock").push(request);
            if self.refused.contains(&format) {
                return Err(LlmError::ResponseFormatUnsupported(format!(
                    "HTTP 400: '{format}' is not supported"
                )));
            }
            let reply = self.replies.lock().expect("lock").pop_front();
            Ok(ChatResponse {
                content: Some(reply.unwrap_or_else(|| "script exhausted".into())),
                ..ChatResponse::default()
            })
        }
    }

    fn context(llm: Arc<Server>) -> RunContext {
        let mut store = MockRunStore::new();
        store.expect_append_event().returning(|_| Ok(()));
        store.expect_save_usage().returning(|_, _| Ok(()));
        let rt = Runtime::builder(llm).store(Arc::new(store)).build();
        let request = RunRequest {
            run_id: "run_1".into(),
            task: "t".into(),
            workspace: std::env::temp_dir(),
        };
        RunContext::new(&rt, &request, &RunControl::default())
    }

    fn question() -> Vec<ChatMessage> {
        vec![
            ChatMessage::system("You write plans."),
            ChatMessage::user("Plan a picnic."),
        ]
    }

    fn plan_schema() -> Value {
        json!({"type": "object", "required": ["title", "steps"]})
    }

    async fn ask_plan(ctx: &RunContext, llm: &Server) -> Result<JsonAnswer, AskError> {
        ask_json_shaped(
            ctx,
            "plan",
            llm,
            CallPurpose::Plan,
            question(),
            None,
            Some(("plan", plan_schema())),
        )
        .await
    }

    fn system_text(request: &ChatRequest) -> String {
        assert_eq!(request.messages[0].role, Role::System);
        request.messages[0].content.clone().unwrap_or_default()
    }

    #[tokio::test]
    async fn a_server_without_response_formats_is_asked_in_text_once_per_run() {
        let llm = Server::new(
            &["json_schema", "json_object"],
            &[
                "Here you go:\n```json\n{\"title\": \"Picnic\", \"steps\": []}\n```",
                "{\"title\": \"Again\", \"steps\": []}",
            ],
        );
        let ctx = context(llm.clone());

        let first = ask_plan(&ctx, &llm).await.expect("first answer");
        assert_eq!(first.value, json!({"title": "Picnic", "steps": []}));
        assert_eq!(llm.formats(), ["json_schema", "json_object", "text"]);
        let text_request = &llm.seen()[2];
        let system = system_text(text_request);
        assert!(
            system.starts_with("You write plans.\n\nAnswer with exactly one JSON value"),
            "{system}"
        );
        assert!(
            system.contains("\"required\":[\"title\",\"steps\"]"),
            "{system}"
        );
        assert_eq!(
            first.transcript.len(),
            3,
            "the transcript keeps the caller's messages, without the instruction"
        );
        assert_eq!(
            first.transcript[0].content.as_deref(),
            Some("You write plans.")
        );

        let second = ask_plan(&ctx, &llm).await.expect("second answer");
        assert_eq!(second.value["title"], "Again");
        assert_eq!(
            llm.formats(),
            ["json_schema", "json_object", "text", "text"],
            "the second question goes straight to text"
        );
    }

    #[tokio::test]
    async fn a_server_refusing_json_schema_gets_json_object_with_the_schema_in_the_prompt() {
        let llm = Server::new(
            &["json_schema"],
            &[r#"{"title": "x"}"#, r#"{"title": "y"}"#],
        );
        let ctx = context(llm.clone());
        ask_plan(&ctx, &llm).await.expect("answer");
        ask_plan(&ctx, &llm).await.expect("answer");
        assert_eq!(llm.formats(), ["json_schema", "json_object", "json_object"]);
        for request in &llm.seen()[1..] {
            let system = system_text(request);
            assert!(
                system.contains("It must match this JSON schema"),
                "{system}"
            );
        }
    }

    #[tokio::test]
    async fn an_answer_without_valid_json_gets_one_repair_reask() {
        let llm = Server::new(
            &["json_schema", "json_object"],
            &[
                "Sure! {\"title\": \"Picnic\", \"steps\": [\"Buy food\",]}",
                "{\"title\": \"Picnic\", \"steps\": [\"Buy food\"]}",
            ],
        );
        let ctx = context(llm.clone());
        let answer = ask_plan(&ctx, &llm).await.expect("answer");
        assert_eq!(answer.value["steps"], json!(["Buy food"]));
        let repair = llm.seen()[3].messages.clone();
        assert_eq!(repair[repair.len() - 2].role, Role::Assistant);
        let ask = repair[repair.len() - 1].content.clone().unwrap_or_default();
        assert!(ask.contains("no valid JSON object (invalid JSON"), "{ask}");
        assert_eq!(
            kind(&llm.seen()[3].response_format),
            "text",
            "the repair keeps the mode"
        );

        let llm = Server::new(&[], &["I would rather not.", "Still no JSON, sorry."]);
        let ctx = context(llm.clone());
        let Err(Failure::Recoverable(AskProblem::Invalid(message))) = ask_plan(&ctx, &llm).await
        else {
            panic!("expected an invalid answer");
        };
        assert!(message.contains("Still no JSON"), "{message}");
        assert_eq!(llm.seen().len(), 2, "exactly one repair re-ask");
    }

    #[tokio::test]
    async fn other_refusals_are_not_mistaken_for_a_response_format_refusal() {
        struct Refusing;
        #[async_trait]
        impl LlmClient for Refusing {
            async fn chat(&self, _: ChatRequest) -> Result<ChatResponse, LlmError> {
                Err(LlmError::Permanent(
                    "HTTP 400: 'response_format.type' must be 'json_schema'".into(),
                ))
            }
        }
        let ctx = context(Server::new(&[], &[]));
        let result = ask_json(&ctx, "q", &Refusing, CallPurpose::Other, question(), None).await;
        assert!(
            matches!(
                result,
                Err(Failure::Recoverable(AskProblem::Call(CallProblem::Llm(
                    LlmError::Permanent(_)
                ))))
            ),
            "{result:?}"
        );
        assert_eq!(ctx.json_formats().mode(&Refusing, false), JsonMode::Object);
    }

    #[test]
    fn json_is_found_in_prose_and_fences() {
        let found = |text: &str| extract_json(text, None).ok();
        assert_eq!(found(r#"{"a": 1}"#), Some(json!({"a": 1})));
        assert_eq!(
            found("Here you go:\n```json\n{\"a\": [1, 2]}\n```\nthanks"),
            Some(json!({"a": [1, 2]}))
        );
        assert_eq!(
            found(r#"Sure! {"title": "x {y}", "steps": ["a"]} hope it helps"#),
            Some(json!({"title": "x {y}", "steps": ["a"]}))
        );
        assert_eq!(
            found(r#"bad {oops} then {"ok": true}"#),
            Some(json!({"ok": true}))
        );
        assert_eq!(
            found(r#"Step [1] done. {"ok": true}"#),
            Some(json!({"ok": true}))
        );
        assert_eq!(
            found("[1, 2]"),
            Some(json!([1, 2])),
            "an array when there is no object"
        );
        assert_eq!(found("no json here"), None);
        assert_eq!(found("{\"unterminated\": "), None);
        assert_eq!(found("42"), None);
        let list = json!({"type": "array"});
        assert_eq!(
            extract_json("here: {\"a\": 1} [1, 2]", Some(&list)).ok(),
            Some(json!([1, 2]))
        );
        assert_eq!(
            extract_json("  ", None),
            Err("the answer was empty".to_string())
        );
    }
}
