//! Structured output: the request's `response_format` goes out as asked and the reply comes
//! back untouched; a server refusing the format (or a preset saying it lacks it) is
//! `LlmError::ResponseFormatUnsupported`, with no second request. What to ask instead is the
//! domain's decision (`domain::engine::structured`).
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
            ChatMessage::user("Give me a title as JSON."),
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

/// Sends `request` to a server answering `response` once; the error and the request count.
async fn refused(request: ChatRequest, response: ResponseTemplate) -> (LlmError, usize) {
    let (server, seq) = serve(vec![response, ok(text_completion(PLAN))]).await;
    let err = OpenAiClient::new(config(&server))
        .unwrap()
        .chat(request)
        .await
        .unwrap_err();
    (err, seq.count())
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
async fn json_object_is_sent_as_asked_and_the_reply_left_as_it_came() {
    let prose = "Here you go:\n```json\n{\"title\": \"Picnic\"}\n```";
    let (server, seq) = serve(vec![ok(text_completion(prose))]).await;
    let reply = OpenAiClient::new(config(&server))
        .unwrap()
        .chat(object_request())
        .await
        .unwrap();
    assert_eq!(
        reply.content.as_deref(),
        Some(prose),
        "no JSON extraction here"
    );
    assert_eq!(seq.count(), 1);
    let body = &received_bodies(&server).await[0];
    assert_eq!(body["response_format"], json!({"type": "json_object"}));
    assert_eq!(system_text(body), "You are terse.", "no prompt instruction");
}

#[tokio::test]
async fn lm_studio_refusing_json_object_is_reported_typed_without_a_second_request() {
    // LM Studio: HTTP 400 {"error": "'response_format.type' must be 'json_schema'"}.
    let (err, requests) = refused(
        object_request(),
        ResponseTemplate::new(400)
            .set_body_json(json!({"error": "'response_format.type' must be 'json_schema'"})),
    )
    .await;
    assert!(
        matches!(&err, LlmError::ResponseFormatUnsupported(m) if m.contains("must be 'json_schema'")),
        "{err:?}"
    );
    assert_eq!(requests, 1, "no retry, no fallback in the adapter");
}

#[tokio::test]
async fn deepseek_refusing_json_schema_is_reported_typed() {
    let (err, requests) = refused(
        schema_request(),
        ResponseTemplate::new(400).set_body_json(json!({"error": {
            "message": "This response_format type is unavailable now",
            "type": "invalid_request_error", "param": null, "code": "invalid_request_error"}})),
    )
    .await;
    assert!(
        matches!(err, LlmError::ResponseFormatUnsupported(_)),
        "{err:?}"
    );
    assert_eq!(requests, 1);
}

#[tokio::test]
async fn openai_model_without_json_mode_is_reported_typed() {
    let (err, requests) = refused(
        object_request(),
        ResponseTemplate::new(400).set_body_json(openai_error(
            "Invalid parameter: 'response_format' of type 'json_object' is not supported with this model.",
            "invalid_request_error",
            json!(null),
        )),
    )
    .await;
    assert!(
        matches!(err, LlmError::ResponseFormatUnsupported(_)),
        "{err:?}"
    );
    assert_eq!(requests, 1);
}

#[tokio::test]
async fn a_refusal_is_not_remembered_by_the_adapter() {
    // The domain remembers refusals (per client and run); the adapter sends what it is asked.
    let refusal = ResponseTemplate::new(400)
        .set_body_json(json!({"error": "'response_format.type' must be 'json_schema'"}));
    let (server, seq) = serve(vec![refusal.clone(), refusal]).await;
    let client = OpenAiClient::new(config(&server)).unwrap();
    for _ in 0..2 {
        let err = client.chat(object_request()).await.unwrap_err();
        assert!(
            matches!(err, LlmError::ResponseFormatUnsupported(_)),
            "{err:?}"
        );
    }
    assert_eq!(seq.count(), 2);
}

#[tokio::test]
async fn the_missing_word_json_is_not_a_refusal_of_the_format() {
    let (err, _) = refused(
        object_request(),
        ResponseTemplate::new(400).set_body_json(openai_error(
            "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.",
            "invalid_request_error",
            json!(null),
        )),
    )
    .await;
    assert!(matches!(err, LlmError::Permanent(_)), "{err:?}");
}

#[tokio::test]
async fn a_plain_request_never_reports_a_format_refusal() {
    let (err, requests) = refused(
        hello_request(),
        ResponseTemplate::new(400)
            .set_body_json(json!({"error": "'response_format.type' must be 'json_schema'"})),
    )
    .await;
    assert!(matches!(err, LlmError::Permanent(_)), "{err:?}");
    assert_eq!(requests, 1);
}

#[tokio::test]
async fn presets_refuse_the_format_their_server_lacks_without_sending_it() {
    let (server, seq) = serve(vec![ok(text_completion(PLAN))]).await;
    let lm_studio = OpenAiClient::new(
        Provider::LmStudio
            .config(MODEL)
            .with_base_url(format!("{}/v1", server.uri())),
    )
    .unwrap();
    let err = lm_studio.chat(object_request()).await.unwrap_err();
    assert!(
        matches!(err, LlmError::ResponseFormatUnsupported(_)),
        "{err:?}"
    );
    assert_eq!(seq.count(), 0, "json_object never sent to LM Studio");
    lm_studio.chat(schema_request()).await.unwrap();
    assert_eq!(seq.count(), 1);
    assert_eq!(
        received_bodies(&server).await[0]["response_format"]["type"],
        "json_schema"
    );

    let deepseek = OpenAiClient::new(
        Provider::DeepSeek
            .configure(MODEL, Some(&format!("{}/v1", server.uri())), Some("sk-x"))
            .unwrap(),
    )
    .unwrap();
    let err = deepseek.chat(schema_request()).await.unwrap_err();
    assert!(
        matches!(err, LlmError::ResponseFormatUnsupported(_)),
        "{err:?}"
    );
    assert_eq!(seq.count(), 1, "json_schema never sent to DeepSeek");
    deepseek.chat(object_request()).await.unwrap();
    assert_eq!(seq.count(), 2);
}

#[tokio::test]
async fn a_refusal_inside_a_200_reply_is_reported_typed() {
    let (err, requests) = refused(
        schema_request(),
        ok(
            json!({"error": {"message": "response_format json_schema is unavailable",
            "type": "invalid_request_error"}}),
        ),
    )
    .await;
    assert!(
        matches!(err, LlmError::ResponseFormatUnsupported(_)),
        "{err:?}"
    );
    assert_eq!(requests, 1);
}

#[tokio::test]
async fn other_client_errors_are_not_refusals() {
    let (err, requests) = refused(
        schema_request(),
        ResponseTemplate::new(404).set_body_json(openai_error(
            "The model `gpt-9` does not exist",
            "invalid_request_error",
            json!("model_not_found"),
        )),
    )
    .await;
    assert!(matches!(err, LlmError::Permanent(_)), "{err:?}");
    assert_eq!(requests, 1);
}
