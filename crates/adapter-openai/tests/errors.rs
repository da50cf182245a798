//! Failures that are not retried, and how they are classified and described.
#![allow(clippy::unwrap_used)]

mod support;

use adapter_openai::OpenAiClient;
use domain::ports::LlmClient;
use domain::LlmError;
use serde_json::json;
use support::*;
use wiremock::ResponseTemplate;

#[tokio::test]
async fn unauthorized_is_auth_at_once_and_never_shows_the_key() {
    // Some servers echo the key back; the error must still not contain it.
    let (server, seq) = serve(vec![ResponseTemplate::new(401).set_body_json(openai_error(
        &format!("Incorrect API key provided: {API_KEY}. You can find your API key at https://platform.openai.com/account/api-keys."),
        "invalid_request_error",
        json!("invalid_api_key"),
    ))])
    .await;
    let client = OpenAiClient::new(config(&server).with_api_key(API_KEY)).unwrap();

    let err = client.chat(hello_request()).await.unwrap_err();

    assert_eq!(seq.count(), 1, "auth errors are not retried");
    let LlmError::Auth(message) = &err else {
        panic!("expected Auth, got {err:?}");
    };
    assert!(message.contains("HTTP 401"), "{message}");
    assert!(message.contains("Incorrect API key provided"), "{message}");
    assert!(message.contains("invalid_api_key"), "{message}");
    for shown in [err.to_string(), format!("{err:?}")] {
        assert!(!shown.contains(API_KEY), "{shown}");
        assert!(!shown.contains("TESTKEY"), "{shown}");
    }
}

#[tokio::test]
async fn forbidden_is_auth() {
    let (server, seq) = serve(vec![ResponseTemplate::new(403).set_body_json(
        openai_error(
            "Project does not have access to model gpt-4o-mini",
            "invalid_request_error",
            json!("model_not_found"),
        ),
    )])
    .await;
    let err = OpenAiClient::new(config(&server))
        .unwrap()
        .chat(hello_request())
        .await
        .unwrap_err();
    assert!(matches!(err, LlmError::Auth(_)), "{err:?}");
    assert_eq!(seq.count(), 1);
}

#[tokio::test]
async fn context_length_exceeded_is_not_retried() {
    let (server, seq) = serve(vec![ResponseTemplate::new(400).set_body_json(openai_error(
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. Please reduce the length of the messages.",
        "invalid_request_error",
        json!("context_length_exceeded"),
    ))])
    .await;
    let err = OpenAiClient::new(config(&server))
        .unwrap()
        .chat(hello_request())
        .await
        .unwrap_err();
    let LlmError::ContextTooLong(message) = &err else {
        panic!("expected ContextTooLong, got {err:?}");
    };
    assert!(message.contains("maximum context length"), "{message}");
    assert_eq!(seq.count(), 1);
}

#[tokio::test]
async fn context_overflow_by_message_only_vllm_style() {
    let (server, _seq) = serve(vec![ResponseTemplate::new(400).set_body_json(json!({
        "object": "error",
        "message": "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.",
        "type": "BadRequestError",
        "param": null,
        "code": 400
    }))])
    .await;
    let err = OpenAiClient::new(config(&server))
        .unwrap()
        .chat(hello_request())
        .await
        .unwrap_err();
    assert!(matches!(err, LlmError::ContextTooLong(_)), "{err:?}");
}

#[tokio::test]
async fn other_client_errors_are_permanent() {
    let (server, seq) = serve(vec![ResponseTemplate::new(404).set_body_json(
        openai_error(
            "The model `gpt-9` does not exist or you do not have access to it.",
            "invalid_request_error",
            json!("model_not_found"),
        ),
    )])
    .await;
    let err = OpenAiClient::new(config(&server))
        .unwrap()
        .chat(hello_request())
        .await
        .unwrap_err();
    let LlmError::Permanent(message) = &err else {
        panic!("expected Permanent, got {err:?}");
    };
    assert!(message.contains("does not exist"), "{message}");
    assert_eq!(seq.count(), 1);
}

#[tokio::test]
async fn ollama_string_error_is_read() {
    let (server, _seq) = serve(vec![ResponseTemplate::new(404).set_body_json(
        json!({"error": "model \"llama9\" not found, try pulling it first"}),
    )])
    .await;
    let err = OpenAiClient::new(config(&server))
        .unwrap()
        .chat(hello_request())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, LlmError::Permanent(m) if m.contains("try pulling it first")),
        "{err:?}"
    );
}

#[tokio::test]
async fn error_object_in_a_200_reply_is_classified() {
    let (server, seq) = serve(vec![ok(openai_error(
        "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
        "invalid_request_error",
        json!(null),
    ))])
    .await;
    let err = OpenAiClient::new(config(&server))
        .unwrap()
        .chat(hello_request())
        .await
        .unwrap_err();
    let LlmError::Permanent(message) = &err else {
        panic!("expected Permanent, got {err:?}");
    };
    assert!(message.contains("tool_choice"), "{message}");
    assert_eq!(seq.count(), 1);

    let (server, seq) = serve(vec![ok(openai_error(
        "You exceeded the context window",
        "invalid_request_error",
        json!("context_length_exceeded"),
    ))])
    .await;
    let err = OpenAiClient::new(config(&server))
        .unwrap()
        .chat(hello_request())
        .await
        .unwrap_err();
    assert!(matches!(err, LlmError::ContextTooLong(_)), "{err:?}");
    assert_eq!(seq.count(), 1);
}

#[tokio::test]
async fn garbage_body_is_an_invalid_response_with_an_excerpt() {
    let (server, seq) = serve(vec![ResponseTemplate::new(200).set_body_raw(
        "<html><head><title>Captive portal</title></head></html>",
        "text/html",
    )])
    .await;
    let err = OpenAiClient::new(config(&server))
        .unwrap()
        .chat(hello_request())
        .await
        .unwrap_err();
    let LlmError::InvalidResponse(message) = &err else {
        panic!("expected InvalidResponse, got {err:?}");
    };
    assert!(message.contains("not JSON"), "{message}");
    assert!(message.contains("Captive portal"), "{message}");
    assert_eq!(seq.count(), 1);
}

#[tokio::test]
async fn truncated_body_ends_transient_with_an_excerpt() {
    let (server, seq) = serve(vec![ResponseTemplate::new(200).set_body_raw(
        r#"{"id":"chatcmpl-1","choices":[{"mess"#,
        "application/json",
    )])
    .await;
    let err = OpenAiClient::new(config(&server).with_max_retries(1))
        .unwrap()
        .chat(hello_request())
        .await
        .unwrap_err();
    let LlmError::Transient(message) = &err else {
        panic!("expected Transient, got {err:?}");
    };
    assert!(message.contains("truncated"), "{message}");
    assert!(message.contains("chatcmpl-1"), "{message}");
    assert_eq!(seq.count(), 2);
}

#[tokio::test]
async fn no_choices_is_an_invalid_response() {
    let mut body = text_completion("x");
    body["choices"] = json!([]);
    let (server, seq) = serve(vec![ok(body)]).await;
    let err = OpenAiClient::new(config(&server))
        .unwrap()
        .chat(hello_request())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, LlmError::InvalidResponse(m) if m.contains("no choices")),
        "{err:?}"
    );
    assert_eq!(seq.count(), 1);
}

#[tokio::test]
async fn quota_exhausted_429_is_permanent() {
    let (server, seq) = serve(vec![ResponseTemplate::new(429).set_body_json(
        openai_error(
            "You exceeded your current quota, please check your plan and billing details.",
            "insufficient_quota",
            json!("insufficient_quota"),
        ),
    )])
    .await;
    let err = OpenAiClient::new(config(&server))
        .unwrap()
        .chat(hello_request())
        .await
        .unwrap_err();
    assert!(matches!(err, LlmError::Permanent(_)), "{err:?}");
    assert_eq!(seq.count(), 1);
}

#[tokio::test]
async fn long_server_messages_are_shortened() {
    let (server, _seq) = serve(vec![ResponseTemplate::new(400).set_body_json(
        openai_error(&"blah ".repeat(2000), "invalid_request_error", json!(null)),
    )])
    .await;
    let err = OpenAiClient::new(config(&server))
        .unwrap()
        .chat(hello_request())
        .await
        .unwrap_err();
    assert!(err.to_string().len() < 800, "{}", err.to_string().len());
}

/// `--ca-cert`: a PEM certificate is trusted beside the platform roots; a file holding no
/// certificate is a clear configuration error, not a client that silently trusts nothing.
#[test]
fn extra_ca_certificates_are_checked_when_the_client_is_built() {
    let mut good = adapter_openai::OpenAiConfig::new(MODEL);
    good.extra_root_certs = vec![include_bytes!("fixtures/test-ca.pem").to_vec()];
    assert!(OpenAiClient::new(good).is_ok());

    let mut bad = adapter_openai::OpenAiConfig::new(MODEL);
    bad.extra_root_certs = vec![b"not a certificate".to_vec()];
    let Err(err) = OpenAiClient::new(bad) else {
        panic!("a file without a certificate is refused");
    };
    assert!(
        matches!(err, adapter_openai::Error::InvalidCaCert(_)),
        "{err:?}"
    );
    assert!(err.to_string().contains("invalid CA certificate"), "{err}");
}
