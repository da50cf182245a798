//! Structured output: `json_schema` where supported, else `json_object`, else prompt-only
//! with JSON extraction and one repair re-ask; a rejected format is not asked for again.
#![allow(clippy::unwrap_used)]

mod support;

use adapter_openai::{OpenAiClient, Provider};
use domain::llm::{CallPurpose, ChatMessage, ChatRequest, ResponseFormat};
use domain::ports::LlmClient;
use domain::LlmError;
use serde_json::{json, Value};
use support::*;
use wiremock::ResponseTemplate;

fn plan_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"title": {"type": "string"}, "steps": {"type": "array", "items": {"type": "string"}}},
        "required": ["title", "steps"],
        "additionalProperties": false
    })
}

fn schema_request() -> ChatRequest {
    let mut r = ChatRequest::new(
        CallPurpose::Plan,
        vec![
            ChatMessage::system("You write plans."),
            ChatMessage::user("Plan a picnic."),
        ],
    );
    r.response_format = ResponseFormat::JsonSchema {
        name: "plan".into(),
        schema: plan_schema(),
    };
    r
}

fn object_request() -> ChatRequest {
    let mut r = ChatRequest::new(
        CallPurpose::Other,
        vec![
            ChatMessage::system("You are terse."),
            ChatMessage::user("Give me a title."),
        ],
    );
    r.response_format = ResponseFormat::JsonObject;
    r
}

const PLAN: &str = r#"{"title": "Picnic", "steps": ["Buy food", "Go"]}"#;

fn system_text(body: &Value) -> String {
    body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn json_schema_is_sent_when_supported() {
    let (server, seq) = serve(vec![ok(text_completion(PLAN))]).await;
    let reply = OpenAiClient::new(config(&server))
        .unwrap()
        .chat(schema_request())
        .await
        .unwrap();
    assert_eq!(reply.content.as_deref(), Some(PLAN));
    assert_eq!(seq.count(), 1);
    let body = &received_bodies(&server).await[0];
    assert_eq!(
        body["response_format"],
        json!({"type": "json_schema", "json_schema": {"name": "plan", "schema": plan_schema()}})
    );
    assert_eq!(
        system_text(body),
        "You write plans.",
        "no prompt instruction"
    );
}

#[tokio::test]
async fn lm_studio_rejecting_json_object_falls_back_to_prompt_only_once_per_client() {
    // LM Studio: HTTP 400 {"error": "'response_format.type' must be 'json_schema'"}.
    let (server, seq) = serve(vec![
        ResponseTemplate::new(400)
            .set_body_json(json!({"error": "'response_format.type' must be 'json_schema'"})),
        ok(text_completion(
            "Here you go:\n```json\n{\"title\": \"Picnic\"}\n```",
        )),
        ok(text_completion("{\"title\": \"Again\"}")),
    ])
    .await;
    let client = OpenAiClient::new(config(&server)).unwrap();

    let first = client.chat(object_request()).await.unwrap();
    let second = client.chat(object_request()).await.unwrap();

    assert_eq!(first.content.as_deref(), Some("{\"title\": \"Picnic\"}"));
    assert_eq!(second.content.as_deref(), Some("{\"title\": \"Again\"}"));
    assert_eq!(
        seq.count(),
        3,
        "the rejected format was asked for once only"
    );
    assert_eq!(client.response_formats(), (true, false));
    let bodies = received_bodies(&server).await;
    assert_eq!(bodies[0]["response_format"], json!({"type": "json_object"}));
    for body in &bodies[1..] {
        assert!(body.get("response_format").is_none(), "{body}");
        assert!(
            system_text(body).contains("Answer with exactly one JSON value"),
            "{body}"
        );
    }
}

#[tokio::test]
async fn lm_studio_preset_never_sends_json_object_but_keeps_json_schema() {
    let (server, seq) = serve(vec![
        ok(text_completion("{\"title\": \"x\"}")),
        ok(text_completion(PLAN)),
    ])
    .await;
    let config = Provider::LmStudio
        .config(MODEL)
        .with_base_url(format!("{}/v1", server.uri()));
    let client = OpenAiClient::new(config).unwrap();
    client.chat(object_request()).await.unwrap();
    client.chat(schema_request()).await.unwrap();
    assert_eq!(seq.count(), 2);
    let bodies = received_bodies(&server).await;
    assert!(bodies[0].get("response_format").is_none());
    assert_eq!(bodies[1]["response_format"]["type"], "json_schema");
}

#[tokio::test]
async fn deepseek_rejecting_json_schema_falls_back_to_json_object_with_the_schema_in_the_prompt() {
    let (server, seq) = serve(vec![
        ResponseTemplate::new(400).set_body_json(json!({"error": {
            "message": "This response_format type is unavailable now",
            "type": "invalid_request_error", "param": null, "code": "invalid_request_error"}})),
        ok(text_completion(PLAN)),
        ok(text_completion(PLAN)),
    ])
    .await;
    let client = OpenAiClient::new(config(&server)).unwrap();
    let reply = client.chat(schema_request()).await.unwrap();
    assert_eq!(reply.content.as_deref(), Some(PLAN));
    client.chat(schema_request()).await.unwrap();
    assert_eq!(seq.count(), 3);
    assert_eq!(client.response_formats(), (false, true));
    let bodies = received_bodies(&server).await;
    assert_eq!(bodies[0]["response_format"]["type"], "json_schema");
    for body in &bodies[1..] {
        assert_eq!(body["response_format"], json!({"type": "json_object"}));
        let system = system_text(body);
        assert!(system.starts_with("You write plans.\n\n"), "{system}");
        assert!(
            system.contains("\"required\":[\"title\",\"steps\"]"),
            "{system}"
        );
    }
}

#[tokio::test]
async fn json_object_rejected_by_model_then_prompt_only() {
    // OpenAI's wording for a model without JSON mode.
    let (server, seq) = serve(vec![
        ResponseTemplate::new(400).set_body_json(openai_error(
            "Invalid parameter: 'response_format' of type 'json_object' is not supported with this model.",
            "invalid_request_error",
            json!(null),
        )),
        ok(text_completion("{\"title\": \"x\"}")),
    ])
    .await;
    let client = OpenAiClient::new(config(&server)).unwrap();
    client.chat(object_request()).await.unwrap();
    assert_eq!(seq.count(), 2);
    assert_eq!(client.response_formats(), (true, false));
}

#[tokio::test]
async fn json_object_adds_the_word_json_openai_requires() {
    let (server, _seq) = serve(vec![ok(text_completion("{\"title\": \"x\"}"))]).await;
    OpenAiClient::new(config(&server))
        .unwrap()
        .chat(object_request())
        .await
        .unwrap();
    let body = &received_bodies(&server).await[0];
    assert_eq!(body["response_format"], json!({"type": "json_object"}));
    assert!(system_text(body).to_lowercase().contains("json"), "{body}");
}

#[tokio::test]
async fn prompt_only_invalid_json_gets_one_repair_reask() {
    let config =
        |server: &wiremock::MockServer| support::config(server).with_response_formats(false, false);
    let (server, seq) = serve(vec![
        ok(text_completion(
            "Sure! {\"title\": \"Picnic\", \"steps\": [\"Buy food\",]}",
        )),
        ok(text_completion(PLAN)),
    ])
    .await;
    let reply = OpenAiClient::new(config(&server))
        .unwrap()
        .chat(schema_request())
        .await
        .unwrap();
    assert_eq!(reply.content.as_deref(), Some(PLAN));
    assert_eq!(seq.count(), 2);
    assert_eq!(
        reply.usage.prompt_tokens, 38,
        "usage of both calls is counted"
    );
    let bodies = received_bodies(&server).await;
    assert!(bodies[0].get("response_format").is_none());
    assert!(system_text(&bodies[0]).contains("\"steps\""));
    let repair = &bodies[1]["messages"];
    let n = repair.as_array().unwrap().len();
    assert_eq!(repair[n - 2]["role"], "assistant");
    assert_eq!(repair[n - 1]["role"], "user");
    let ask = repair[n - 1]["content"].as_str().unwrap();
    assert!(ask.contains("invalid JSON"), "{ask}");
}

#[tokio::test]
async fn prompt_only_still_invalid_after_the_repair_is_an_invalid_response() {
    let (server, seq) = serve(vec![
        ok(text_completion("I would rather not.")),
        ok(text_completion("Still no JSON, sorry.")),
        ok(text_completion(PLAN)),
    ])
    .await;
    let err = OpenAiClient::new(config(&server).with_response_formats(false, false))
        .unwrap()
        .chat(schema_request())
        .await
        .unwrap_err();
    let LlmError::InvalidResponse(message) = &err else {
        panic!("expected InvalidResponse, got {err:?}");
    };
    assert!(message.contains("even after asking again"), "{message}");
    assert!(message.contains("Still no JSON"), "{message}");
    assert_eq!(seq.count(), 2, "exactly one repair re-ask");
}

#[tokio::test]
async fn other_client_errors_do_not_downgrade() {
    let (server, seq) = serve(vec![ResponseTemplate::new(404).set_body_json(
        openai_error(
            "The model `gpt-9` does not exist",
            "invalid_request_error",
            json!("model_not_found"),
        ),
    )])
    .await;
    let client = OpenAiClient::new(config(&server)).unwrap();
    let err = client.chat(schema_request()).await.unwrap_err();
    assert!(matches!(err, LlmError::Permanent(_)), "{err:?}");
    assert_eq!(seq.count(), 1);
    assert_eq!(client.response_formats(), (true, true));
}
