//! `--provider anthropic`: the key, the endpoint and the model checked in one request that
//! spends no tokens (`GET {base}/v1/models/{model}`, `AnthropicClient::check_model`), with
//! the doctor's short timeout and no retries.

use std::time::Duration;

use domain::LlmError;
use runner::RunSettings;

use super::{Check, Status};

/// The check's line for the options `opts`.
pub async fn check(opts: &RunSettings, timeout_secs: u64) -> Check {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let config = match runner::anthropic::config(opts, env) {
        Ok(config) => config
            .with_request_timeout(Duration::from_secs(timeout_secs.max(1)))
            .with_max_retries(0),
        Err(e) => return Check::new("endpoint", Status::Fail, e.to_string()),
    };
    let model = config.model.clone();
    let client = match adapter_anthropic::AnthropicClient::new(config) {
        Ok(client) => client,
        Err(e) => return Check::new("endpoint", Status::Fail, e.to_string()),
    };
    let endpoint = client.endpoint().to_owned();
    verdict(&endpoint, &model, client.check_model().await)
}

/// The line for what `check_model` answered.
fn verdict(endpoint: &str, model: &str, answer: Result<(), LlmError>) -> Check {
    match answer {
        Ok(()) => Check::new(
            "endpoint",
            Status::Ok,
            format!("{endpoint} is reachable, accepts the key and serves {model}"),
        ),
        Err(LlmError::Auth(m)) => Check::new(
            "endpoint",
            Status::Fail,
            format!("{endpoint} refused the key ({m}): check ANTHROPIC_API_KEY or --api-key-env"),
        ),
        Err(LlmError::RateLimited { message, .. }) => Check::new(
            "endpoint",
            Status::Warn,
            format!("{endpoint} is reachable but rate-limits this key ({message})"),
        ),
        Err(LlmError::Transient(m)) => Check::new(
            "endpoint",
            Status::Fail,
            format!(
                "{endpoint} is not reachable or failing ({m}): fix ANTHROPIC_BASE_URL / \
                 --base-url or try again"
            ),
        ),
        Err(other) => Check::new(
            "endpoint",
            Status::Fail,
            format!("{endpoint} refused the model {model}: {other} (pick one with --model)"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use runner::Provider;
    use wiremock::matchers::{header, method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    const KEY_VAR: &str = "PLANWRIGHT_TEST_DOCTOR_ANTHROPIC_KEY";

    fn opts(server: &MockServer) -> RunSettings {
        RunSettings {
            model: "claude-test".into(),
            provider: Some(Provider::Anthropic),
            base_url: Some(server.uri()),
            api_key_env: Some(KEY_VAR.into()),
            ..RunSettings::default()
        }
    }

    async fn models(reply: ResponseTemplate) -> MockServer {
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .and(path("/v1/models/claude-test"))
            .and(header("x-api-key", "sk-ant-doctor"))
            .respond_with(reply)
            .mount(&server)
            .await;
        server
    }

    fn error(kind: &str, message: &str) -> serde_json::Value {
        serde_json::json!({"type": "error", "error": {"type": kind, "message": message}})
    }

    #[tokio::test]
    async fn the_key_endpoint_and_model_are_checked_against_the_server() {
        std::env::set_var(KEY_VAR, "sk-ant-doctor");
        let server = models(
            ResponseTemplate::new(200)
                .set_body_json(serde_json::json!({"type": "model", "id": "claude-test"})),
        )
        .await;
        let ok = check(&opts(&server), 5).await;
        assert_eq!(ok.status, Status::Ok, "{ok:?}");
        assert!(ok.detail.contains("serves claude-test"), "{ok:?}");

        let server = models(
            ResponseTemplate::new(404)
                .set_body_json(error("not_found_error", "model: claude-test")),
        )
        .await;
        let unknown = check(&opts(&server), 5).await;
        assert_eq!(unknown.status, Status::Fail);
        assert!(unknown.detail.contains("model: claude-test"), "{unknown:?}");

        // A key the server refuses (the mock only knows the one above).
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .respond_with(
                ResponseTemplate::new(401)
                    .set_body_json(error("authentication_error", "invalid x-api-key")),
            )
            .mount(&server)
            .await;
        let refused = check(&opts(&server), 5).await;
        assert_eq!(refused.status, Status::Fail);
        assert!(refused.detail.contains("refused the key"), "{refused:?}");
        assert!(!refused.detail.contains("sk-ant-doctor"), "{refused:?}");
    }

    #[tokio::test]
    async fn a_missing_key_fails_before_any_request() {
        let mut opts = RunSettings {
            model: "claude-test".into(),
            provider: Some(Provider::Anthropic),
            ..RunSettings::default()
        };
        opts.api_key_env = Some("PLANWRIGHT_TEST_DOCTOR_UNSET_VAR".into());
        let missing = check(&opts, 5).await;
        assert_eq!(missing.status, Status::Fail);
        assert!(
            missing.detail.contains("PLANWRIGHT_TEST_DOCTOR_UNSET_VAR"),
            "{missing:?}"
        );
        assert!(matches!(
            verdict("e", "m", Err(LlmError::Transient("down".into()))).status,
            Status::Fail
        ));
    }
}
